/**
 * How a client command is declared (its arguments, options, help and action) and run: parsing
 * with node:util's parseArgs, `--help` on every command, and the exit codes of docs/cli.md
 * (0 success, 1 the API answered an error, 2 usage error, 3 the server could not be reached).
 */
import { parseArgs } from 'node:util';
import { ApiError, UnreachableError, type DroverClient } from '../../client/index.ts';

export const EXIT = { OK: 0, API_ERROR: 1, USAGE: 2, UNREACHABLE: 3, NOT_COMPLETED: 4 } as const;

/** A mistake in how the command was called: exit 2 with the message and a pointer to --help. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  /** Repeatable (`--label a --label b`). */
  multiple?: boolean;
  short?: string;
  /** The value's name in the help (`--status STATUS`). */
  value?: string;
  description: string;
}

export interface Output {
  write(text: string): unknown;
}

export interface CommandContext {
  /** The client for the resolved profile (made on first use: `login` and `--help` need none). */
  client(): DroverClient;
  json: boolean;
  /** `--raw` (commands that print text agents wrote): terminal control sequences left in. */
  raw: boolean;
  out: Output;
  err: Output;
  env: NodeJS.ProcessEnv;
  /** Aborted on SIGINT/SIGTERM: streams stop, the command exits. */
  signal: AbortSignal;
  /** Standard input, for `-` arguments. */
  readStdin(): Promise<string>;
}

export interface Parsed {
  positionals: string[];
  options: Record<string, string | boolean | string[] | undefined>;
}

export interface Command {
  /** `tickets list` */
  name: string;
  summary: string;
  /** Positional arguments: `SLUG`, optional ones as `[NAME]`. */
  args?: string[];
  options?: Record<string, OptionSpec>;
  /** Lines of help after the options (rules, defaults). */
  notes?: string[];
  examples: string[];
  run(ctx: CommandContext, parsed: Parsed): Promise<number | void>;
}

/** Options every client command takes. */
export const COMMON_OPTIONS: Record<string, OptionSpec> = {
  json: { type: 'boolean', description: "print the API's JSON unchanged (one JSON document; streams: one JSON line per item)" },
  profile: { type: 'string', value: 'NAME', description: 'use this profile of the config file (default: the one `drover login` stored last)' },
  help: { type: 'boolean', short: 'h', description: 'show this help' },
};

function optionLine(name: string, spec: OptionSpec): string {
  const flag = `${spec.short ? `-${spec.short}, ` : ''}--${name}${spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : ''}`;
  return `  ${flag.padEnd(30)} ${spec.description}${spec.multiple ? ' (repeatable)' : ''}`;
}

export function commandHelp(command: Command): string {
  const args = (command.args ?? []).join(' ');
  const lines = [`Usage: drover ${command.name}${args ? ` ${args}` : ''} [options]`, '', command.summary, ''];
  const own = Object.entries(command.options ?? {});
  if (own.length > 0) lines.push('Options:', ...own.map(([name, spec]) => optionLine(name, spec)), '');
  lines.push('Common options:', ...Object.entries(COMMON_OPTIONS).map(([name, spec]) => optionLine(name, spec)), '');
  if (command.notes?.length) lines.push(...command.notes, '');
  lines.push('Examples:', ...command.examples.map((e) => `  ${e}`));
  return lines.join('\n');
}

export function parseCommand(command: Command, argv: string[]): Parsed {
  const specs = { ...COMMON_OPTIONS, ...command.options };
  let values: Record<string, string | boolean | string[] | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      options: Object.fromEntries(Object.entries(specs).map(([name, s]) => [name, defined({ type: s.type, multiple: s.multiple, short: s.short })])),
      allowPositionals: true,
      strict: true,
    }) as { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] });
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\. To specify a positional.*$/s, ''));
  }
  if (values.help) return { positionals, options: values };
  const declared = command.args ?? [];
  const required = declared.filter((a) => !a.startsWith('['));
  const variadic = declared.some((a) => a.endsWith('...') || a.endsWith('...]'));
  if (positionals.length < required.length) throw new UsageError(`missing ${required.slice(positionals.length).join(' ')}`);
  if (!variadic && positionals.length > declared.length) throw new UsageError(`unexpected argument "${positionals[declared.length]}"`);
  return { positionals, options: values };
}

