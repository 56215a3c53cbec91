import { ACTIVE_RUN_STATUSES, CONCURRENCY_POLICIES, EXECUTION_MODES } from '../../../src/protocol/enums.ts';
import { later } from '../ui.tsx';

// The API's Loop and Run, from the generated client (web/src/api-types.ts).
export type { Loop, Run } from '../api-types.ts';
import type { Loop, Run } from '../api-types.ts';

// The statuses, policies and modes of src/protocol/enums.ts, which the server validates against.
export const ACTIVE_RUNS: readonly string[] = ACTIVE_RUN_STATUSES;
export const POLICIES = CONCURRENCY_POLICIES;
export const MODES = EXECUTION_MODES;

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
