/**
 * The `agentfile_layer` of POST /pods (docs/api.md): a small line-based language, parsed here
 * into plain data. Pure: no I/O, no lookups (whether a REPO or a channel exists is checked by
 * the caller). Every problem is a 400 `VALIDATION_FAILED` naming the 1-based line.
 *
 * Grammar, one directive per line (leading and trailing whitespace of a line is ignored):
 *
 *   # comment                      whole-line only; `MODE direct # x` is an error, not a comment
 *   PROMPT "text"                  JSON string escapes: \" \\ \/ \b \f \n \r \t \uXXXX;
 *                                  nothing may follow the closing quote
 *   PROMPT <<END                   heredoc: the lines up to the one that is just `END` (whitespace
 *   …                              around it allowed) are the prompt, verbatim, joined with \n;
 *   END                            any delimiter word [A-Za-z_][A-Za-z0-9_]*; `#` lines inside are text
 *   MODE direct|autopilot          default direct
 *   CONFIG <key> = <value>         keys below; the value may be double-quoted (same escapes)
 *   REPO <id or name>              all digits → {id}; anything else, or any quoted value → {name}
 *   BRANCH <name>                  a git branch name
 *   CREDENTIAL <ENV_NAME>          may repeat; duplicates are dropped, first occurrence kept
 *   ENV <NAME> "value"             a non-secret variable for the agent; the value may be bare
 *                                  when it has no whitespace; may repeat, each NAME once
 *
 * Decisions:
 * - Directive names, CONFIG keys and MODE / enum values are case-sensitive, as written above
 *   (`prompt "x"` is rejected with a hint naming PROMPT): one spelling per thing, no surprises
 *   when the same text is read by other tools.
 * - PROMPT, MODE, REPO and BRANCH may appear once; each CONFIG key once; CREDENTIAL any number;
 *   ENV up to 50 names, values up to 4 KiB of UTF-8 without NUL. A name given both as ENV and as
 *   CREDENTIAL is an error: which value the agent would see would be a guess.
 * - `CONFIG permission_mode` is read here as a word; whether the agent takes it (docs/agents.md) is
 *   checked where the agent is known (launch.ts).
 * - A bare PROMPT (`PROMPT fix it`) is rejected: the prompt is a quoted string or a heredoc.
 * - The prompt may be empty (`PROMPT ""`, or a heredoc with no lines) but never contains NUL,
 *   which no process argument or environment variable can carry.
 * - CRLF line endings are accepted (one `\r` before each `\n` is dropped, heredoc bodies included).
 * - Input is capped at 64 KiB (UTF-8) and 2,000 lines.
 */
import { envNameProblem, forbiddenEnvName } from '../../agents/environment.ts';
import { LIMIT_KEYS, parseLimit } from './limits.ts';
import { fail, hasControl, hasWhitespaceOrControl, parseInteger, parseQuoted, readValue, show } from './agentfile-syntax.ts';

export interface AgentfileConfig {
  model?: string;
  max_turns?: number;
  pod_timeout_minutes?: number;
  auto_close?: boolean;
  sandbox_type?: string;
  channel_id?: number;
  max_iterations?: number;
  iteration_timeout_sec?: number;
  permission_mode?: string;
  /** false: the pod's agent gets no `drover` MCP server (docs/mcp.md); default true. */
  mcp?: boolean;
  /** Resource limits (./limits.ts). */
  memory_mb?: number;
  pids?: number;
  cpus?: number;
  disk_mb?: number;
  /** What becomes of the work (docs/agents.md "Getting the work back"); default `branch` with REPO. */
  deliver?: 'branch' | 'merge_request' | 'none';
  /** The branch the work is pushed to (default: the agent's own, else drover/<pod key>). */
  deliver_branch?: string;
  /** US dollars the pod's model calls may cost (docs/agents.md "Budgets"). */
  max_cost_usd?: number;
}

export interface AgentfileLayer {
  prompt: string | null;
  mode: 'direct' | 'autopilot';
  config: AgentfileConfig;
  repo: { id: number } | { name: string } | null;
  branch: string | null;
  credentials: string[];
  /** `ENV` variables, in the order given. */
  env: Record<string, string>;
}

export const AGENTFILE_MAX_BYTES = 64 * 1024;
export const AGENTFILE_MAX_LINES = 2000;

