import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { callOverHttp } from '../client/http-call.ts';
import { networkCause } from '../client/network.ts';
import { PRESET_COMMANDS } from './admin-presets.ts';
import { adminOutput } from './admin-output.ts';
import { unknownCommand } from './suggest.ts';

type Flags = Record<string, string | boolean | undefined>;

interface AdminCommand {
  summary: string;
  required: string[];
  optional?: string[];
  /** Flags without a value (`--clear-token`). */
  switches?: string[];
  /** PATCH commands: at least one of these must be given. */
  oneOf?: string[];
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path(flags: Flags): string;
  body?(flags: Flags, env: NodeJS.ProcessEnv): Record<string, unknown>;
}

const str = (value: string | boolean | undefined): string | undefined => (typeof value === 'string' ? value : undefined);
const seg = (value: string | boolean | undefined) => encodeURIComponent(str(value)!);
const org = (f: Flags) => seg(f.org);
const list = (value: string | boolean | undefined) =>
  typeof value === 'string' ? value.split(',').map((s) => s.trim()).filter(Boolean) : undefined;
/** A number flag: digits as a number; anything else goes as written, so the API's message names the problem (not NaN sent as null). */
const int = (value: string | boolean | undefined) => (typeof value === 'string' ? (/^\d+$/.test(value) ? Number(value) : value) : undefined);

/** `--token` as given, or the value of the environment variable named by `--token-env`. */
function repositoryToken(f: Flags, env: NodeJS.ProcessEnv): string | undefined {
  if (f.token !== undefined && f['token-env'] !== undefined) throw new Error('give --token or --token-env, not both');
  if (f['token-env'] === undefined) return str(f.token);
  const value = env[str(f['token-env'])!];
  if (!value) throw new Error(`--token-env: the environment variable ${str(f['token-env'])} is not set`);
  return value;
}

/** A value to set, `null` when its `--clear-…` switch is given, or undefined (left alone). */
function setOrClear(f: Flags, name: string, value: string | undefined): string | null | undefined {
  if (f[`clear-${name}`] === true) {
    if (value !== undefined) throw new Error(`give --${name} or --clear-${name}, not both`);
    return null;
  }
  return value;
}