/** Writes why the command failed to stderr and answers its exit code. */
export function failure(error: unknown, err: Output, command?: Command): number {
  if (error instanceof UsageError) {
    err.write(`drover: ${error.message}\n${command ? `Run "drover ${command.name} --help" for its usage.\n` : ''}`);
    return EXIT.USAGE;
  }
  if (error instanceof ApiError) {
    err.write(`drover: ${error.message}\n  code: ${error.code}\n  status: ${error.status}\n  request_id: ${error.requestId ?? '(none)'}\n`);
    for (const detail of error.details ?? []) err.write(`  ${detail.field}: ${detail.message}\n`);
    if (error.requiredScopes?.length) err.write(`  required scopes: ${error.requiredScopes.join(', ')}\n`);
    return EXIT.API_ERROR;
  }
  if (error instanceof UnreachableError) {
    err.write(`drover: cannot reach the server at ${error.url}: ${error.reason}\n`);
    return EXIT.UNREACHABLE;
  }
  throw error;
}

/** Option readers: each throws a UsageError naming the option. */
export const read = {
  string(parsed: Parsed, name: string): string | undefined {
    const value = parsed.options[name];
    return typeof value === 'string' ? value : undefined;
  },
  strings(parsed: Parsed, name: string): string[] {
    const value = parsed.options[name];
    return Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
  },
  flag(parsed: Parsed, name: string): boolean {
    return parsed.options[name] === true;
  },
  integer(parsed: Parsed, name: string, min = 0): number | undefined {
    const raw = read.string(parsed, name);
    if (raw === undefined) return undefined;
    return toInteger(`--${name}`, raw, min);
  },
  /** `none` (clears the field) or an integer. */
  integerOrNone(parsed: Parsed, name: string): number | null | undefined {
    const raw = read.string(parsed, name);
    if (raw === undefined) return undefined;
    return raw === 'none' ? null : toInteger(`--${name}`, raw, 1);
  },
  /** `none` (clears the field) or the text. */
  stringOrNone(parsed: Parsed, name: string): string | null | undefined {
    const raw = read.string(parsed, name);
    return raw === 'none' ? null : raw;
  },
  boolean(parsed: Parsed, name: string): boolean | undefined {
    const raw = read.string(parsed, name);
    if (raw === undefined) return undefined;
    if (raw === 'true' || raw === 'false') return raw === 'true';
    throw new UsageError(`--${name} must be true or false, got "${raw}"`);
  },
  oneOf<T extends string>(parsed: Parsed, name: string, allowed: readonly T[]): T | undefined {
    const raw = read.string(parsed, name);
    if (raw === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(raw)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
    return raw as T;
  },
};

export function toInteger(what: string, raw: string, min = 0): number {
  if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)) || Number(raw) < min) {
    throw new UsageError(`${what} must be an integer${min > 0 ? ` of at least ${min}` : min === 0 ? ' of at least 0' : ''}, got "${raw}"`);
  }
  return Number(raw);
}

/** A time option (`--since`, `--from`): ISO 8601, a date alone meaning its midnight UTC; refused here (exit 2), sent as UTC. */
export function isoTime(value: string | undefined, option: string): string | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) || Number.isNaN(Date.parse(value))) {
    throw new UsageError(`--${option} must be an ISO 8601 time such as 2026-11-27 or 2026-11-27T09:00:00Z, got "${value}"`);
  }
  return new Date(value).toISOString();
}

/** `k=v` pairs (`--var area=api`) as an object. */
export function pairs(values: string[], option: string): Record<string, string> {
  const result: Record<string, string> = {};
  for (const pair of values) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--${option} takes NAME=VALUE, got "${pair}"`);
    result[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return result;
}

/** `--limit` and `--offset` of a paged list; `size` says its default and maximum. */
export const pageOptions = (size: string): Record<string, OptionSpec> => ({
  limit: { type: 'string', value: 'N', description: `page size (${size})` },
  offset: { type: 'string', value: 'N', description: 'skip this many' },
});

/** The `limit` and `offset` query parameters from pageOptions' flags. */
export const pageQuery = (p: Parsed) => defined({ limit: read.integer(p, 'limit', 1), offset: read.integer(p, 'offset') });

/** Drops undefined fields: the API takes what is given and refuses unknown or null where not allowed. */
export function defined<T extends Record<string, unknown>>(object: T): T {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined)) as T;
}