export const AGENTFILE_DIRECTIVES = ['PROMPT', 'MODE', 'CONFIG', 'REPO', 'BRANCH', 'CREDENTIAL', 'ENV'] as const;
export const AGENTFILE_MODES = ['direct', 'autopilot'] as const;
/** How the runner isolates the pod's workspace: a git worktree off its clone cache, or a plain directory. */
export const SANDBOX_TYPES = ['worktree', 'none'] as const;
export const DELIVER_VALUES = ['branch', 'merge_request', 'none'] as const;
/** A permission mode's shape (which values an agent takes is its own: `permissionModeProblem`). */
const PERMISSION_MODE_WORD = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
export const MAX_ENV_VARIABLES = 50;
export const MAX_ENV_VALUE_BYTES = 4096;
export const CONFIG_KEYS = [
  'model',
  'max_turns',
  'pod_timeout_minutes',
  'auto_close',
  'sandbox_type',
  'channel_id',
  'max_iterations',
  'iteration_timeout_sec',
  'permission_mode',
  'mcp',
  ...LIMIT_KEYS,
  'deliver',
  'deliver_branch',
  'max_cost_usd',
] as const satisfies readonly (keyof AgentfileConfig)[];

/** Set by Drover itself in the agent's environment (docs/api.md), so never taken from the runner's credentials. */
export const RESERVED_CREDENTIALS = ['PATH', 'HOME', 'LANG', 'TERM'] as const;
export const RESERVED_CREDENTIAL_PREFIX = 'DROVER_';

export const MAX_MODEL_LENGTH = 200;
export const MAX_REPO_NAME_LENGTH = 255;
export { branchProblem, MAX_BRANCH_LENGTH } from './branch-name.ts';
import { branchProblem } from './branch-name.ts';
export const MAX_CREDENTIAL_LENGTH = 128;

type ConfigKey = (typeof CONFIG_KEYS)[number];
type Directive = (typeof AGENTFILE_DIRECTIVES)[number];

const DELIMITER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const CREDENTIAL_NAME = /^[A-Z_][A-Z0-9_]*$/;
const isDirective = (word: string): word is Directive => (AGENTFILE_DIRECTIVES as readonly string[]).includes(word);
const isConfigKey = (word: string): word is ConfigKey => (CONFIG_KEYS as readonly string[]).includes(word);
const oneOf = (values: readonly string[]): string => values.join(', ');

function parseConfigValue(key: ConfigKey, raw: string, lineNo: number): string | number | boolean {
  const what = `CONFIG ${key}`;
  switch (key) {
    case 'model':
      if (raw.length === 0) fail(lineNo, `${what} must not be empty`);
      if (raw.length > MAX_MODEL_LENGTH) fail(lineNo, `${what} must be at most ${MAX_MODEL_LENGTH} characters`);
      if (hasWhitespaceOrControl(raw)) fail(lineNo, `${what} must not contain whitespace or control characters`);
      if (raw.startsWith('-')) fail(lineNo, `${what} must not start with -`);
      return raw;
    case 'max_turns':
      return parseInteger(raw, lineNo, what, 1, 10_000);
    case 'memory_mb':
    case 'pids':
    case 'cpus':
    case 'disk_mb':
      return parseLimit(key, raw, lineNo);
    case 'pod_timeout_minutes':
      return parseInteger(raw, lineNo, what, 1, 10_080);
    case 'max_iterations':
      return parseInteger(raw, lineNo, what, 1, 1000);
    case 'iteration_timeout_sec':
      return parseInteger(raw, lineNo, what, 1, 86_400);
    case 'channel_id':
      return parseInteger(raw, lineNo, what, 1, Number.MAX_SAFE_INTEGER);
    case 'auto_close':
    case 'mcp':
      if (raw === 'true') return true;
      if (raw === 'false') return false;
      return fail(lineNo, `${what} must be true or false, got ${show(raw)}`);
    case 'sandbox_type':
      if ((SANDBOX_TYPES as readonly string[]).includes(raw)) return raw;
      return fail(lineNo, `${what} must be one of ${oneOf(SANDBOX_TYPES)}, got ${show(raw)}`);
    case 'deliver':
      if ((DELIVER_VALUES as readonly string[]).includes(raw)) return raw;
      return fail(lineNo, `${what} must be one of ${oneOf(DELIVER_VALUES)}, got ${show(raw)}`);
    case 'deliver_branch': {
      const problem = branchProblem(raw);
      return problem === null ? raw : fail(lineNo, `${what} ${problem}`);
    }
    case 'max_cost_usd': {
      const dollars = /^[0-9]{1,9}(\.[0-9]{1,9})?$/.test(raw) ? Number(raw) : NaN;
      if (!(dollars > 0)) fail(lineNo, `${what} must be a number of US dollars above 0 such as 2.50, got ${show(raw)}`);
      return dollars;
    }
    case 'permission_mode':
      if (PERMISSION_MODE_WORD.test(raw)) return raw;
      return fail(lineNo, `${what} must be a mode name such as acceptEdits, workspace-write or auto_edit, got ${show(raw)}`);
  }
}

