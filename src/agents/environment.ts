/**
 * The environment of an agent process (docs/runners.md "Environment";
 * docs/agents.md "Giving an agent its model", "Autopilot"): the DROVER_* variables of the pod, PATH/HOME/LANG/TERM from the
 * runner, the pod's `ENV` variables, and its named credentials from the runner's configured
 * credentials. Nothing else of the runner's
 * own environment leaks in — the result is built from an empty object, never by copying and
 * deleting.
 */
import os from 'node:os';

export interface DroverAgentContext {
  /** The server's base URL (`DROVER_PUBLIC_URL` if set), to which `/api/v1/…` paths are appended. */
  apiUrl: string;
  /** The organization's slug. */
  org: string;
  podKey: string;
  /** The pod's token (`POD_TOKEN_SCOPES`, docs/mcp.md "The tools"), valid while the pod is active. */
  podToken: string;
  workspace: string;
  channelId?: number | null;
  ticketSlug?: string | null;
  /** Autopilot only: where an iteration may write `{"status": …, "summary": …}`. */
  statusFile?: string | null;
  /** Autopilot only: 1, 2, … */
  iteration?: number | null;
  /** Custom agents with `prompt_position: 'env'` only: the prompt, as `DROVER_PROMPT`. */
  prompt?: string | null;
}

export interface AgentEnvironmentInput {
  /** The runner's own environment: only PATH, HOME, LANG and TERM are read from it. */
  runnerEnv: NodeJS.ProcessEnv;
  /** The pod's own HOME (docs/runners.md); it replaces the runner's. */
  home?: string | null;
  drover: DroverAgentContext;
  /** The pod's `ENV NAME "value"` variables (names as `envNameProblem` allows; others are dropped). */
  variables?: Record<string, string>;
  /** The pod's `CREDENTIAL <ENV_NAME>` names. */
  credentials: string[];
  /** The runner's configured credentials (name → value); never the runner's process environment. */
  credentialValues: Record<string, string>;
}

export interface AgentEnvironment {
  env: Record<string, string>;
  /**
   * Credential names the pod asked for that the runner has not configured, that are not variable
   * names, or that are reserved (`DROVER_*`); the runner decides whether the pod can start without them.
   */
  missingCredentials: string[];
}

/** The variables taken over from the runner's environment (docs/api.md). */
export const INHERITED_VARIABLES = ['PATH', 'HOME', 'LANG', 'TERM'] as const;
export const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
export const DEFAULT_LANG = 'C.UTF-8';
export const DEFAULT_TERM = 'dumb';

const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** `ENV` names (docs/agents.md). */
const AGENTFILE_ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;
export const MAX_ENV_NAME_LENGTH = 128;
/** Set by Drover itself for every agent (or its sandbox), so never taken from an `ENV` directive. */
export const RESERVED_ENV_NAMES = ['PATH', 'HOME'] as const;

/**
 * Names the dynamic loader and the C library read at a program's start (docs/runners.md "The
 * walls"): such a variable makes any program that starts load or read what the pod chose. Agents
 * get their variables only inside the sandbox, but a pod has no use for them that outweighs the
 * risk of one reaching a process outside it, so ENV and CREDENTIAL refuse them.
 */
export const FORBIDDEN_ENV_NAMES = ['GCONV_PATH', 'GETCONF_DIR', 'GLIBC_TUNABLES', 'HOSTALIASES', 'LOCALDOMAIN', 'LOCPATH', 'NLSPATH', 'RES_OPTIONS', 'TMPDIR', 'TZDIR'] as const;
export const FORBIDDEN_ENV_PREFIXES = ['LD_', 'MALLOC_'] as const;

/** Why `name` is a loader/libc variable no pod may set, or null. */
export function forbiddenEnvName(name: string): string | null {
  if ((FORBIDDEN_ENV_NAMES as readonly string[]).includes(name) || FORBIDDEN_ENV_PREFIXES.some((prefix) => name.startsWith(prefix))) {
    return `${name} is not allowed: the dynamic loader or the C library reads it`;
  }
  return null;
}

/** Why `name` cannot be an `ENV` variable of an agent, or null when it can. */
export function envNameProblem(name: string): string | null {
  if (!AGENTFILE_ENV_NAME.test(name)) return `must be an environment variable name matching [A-Z_][A-Z0-9_]*, got ${JSON.stringify(name.slice(0, 40))}`;
  if (name.length > MAX_ENV_NAME_LENGTH) return `must be at most ${MAX_ENV_NAME_LENGTH} characters`;
  const forbidden = forbiddenEnvName(name);
  if (forbidden !== null) return forbidden;
  if (name.startsWith('DROVER_') || (RESERVED_ENV_NAMES as readonly string[]).includes(name)) {
    return `${name} is reserved: Drover sets it in the agent's environment itself`;
  }
  return null;
}

function present(value: string | undefined): value is string {
  return typeof value === 'string' && value.length > 0;
}

function defaultHome(): string | null {
  try {
    const home = os.userInfo().homedir;
    return home.length > 0 ? home : null;
  } catch {
    return null;
  }
}

/**
 * The complete environment for one agent process. Precedence: the runner's four inherited
 * variables (or defaults), then the pod's `ENV` variables (LANG or TERM may be set so), then its
 * credentials (a credential named like an inherited variable replaces it), then the DROVER_*
 * variables, which nothing can replace.
 */
export function agentEnvironment(input: AgentEnvironmentInput): AgentEnvironment {
  const { runnerEnv, drover, credentials, credentialValues, variables = {}, home: podHome } = input;
  const env: Record<string, string> = {};

  env.PATH = present(runnerEnv.PATH) ? runnerEnv.PATH : DEFAULT_PATH;
  const home = podHome ?? (present(runnerEnv.HOME) ? runnerEnv.HOME : defaultHome());
  if (home !== null) env.HOME = home;
  env.LANG = present(runnerEnv.LANG) ? runnerEnv.LANG : DEFAULT_LANG;
  env.TERM = present(runnerEnv.TERM) ? runnerEnv.TERM : DEFAULT_TERM;

  for (const [name, value] of Object.entries(variables)) {
    if (envNameProblem(name) === null && typeof value === 'string' && !value.includes('\0')) env[name] = value;
  }

  const missingCredentials: string[] = [];
  for (const name of new Set(credentials)) {
    const configured = ENV_NAME_PATTERN.test(name) && !name.startsWith('DROVER_') && forbiddenEnvName(name) === null && Object.hasOwn(credentialValues, name);
    const value = configured ? credentialValues[name] : undefined;
    if (typeof value === 'string' && !value.includes('\0')) env[name] = value;
    else missingCredentials.push(name);
  }

  env.DROVER_API_URL = drover.apiUrl;
  env.DROVER_ORG = drover.org;
  env.DROVER_POD_KEY = drover.podKey;
  env.DROVER_POD_TOKEN = drover.podToken;
  env.DROVER_WORKSPACE = drover.workspace;
  if (drover.channelId != null) env.DROVER_CHANNEL_ID = String(drover.channelId);
  if (drover.ticketSlug != null && drover.ticketSlug !== '') env.DROVER_TICKET_SLUG = drover.ticketSlug;
  if (drover.statusFile != null && drover.statusFile !== '') env.DROVER_STATUS_FILE = drover.statusFile;
  if (drover.iteration != null) env.DROVER_ITERATION = String(drover.iteration);
  if (drover.prompt != null) env.DROVER_PROMPT = drover.prompt;

  return { env, missingCredentials };
}
