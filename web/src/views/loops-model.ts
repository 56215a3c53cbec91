import { later } from '../ui.tsx';
import type { Usage } from './pods-model.ts';

export interface Loop {
  id: number;
  slug: string;
  name: string;
  description: string | null;
  agent_slug: string | null;
  custom_agent_slug: string | null;
  prompt_template: string;
  prompt_variables: Record<string, unknown>;
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