function parseRepo(arg: string, lineNo: number): { id: number } | { name: string } {
  const { value, quoted } = readValue(arg, lineNo, 'REPO');
  if (!quoted && /^[0-9]+$/.test(value)) {
    return { id: parseInteger(value, lineNo, 'REPO id', 1, Number.MAX_SAFE_INTEGER) };
  }
  if (value.trim() === '') fail(lineNo, 'REPO name must not be empty');
  if (value.length > MAX_REPO_NAME_LENGTH) fail(lineNo, `REPO name must be at most ${MAX_REPO_NAME_LENGTH} characters`);
  if (hasControl(value)) fail(lineNo, 'REPO name must not contain control characters');
  return { name: value };
}

function parseCredential(arg: string, lineNo: number): string {
  const { value } = readValue(arg, lineNo, 'CREDENTIAL');
  if (!CREDENTIAL_NAME.test(value)) {
    fail(lineNo, `CREDENTIAL must be an environment variable name matching [A-Z_][A-Z0-9_]*, got ${show(value)}`);
  }
  if (value.length > MAX_CREDENTIAL_LENGTH) fail(lineNo, `CREDENTIAL must be at most ${MAX_CREDENTIAL_LENGTH} characters`);
  if (value.startsWith(RESERVED_CREDENTIAL_PREFIX) || (RESERVED_CREDENTIALS as readonly string[]).includes(value)) {
    fail(lineNo, `CREDENTIAL ${value} is reserved: Drover sets it in the agent's environment itself`);
  }
  const forbidden = forbiddenEnvName(value);
  if (forbidden !== null) fail(lineNo, `CREDENTIAL ${forbidden}`);
  return value;
}

/** `ENV NAME "value"` (or `ENV NAME value` when the value is one word). */
function parseEnv(arg: string, lineNo: number): [string, string] {
  const space = arg.search(/\s/);
  if (space === -1) fail(lineNo, 'ENV expects NAME "value"');
  const name = arg.slice(0, space);
  const problem = envNameProblem(name);
  if (problem !== null) fail(lineNo, `ENV ${problem}`);
  const { value } = readValue(arg.slice(space).trim(), lineNo, `ENV ${name}`);
  if (/\s/.test(value) && !arg.slice(space).trim().startsWith('"')) fail(lineNo, `ENV ${name}: quote a value that contains whitespace ("…")`);
  if (value.includes('\u0000')) fail(lineNo, `ENV ${name} must not contain NUL characters`);
  if (Buffer.byteLength(value, 'utf8') > MAX_ENV_VALUE_BYTES) fail(lineNo, `ENV ${name} must be at most ${MAX_ENV_VALUE_BYTES} bytes`);
  return [name, value];
}

/** Splits text into lines, dropping the `\r` of CRLF endings; enforces the size limits. */
function splitLines(text: string): string[] {
  if (Buffer.byteLength(text, 'utf8') > AGENTFILE_MAX_BYTES) fail(null, `must be at most ${AGENTFILE_MAX_BYTES} bytes`);
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length > AGENTFILE_MAX_LINES) fail(null, `must be at most ${AGENTFILE_MAX_LINES} lines`);
  return lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}

/** Where a single-valued directive or CONFIG key was given: `PROMPT`, `REPO`, `CONFIG channel_id`, … → 1-based line. */
export type AgentfileLines = Partial<Record<Exclude<Directive, 'CONFIG' | 'CREDENTIAL'> | `CONFIG ${ConfigKey}`, number>>;

export function parseAgentfileLayer(text: string): AgentfileLayer {
  return parseAgentfileLayerWithLines(text).layer;
}

