import type { PodUsage } from '../../protocol/runner-link.ts';
import type { PodResultsRow } from '../../store/pods.ts';
import type { PodsTable } from '../../store/schema-runners.ts';

/**
 * A pod's results (docs/agents.md "Results") between the runner's report, the pods table and the
 * API: `result`, `session_id` and `usage`, which runs show for their pod.
 */
export type UsageColumns = Pick<
  PodsTable,
  'usage_input_tokens' | 'usage_output_tokens' | 'usage_cache_read_tokens' | 'usage_cache_write_tokens' | 'usage_cost_usd' | 'usage_turns'
>;

export const EMPTY_USAGE_COLUMNS: UsageColumns = {
  usage_input_tokens: null,
  usage_output_tokens: null,
  usage_cache_read_tokens: null,
  usage_cache_write_tokens: null,
  usage_cost_usd: null,
  usage_turns: null,
};

/** The columns of a reported usage (integers rounded: a runner's report is not trusted to be whole). */
export function usageColumns(usage: PodUsage | null | undefined): UsageColumns {
  if (!usage) return EMPTY_USAGE_COLUMNS;
  const count = (value: number | null) => (value === null ? null : Math.round(value));
  return {
    usage_input_tokens: count(usage.input_tokens),
    usage_output_tokens: count(usage.output_tokens),
    usage_cache_read_tokens: count(usage.cache_read_tokens),
    usage_cache_write_tokens: count(usage.cache_write_tokens),
    usage_cost_usd: usage.cost_usd,
    usage_turns: count(usage.turns),
  };
}

/** The `usage` object of the API. */
export function usageOf(row: UsageColumns): PodUsage {
  return {
    input_tokens: row.usage_input_tokens,
    output_tokens: row.usage_output_tokens,
    cache_read_tokens: row.usage_cache_read_tokens,
    cache_write_tokens: row.usage_cache_write_tokens,
    cost_usd: row.usage_cost_usd,
    turns: row.usage_turns,
  };
}

/** What a pod, or a run for its pod, shows; all null until the pod has reported (or for a run without a pod). */
export interface PodResultsView {
  result: string | null;
  session_id: string | null;
  usage: PodUsage;
}

export function podResultsView(row: PodResultsRow | undefined): PodResultsView {
  if (!row) return { result: null, session_id: null, usage: usageOf(EMPTY_USAGE_COLUMNS) };
  return { result: row.result, session_id: row.session_id, usage: usageOf(row) };
}