/** `drover admin <resource> <action>`: thin wrappers over the admin endpoints of docs/api.md and docs/decisions.md. */
export const ADMIN_COMMANDS: Record<string, AdminCommand> = {
  'orgs create': {
    summary: 'create an organization',
    required: ['slug', 'name'],
    optional: ['ticket-prefix'],
    method: 'POST',
    path: () => '/orgs',
    body: (f) => ({ slug: f.slug, name: f.name, ticket_prefix: f['ticket-prefix'] }),
  },
  'orgs list': { summary: 'list organizations', required: [], method: 'GET', path: () => '/orgs' },
  'orgs update': {
    summary:
      "rename an organization, change its ticket prefix (new tickets only; e.g. --org default --ticket-prefix ACME) or the hosts its pods may reach (--network-allow 'api.example.com,*.pypi.org:443'; \"\" clears)",
    required: ['org'],
    optional: ['name', 'ticket-prefix', 'network-allow'],
    oneOf: ['name', 'ticket-prefix', 'network-allow'],
    method: 'PATCH',
    path: (f) => `/orgs/${org(f)}`,
    body: (f) => ({ name: f.name, ticket_prefix: f['ticket-prefix'], network_allow: list(f['network-allow']) }),
  },
  'api-keys create': {
    summary: "issue an API key (printed once); --user ID: the person's key (what it does names them)",
    required: ['org', 'name', 'scopes'],
    optional: ['expires-at', 'user'],
    method: 'POST',
    path: (f) => `/orgs/${org(f)}/api-keys`,
    body: (f) => ({ name: f.name, scopes: list(f.scopes), expires_at: f['expires-at'], user_id: int(f.user) }),
  },
  'api-keys list': { summary: 'list API keys (prefix, scopes, expires_at, last use; never the key)', required: ['org'], method: 'GET', path: (f) => `/orgs/${org(f)}/api-keys` },
  'api-keys revoke': {
    summary: 'revoke an API key',
    required: ['org', 'id'],
    method: 'DELETE',
    path: (f) => `/orgs/${org(f)}/api-keys/${seg(f.id)}`,
  },
  'users create': {
    summary: 'create a user',
    required: ['org', 'name', 'email'],
    method: 'POST',
    path: (f) => `/orgs/${org(f)}/users`,
    body: (f) => ({ name: f.name, email: f.email }),
  },
  'users list': { summary: 'list users', required: ['org'], method: 'GET', path: (f) => `/orgs/${org(f)}/users` },
  'users update': {
    summary: "change a user's name or email",
    required: ['org', 'id'],
    optional: ['name', 'email'],
    oneOf: ['name', 'email'],
    method: 'PATCH',
    path: (f) => `/orgs/${org(f)}/users/${seg(f.id)}`,
    body: (f) => ({ name: f.name, email: f.email }),
  },
  'users delete': {
    summary: 'delete a user (their tickets become unassigned, their API keys revoked)',
    required: ['org', 'id'],
    method: 'DELETE',
    path: (f) => `/orgs/${org(f)}/users/${seg(f.id)}`,
  },
  'repositories create': {
    summary: 'register a repository (provider: github, gitlab, gitea or git); --token-env NAME reads the token from $NAME, keeping it out of argv',
    required: ['org', 'name', 'full-name', 'provider', 'url'],
    optional: ['default-branch', 'ticket-prefix', 'api-base-url', 'token', 'token-env'],
    method: 'POST',
    path: (f) => `/orgs/${org(f)}/repositories`,
    body: (f, env) => ({
      name: f.name,
      full_name: f['full-name'],
      provider: f.provider,
      url: f.url,
      default_branch: f['default-branch'],
      ticket_prefix: f['ticket-prefix'],
      api_base_url: f['api-base-url'],
      token: repositoryToken(f, env),
    }),
  },
  'repositories list': { summary: 'list repositories', required: ['org'], method: 'GET', path: (f) => `/orgs/${org(f)}/repositories` },
  'repositories update': {
    summary:
      'change a repository; --token/--token-env replace its stored token, --clear-token removes it (likewise --clear-ticket-prefix, --clear-api-base-url)',
    required: ['org', 'id'],
    optional: ['name', 'full-name', 'url', 'default-branch', 'ticket-prefix', 'api-base-url', 'token', 'token-env'],
    switches: ['clear-token', 'clear-ticket-prefix', 'clear-api-base-url'],
    oneOf: ['name', 'full-name', 'url', 'default-branch', 'ticket-prefix', 'api-base-url', 'token', 'token-env', 'clear-token', 'clear-ticket-prefix', 'clear-api-base-url'],
    method: 'PATCH',
    path: (f) => `/orgs/${org(f)}/repositories/${seg(f.id)}`,
    body: (f, env) => ({
      name: f.name,
      full_name: f['full-name'],
      url: f.url,
      default_branch: f['default-branch'],
      ticket_prefix: setOrClear(f, 'ticket-prefix', str(f['ticket-prefix'])),
      api_base_url: setOrClear(f, 'api-base-url', str(f['api-base-url'])),
      token: setOrClear(f, 'token', repositoryToken(f, env)),
    }),
  },
  'repositories delete': {
    summary: 'delete a repository (refused while loops or active pods use it; its tickets and channels are detached)',
    required: ['org', 'id'],
    method: 'DELETE',
    path: (f) => `/orgs/${org(f)}/repositories/${seg(f.id)}`,
  },
  'runner-tokens create': {
    summary: 'issue a registration token for `drover runner --token` (single-use unless --uses N, up to 1000)',
    required: ['org'],
    optional: ['labels', 'expires-in-hours', 'uses'],
    method: 'POST',
    path: (f) => `/orgs/${org(f)}/runner-tokens`,
    body: (f) => ({ labels: list(f.labels), expires_in_hours: int(f['expires-in-hours']), uses: int(f.uses) }),
  },
  'runner-tokens list': {
    summary: 'list registration tokens: prefix, labels, uses left, expiry, status (never the token)',
    required: ['org'],
    method: 'GET',
    path: (f) => `/orgs/${org(f)}/runner-tokens`,
  },
  'runner-tokens revoke': {
    summary: 'revoke a registration token (runners it registered keep working)',
    required: ['org', 'id'],
    method: 'DELETE',
    path: (f) => `/orgs/${org(f)}/runner-tokens/${seg(f.id)}`,
  },
  'agents create': {
    summary: 'create a custom agent (prompt position: last, first, stdin or env)',
    required: ['org', 'slug', 'name', 'command'],
    optional: ['args', 'prompt-position'],
    method: 'POST',
    path: (f) => `/orgs/${org(f)}/agents`,
    body: (f) => ({ slug: f.slug, name: f.name, command: f.command, args: list(f.args), prompt_position: f['prompt-position'] }),
  },
  'agents list': { summary: 'list custom agents', required: ['org'], method: 'GET', path: (f) => `/orgs/${org(f)}/agents` },
  'agents update': {
    summary: 'change a custom agent (its slug stays)',
    required: ['org', 'slug'],
    optional: ['name', 'command', 'args', 'prompt-position'],
    oneOf: ['name', 'command', 'args', 'prompt-position'],
    method: 'PATCH',
    path: (f) => `/orgs/${org(f)}/agents/${seg(f.slug)}`,
    body: (f) => ({ name: f.name, command: f.command, args: list(f.args), prompt_position: f['prompt-position'] }),
  },
  'agents delete': {
    summary: 'delete a custom agent (refused while loops name it or pods running it are active)',
    required: ['org', 'slug'],
    method: 'DELETE',
    path: (f) => `/orgs/${org(f)}/agents/${seg(f.slug)}`,
  },
  'runners list': { summary: "list an organization's runners", required: ['org'], method: 'GET', path: (f) => `/orgs/${org(f)}/runners` },
  'runners delete': {
    summary: 'delete a runner: its credential is revoked at once, its link closed, its active pods failed',
    required: ['org', 'id'],
    method: 'DELETE',
    path: (f) => `/orgs/${org(f)}/runners/${encodeURIComponent(f.id!)}`,
  },
  'runners rotate': {
    summary: 'give a connected runner a new credential (it stores it; the old one stops working)',
    required: ['org', 'id'],
    method: 'POST',
    path: (f) => `/orgs/${org(f)}/runners/${encodeURIComponent(f.id!)}/rotate-credential`,
  },
  'quotas get': { summary: "show an organization's quotas (its overrides, the server defaults, what applies)", required: ['org'], method: 'GET', path: (f) => `/orgs/${org(f)}/quotas` },
  'quotas set': {
    summary: 'override quotas of an organization: a number (0: no limit) or "default" for the server default',
    required: ['org'],
    optional: ['max-active-pods', 'max-queued-pods', 'max-loops', 'pod-output-bytes-per-sec'],
    method: 'PATCH',
    path: (f) => `/orgs/${org(f)}/quotas`,
    body: (f) =>
      Object.fromEntries(
        ['max-active-pods', 'max-queued-pods', 'max-loops', 'pod-output-bytes-per-sec']
          .filter((flag) => f[flag] !== undefined)
          .map((flag) => [flag.replaceAll('-', '_'), quotaValue(String(f[flag]))]),
      ),
  },
  ...PRESET_COMMANDS,
};

