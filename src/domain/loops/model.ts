import { invalid } from '../../errors.ts';
import type { RunStatus } from '../../protocol/enums.ts';

/** Runs that hold one of the loop's `max_concurrent_runs` slots. */
export const SLOT_RUN_STATUSES: readonly RunStatus[] = ['pending', 'running'];
export const MAX_QUEUED_RUNS = 100;

/** A loop's settings as the API shows and takes them (the stored row parses into this). */
export interface LoopFields {
  name: string;
  description: string | null;
  agent_slug: string | null;
  custom_agent_slug: string | null;
  prompt_template: string;
  prompt_variables: Record<string, unknown>;
  repository_id: number | null;
  runner_id: number | null;
  branch_name: string | null;
  execution_mode: 'direct' | 'autopilot';
  cron_expression: string | null;
  cron_timezone: string;
  sandbox_strategy: 'persistent' | 'fresh';
  session_persistence: boolean;
  concurrency_policy: 'skip' | 'queue' | 'replace';
  max_concurrent_runs: number;
  timeout_minutes: number;
  callback_url: string | null;
  autopilot_config: { max_iterations: number; iteration_timeout_sec: number };
  /** The agentfile every run's pod gets (docs/agents.md); null: none. */
  agentfile_layer: string | null;
  /** Only runners carrying all of these run the loop's pods (runners/labels.ts). */
  runner_labels: string[];
  /** The preset whose agent and lines runs start from (presets/apply.ts); null: none. */
  preset: string | null;
  /** US dollars a day (UTC) its runs may spend on model calls; null: no budget (docs/agents.md "Budgets"). */
  budget_usd_per_day: number | null;
}

export const DEFAULT_AUTOPILOT_CONFIG = { max_iterations: 10, iteration_timeout_sec: 600 };
export const DEFAULT_TIMEOUT_MINUTES = 60;
export const SLUG_PATTERN = '^[a-z0-9][a-z0-9-]{0,62}$';
/** How deep objects and arrays may nest in prompt_variables and trigger variables (the outer object is level 1). */
export const MAX_VARIABLES_DEPTH = 32;

/**
 * Whether a JSON value nests objects/arrays more than `max` levels deep, checked without recursion:
 * a body of 1 MiB can nest 500,000 levels, and JSON.stringify of such a value overflows the stack.
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth > max) return true;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
}

/** Throws VALIDATION_FAILED naming `field` when template values nest deeper than MAX_VARIABLES_DEPTH. */
export function checkVariablesDepth(field: '/prompt_variables' | '/variables', value: unknown): void {
  if (value !== undefined && nestedDeeperThan(value, MAX_VARIABLES_DEPTH)) {
    throw invalid(field, `must not nest objects or arrays more than ${MAX_VARIABLES_DEPTH} levels deep`);
  }
}

/**
 * Why a callback URL cannot be delivered to (null when it can): it must parse as a URL, exactly as
 * the sender will parse it, with http(s) and a host. `http://[`, `http://%zz` or `http://a:b:c`
 * would otherwise be accepted and retried forever.
 */
export function callbackUrlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be a valid http(s) URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.hostname === '') return 'must name a host';
  return null;
}

/** A slug from a name: lower-case, other characters become `-`, trimmed, at most 63, `loop` if empty. */
export function slugFromName(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return slug.length > 0 ? slug : 'loop';
}

/** The first of `base`, `base-2`, `base-3`, … not in `taken` (kept within 63 characters). */
export function uniqueSlug(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const candidate = base.slice(0, 63 - suffix.length).replace(/-+$/, '') + suffix;
    if (!taken.has(candidate)) return candidate;
  }
}
