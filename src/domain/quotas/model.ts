/**
 * Per-organization quotas (docs/decisions.md): a server-wide default for each (DROVER_ORG_MAX_ACTIVE_PODS,
 * DROVER_ORG_MAX_QUEUED_PODS, DROVER_ORG_MAX_LOOPS, DROVER_POD_OUTPUT_BYTES_PER_SEC), which an
 * administrator can override per organization. 0 means "no limit".
 */
export const QUOTA_NAMES = ['max_active_pods', 'max_queued_pods', 'max_loops', 'pod_output_bytes_per_sec', 'max_cost_usd_per_month'] as const;
export type QuotaName = (typeof QUOTA_NAMES)[number];
export type Quotas = Record<QuotaName, number>;

export const DEFAULT_QUOTAS: Readonly<Quotas> = Object.freeze({
  max_active_pods: 100,
  max_queued_pods: 1000,
  max_loops: 500,
  pod_output_bytes_per_sec: 1024 * 1024,
  // US dollars of model calls per calendar month (UTC), held by the runners' relays (docs/agents.md).
  max_cost_usd_per_month: 0,
});

/** The environment variable that sets each server-wide default. */
export const QUOTA_ENV: Readonly<Record<QuotaName, string>> = Object.freeze({
  max_active_pods: 'DROVER_ORG_MAX_ACTIVE_PODS',
  max_queued_pods: 'DROVER_ORG_MAX_QUEUED_PODS',
  max_loops: 'DROVER_ORG_MAX_LOOPS',
  pod_output_bytes_per_sec: 'DROVER_POD_OUTPUT_BYTES_PER_SEC',
  max_cost_usd_per_month: 'DROVER_ORG_MAX_COST_USD_PER_MONTH',
});

/** Whether `count` more of something fits under a limit when `used` are taken (0: no limit). */
export const fits = (limit: number, used: number, count = 1): boolean => limit === 0 || used + count <= limit;