/** A quota flag's value: "default" (back to the server's default) or a whole number. */
function quotaValue(raw: string): number | string | null {
  if (raw === 'default') return null;
  // Anything but a plain number goes to the server as written, so the API's own message names the problem.
  return /^\d+$/.test(raw) ? Number(raw) : raw;
}

const COMMON_FLAGS = [
  'Common flags: --server <url> (default $DROVER_API_URL, $DROVER_SERVER_URL or http://127.0.0.1:7070),',
  '              --admin-token <token> (default $DROVER_ADMIN_TOKEN or <data dir>/admin-token), --data-dir <dir>,',
  "              --json (the API's JSON as sent; default: tables and key: value records)",
];

function commandUsage(name: string, c: AdminCommand): string {
  const flags = [
    ...c.required.map((f) => `--${f} <${f}>`),
    ...(c.optional ?? []).map((f) => `[--${f} <${f}>]`),
    ...(c.switches ?? []).map((f) => `[--${f}]`),
  ].join(' ');
  return `  drover admin ${name} ${flags}\n      ${c.summary}`;
}

/** The usage of every command, or of those whose name starts with `prefix` (a resource, or one command). */
export function adminUsage(prefix = ''): string {
  const lines = Object.entries(ADMIN_COMMANDS)
    .filter(([name]) => prefix === '' || name === prefix || name.startsWith(`${prefix} `))
    .map(([name, c]) => commandUsage(name, c));
  return ['Usage:', ...lines, '', ...COMMON_FLAGS].join('\n');
}

