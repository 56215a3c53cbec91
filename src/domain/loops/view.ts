import type { LoopStats } from '../../store/loops.ts';
import type { LoopRow } from '../../store/schema-loops.ts';
import { iso, isoOrNull } from '../iso.ts';
import { storedLabels } from '../runners/labels.ts';
import type { LoopFields } from './model.ts';

const NO_STATS: LoopStats = { total_runs: 0, successful_runs: 0, failed_runs: 0, cancelled_runs: 0, active_run_count: 0, last_run_at: null, total_cost_usd: null, spent_usd_today: 0 };

/** The settings of a loop as the API takes and shows them (JSON columns parsed, flags as booleans). */
export function loopFields(loop: LoopRow): LoopFields {
  return {
    name: loop.name,
    description: loop.description,
    agent_slug: loop.agent_slug,
    custom_agent_slug: loop.custom_agent_slug,
    prompt_template: loop.prompt_template,
    prompt_variables: JSON.parse(loop.prompt_variables) as Record<string, unknown>,
    repository_id: loop.repository_id,
    runner_id: loop.runner_id,
    branch_name: loop.branch_name,
    execution_mode: loop.execution_mode,
    cron_expression: loop.cron_expression,
    cron_timezone: loop.cron_timezone,
    sandbox_strategy: loop.sandbox_strategy,
    session_persistence: loop.session_persistence === 1,
    concurrency_policy: loop.concurrency_policy,
    max_concurrent_runs: loop.max_concurrent_runs,
    timeout_minutes: loop.timeout_minutes,
    callback_url: loop.callback_url,
    autopilot_config: JSON.parse(loop.autopilot_config) as LoopFields['autopilot_config'],
    agentfile_layer: loop.agentfile_layer,
    runner_labels: storedLabels(loop.runner_labels),
    preset: loop.preset,
    budget_usd_per_day: loop.budget_usd_per_day,
  };
}

/**
 * The loop record of docs/api.md as its events show it: without `callback_secret`, which the API
 * adds only for keys that may write loops (an event reaches every key that may read them).
 */
export const loopView = (loop: LoopRow, stats: LoopStats | null | undefined) => ({
  id: loop.id,
  slug: loop.slug,
  ...loopFields(loop),
  status: loop.status,
  next_run_at: isoOrNull(loop.next_run_at),
  last_run_at: isoOrNull((stats ?? NO_STATS).last_run_at),
  total_runs: (stats ?? NO_STATS).total_runs,
  successful_runs: (stats ?? NO_STATS).successful_runs,
  failed_runs: (stats ?? NO_STATS).failed_runs,
  cancelled_runs: (stats ?? NO_STATS).cancelled_runs,
  active_run_count: (stats ?? NO_STATS).active_run_count,
  total_cost_usd: (stats ?? NO_STATS).total_cost_usd,
  spent_usd_today: (stats ?? NO_STATS).spent_usd_today,
  created_at: iso(loop.created_at),
  updated_at: iso(loop.updated_at),
});
