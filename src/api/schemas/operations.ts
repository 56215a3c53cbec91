import { Type } from 'typebox';
import { Nullable } from './common.ts';

/** Quotas (docs/decisions.md): counts fit PostgreSQL's integer; output rates may be larger. 0 means no limit. */
const Count = Type.Integer({ minimum: 0, maximum: 2_147_483_647 });
const BytesPerSecond = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
/** US dollars of model calls per calendar month (UTC); fractions allowed. */
const Dollars = Type.Number({ minimum: 0, maximum: 1e12 });

const quotaFields = {
  max_active_pods: Count,
  max_queued_pods: Count,
  max_loops: Count,
  pod_output_bytes_per_sec: BytesPerSecond,
  max_cost_usd_per_month: Dollars,
};

const QuotaSet = Type.Object(quotaFields);
const QuotaOverrides = Type.Object({
  max_active_pods: Nullable(Count),
  max_queued_pods: Nullable(Count),
  max_loops: Nullable(Count),
  pod_output_bytes_per_sec: Nullable(BytesPerSecond),
  max_cost_usd_per_month: Nullable(Dollars),
});

export const OrgQuotas = Type.Object(
  {
    org: Type.String(),
    overrides: QuotaOverrides,
    defaults: QuotaSet,
    effective: QuotaSet,
  },
  { $id: 'OrgQuotas', description: 'overrides: this organization’s own values (null: the server default); 0 means no limit' },
);

export const UpdateQuotasBody = Type.Object(
  {
    max_active_pods: Type.Optional(Nullable(Count)),
    max_queued_pods: Type.Optional(Nullable(Count)),
    max_loops: Type.Optional(Nullable(Count)),
    pod_output_bytes_per_sec: Type.Optional(Nullable(BytesPerSecond)),
    max_cost_usd_per_month: Type.Optional(Nullable(Dollars)),
  },
  { additionalProperties: false, description: 'the quotas to change; null returns one to the server default, 0 means no limit' },
);

export { AdminIdParams as AdminRunnerParams } from './admin.ts';