function adminToken(flags: Flags, env: NodeJS.ProcessEnv): string {
  if (str(flags['admin-token'])) return str(flags['admin-token'])!;
  if (env.DROVER_ADMIN_TOKEN) return env.DROVER_ADMIN_TOKEN;
  const file = path.join(path.resolve(str(flags['data-dir']) ?? env.DROVER_DATA_DIR ?? './.drover'), 'admin-token');
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  throw new Error(`no admin token: pass --admin-token, set DROVER_ADMIN_TOKEN, or run where ${file} exists`);
}

const isHelp = (word: string | undefined) => word === '--help' || word === '-h' || word === 'help';

export async function runAdmin(argv: string[], env: NodeJS.ProcessEnv = process.env, out = process.stdout, err = process.stderr): Promise<number> {
  if (isHelp(argv[0])) {
    out.write(`${adminUsage()}\n`);
    return 0;
  }
  const name = argv.slice(0, 2).join(' ');
  const command = ADMIN_COMMANDS[name];
  if (!command) {
    // `drover admin repositories --help`: the commands of one resource.
    const resource = argv[0];
    if (argv.slice(1).some(isHelp) && Object.keys(ADMIN_COMMANDS).some((n) => n.startsWith(`${resource} `))) {
      out.write(`${adminUsage(resource)}\n`);
      return 0;
    }
    err.write(argv.length ? unknownCommand(name, Object.keys(ADMIN_COMMANDS), 'admin ', 'drover admin --help') : `${adminUsage()}\n`);
    return 2;
  }
  if (argv.slice(2).some(isHelp)) {
    out.write(`${adminUsage(name)}\n`);
    return 0;
  }
  const options = Object.fromEntries([
    ...['server', 'admin-token', 'data-dir', ...command.required, ...(command.optional ?? [])].map((n) => [n, { type: 'string' as const }]),
    ...[...(command.switches ?? []), 'json'].map((n) => [n, { type: 'boolean' as const }]),
  ]);
  let flags: Flags;
  try {
    flags = parseArgs({ args: argv.slice(2), options }).values as Flags;
  } catch (error) {
    err.write(`${(error as Error).message}\n\n${adminUsage()}\n`);
    return 2;
  }
  const missing = command.required.filter((f) => !flags[f]);
  if (missing.length) {
    err.write(`missing ${missing.map((f) => `--${f}`).join(', ')}\n\n${adminUsage()}\n`);
    return 2;
  }
  if (command.oneOf && !command.oneOf.some((f) => flags[f] !== undefined)) {
    err.write(`nothing to change: give at least one of ${command.oneOf.map((f) => `--${f}`).join(', ')}\n\n${adminUsage()}\n`);
    return 2;
  }
  // DROVER_API_URL as for the client commands; DROVER_SERVER_URL (the runner's) after it.
  const server = (str(flags.server) ?? (env.DROVER_API_URL || env.DROVER_SERVER_URL || 'http://127.0.0.1:7070')).replace(/\/+$/, '');
  let body: string | undefined;
  let token: string;
  try {
    body = command.body ? JSON.stringify(command.body(flags, env)) : undefined;
    token = adminToken(flags, env);
  } catch (error) {
    err.write(`drover admin: ${(error as Error).message}\n`);
    return 1;
  }
  const url = `${server}/api/v1/admin${command.path(flags)}`;
  try {
    // node:http rather than fetch, whose first use costs a process ~120 ms (src/client/http-call.ts).
    const headers = { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) };
    const answer = await callOverHttp({ url, method: command.method, headers, body: body ?? null }, 30_000);
    const ok = answer.status >= 200 && answer.status < 300;
    (ok ? out : err).write(adminOutput(answer.status, answer.text, flags.json === true));
    return ok ? 0 : 1;
  } catch (error) {
    // No answer: exit 3 naming the URL and the cause, as the client commands do.
    err.write(`drover admin: cannot reach the server at ${url.split('?')[0]}: ${networkCause(error)}\n`);
    return 3;
  }
}