/** parseAgentfileLayer, plus the line of each single-valued directive (for errors found by the caller). */
export function parseAgentfileLayerWithLines(text: string): { layer: AgentfileLayer; lines: AgentfileLines } {
  if (typeof text !== 'string') fail(null, 'must be a string');
  const lines = splitLines(text);
  const result: AgentfileLayer = { prompt: null, mode: 'direct', config: {}, repo: null, branch: null, credentials: [], env: {} };
  const envLines = new Map<string, number>();
  const credentialLines = new Map<string, number>();
  const seen: Record<string, number> = {};
  const once = (key: keyof AgentfileLines, lineNo: number) => {
    const first = seen[key];
    if (first !== undefined) fail(lineNo, `${key} given twice (first on line ${first})`);
    seen[key] = lineNo;
  };

  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    const line = lines[i].trim();
    if (line === '' || line.startsWith('#')) continue;

    const space = line.search(/\s/);
    const word = space === -1 ? line : line.slice(0, space);
    const arg = space === -1 ? '' : line.slice(space).trim();
    if (!isDirective(word)) {
      const upper = word.toUpperCase();
      const hint = isDirective(upper)
        ? `directives are upper-case: ${upper}`
        : `expected ${AGENTFILE_DIRECTIVES.slice(0, -1).join(', ')} or ${AGENTFILE_DIRECTIVES[AGENTFILE_DIRECTIVES.length - 1]}`;
      fail(lineNo, `unknown directive ${show(word)} (${hint})`);
    }
    if (arg === '') fail(lineNo, `${word} needs an argument`);

    switch (word) {
      case 'PROMPT': {
        once(word, lineNo);
        let prompt: string;
        if (arg.startsWith('<<')) {
          const delimiter = arg.slice(2).trim();
          if (!DELIMITER.test(delimiter)) {
            fail(lineNo, 'heredoc delimiter must be a word matching [A-Za-z_][A-Za-z0-9_]*, as in PROMPT <<END');
          }
          const end = lines.findIndex((l, j) => j > i && l.trim() === delimiter);
          if (end === -1) fail(lineNo, `heredoc PROMPT <<${delimiter} started here is never closed (expected a line ${delimiter})`);
          prompt = lines.slice(i + 1, end).join('\n');
          i = end;
        } else if (arg.startsWith('"')) {
          prompt = parseQuoted(arg, lineNo, 'PROMPT');
        } else {
          fail(lineNo, 'PROMPT takes a double-quoted string ("…") or a heredoc (<<END … END)');
        }
        if (prompt.includes('\u0000')) fail(lineNo, 'PROMPT must not contain NUL characters');
        result.prompt = prompt;
        break;
      }
      case 'MODE': {
        once(word, lineNo);
        const { value } = readValue(arg, lineNo, 'MODE');
        if (value !== 'direct' && value !== 'autopilot') fail(lineNo, `MODE must be direct or autopilot, got ${show(value)}`);
        result.mode = value;
        break;
      }
      case 'CONFIG': {
        const eq = arg.indexOf('=');
        if (eq === -1) fail(lineNo, 'CONFIG expects <key> = <value>');
        const key = arg.slice(0, eq).trim();
        if (key === '') fail(lineNo, 'CONFIG expects <key> = <value>');
        if (!isConfigKey(key)) fail(lineNo, `unknown CONFIG key ${show(key)} (known: ${oneOf(CONFIG_KEYS)})`);
        once(`CONFIG ${key}`, lineNo);
        const rawValue = arg.slice(eq + 1).trim();
        if (rawValue === '') fail(lineNo, `CONFIG ${key} needs a value`);
        const { value } = readValue(rawValue, lineNo, `CONFIG ${key}`);
        (result.config as Record<ConfigKey, unknown>)[key] = parseConfigValue(key, value, lineNo);
        break;
      }
      case 'REPO':
        once(word, lineNo);
        result.repo = parseRepo(arg, lineNo);
        break;
      case 'BRANCH': {
        once(word, lineNo);
        const { value } = readValue(arg, lineNo, 'BRANCH');
        const problem = branchProblem(value);
        if (problem !== null) fail(lineNo, `BRANCH ${problem}`);
        result.branch = value;
        break;
      }
      case 'CREDENTIAL': {
        const name = parseCredential(arg, lineNo);
        const envLine = envLines.get(name);
        if (envLine !== undefined) fail(lineNo, `${name} is given both as ENV (line ${envLine}) and as CREDENTIAL`);
        if (!result.credentials.includes(name)) result.credentials.push(name);
        if (!credentialLines.has(name)) credentialLines.set(name, lineNo);
        break;
      }
      case 'ENV': {
        const [name, value] = parseEnv(arg, lineNo);
        const first = envLines.get(name);
        if (first !== undefined) fail(lineNo, `ENV ${name} given twice (first on line ${first})`);
        const credentialLine = credentialLines.get(name);
        if (credentialLine !== undefined) fail(lineNo, `${name} is given both as CREDENTIAL (line ${credentialLine}) and as ENV`);
        if (envLines.size >= MAX_ENV_VARIABLES) fail(lineNo, `at most ${MAX_ENV_VARIABLES} ENV variables`);
        envLines.set(name, lineNo);
        result.env[name] = value;
        break;
      }
    }
  }
  return { layer: result, lines: seen as AgentfileLines };
}
