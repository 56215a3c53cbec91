import { later } from '../ui.tsx';
import type { Usage } from './pods-model.ts';
import type { Delivery } from './delivery.tsx';

export interface Loop {
  id: number;
  slug: string;
  name: string;
  description: string | null;
  agent_slug: string | null;
  custom_agent_slug: string | null;
  prompt_template: string;
  prompt_variables: Record<string, unknown>;
  repository_id: number | null;
  runner_id: number | null;
  branch_name: string | null;
  execution_mode: string;
  cron_expression: string | null;
  cron_timezone: string;
  concurrency_policy: string;
  max_concurrent_runs: number;
  timeout_minutes: number;
  callback_url: string | null;
  agentfile_layer: string | null;
  status: 'enabled' | 'disabled';
  next_run_at: string | null;
  last_run_at: string | null;
  total_runs: number;
  successful_runs: number;
  failed_runs: number;
  /** Absent on a server from before it was counted. */
  cancelled_runs?: number;
  /** The daily spend limit (relay work); absent or null when none. */
  budget_usd_per_day?: number | null;
  active_run_count: number;
  total_cost_usd: number | null;
  created_at: string;
}

export interface Run {
  id: number;
  loop_slug: string;
  run_number: number;
  status: string;
  trigger_type: string;
  variables: Record<string, unknown>;
  resolved_prompt: string | null;
  pod_key: string | null;
  runner_id: number | null;
  started_at: string | null;
  finished_at: string | null;
  duration_sec: number | null;
  error_message: string | null;
  result: string | null;
  usage: Usage;
  callback_status: string;
  /** The delivery of the run's work (delivery work); absent on older servers. */
  delivery?: Delivery | null;
  created_at: string;
  updated_at: string;
}

export const ACTIVE_RUNS = ['queued', 'pending', 'running'];
export const POLICIES = ['skip', 'queue', 'replace'];
export const MODES = ['direct', 'autopilot'];

/** Inserts or updates `run` in a newest-first list. */
export function upsertRun(runs: Run[], run: Run, limit = 100): Run[] {
  const index = runs.findIndex((r) => r.id === run.id);
  if (index >= 0) return runs.map((r, i) => (i === index ? later(r, run) : r));
  return [run, ...runs].sort((a, b) => b.id - a.id).slice(0, limit);
}

/** "3 (1 ok, 1 failed, 1 cancelled)": every run counted, the rest (skipped, active) as "other". */
export function runCounts(l: Pick<Loop, 'total_runs' | 'successful_runs' | 'failed_runs' | 'cancelled_runs' | 'active_run_count'>): string {
  const cancelled = l.cancelled_runs ?? 0;
  const parts = [`${l.successful_runs} ok`, `${l.failed_runs} failed`, `${cancelled} cancelled`];
  if (l.active_run_count > 0) parts.push(`${l.active_run_count} active`);
  const other = l.total_runs - l.successful_runs - l.failed_runs - cancelled - l.active_run_count;
  if (other > 0) parts.push(`${other} skipped`);
  return `${l.total_runs} (${parts.join(', ')})`;
}
