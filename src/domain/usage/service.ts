/**
 * Model usage (docs/agents.md "The model relay", "Budgets"): the calls runners' relays
 * report, kept in the ledger and added to their pods as they happen; `GET /usage`.
 */
import type { ModelCall } from '../../protocol/runner-link.ts';
import * as ledger from '../../store/model-calls.ts';
import * as pods from '../../store/pods.ts';
import type { UsageGrouping } from '../../store/model-calls.ts';
import type { DomainContext } from '../context.ts';
import { foldByUser } from './by-user.ts';

/** A call reported by runner `runnerId` for one of its pods (a pod of another runner is ignored). */
export async function recordModelCall(ctx: DomainContext, runnerId: number, call: ModelCall): Promise<void> {
  const pod = await pods.findPodByKey(ctx.store.db, call.pod_key);
  if (!pod || pod.runner_id !== runnerId) return;
  const row = {
    id: call.id,
    org_id: pod.org_id,
    pod_id: pod.id,
    provider: call.provider,
    model: call.model,
    input_tokens: Math.round(call.input_tokens),
    output_tokens: Math.round(call.output_tokens),
    cache_read_tokens: Math.round(call.cache_read_tokens),
    cache_write_tokens: Math.round(call.cache_write_tokens),
    cost_usd: call.cost_usd,
    created_at: call.at,
  };
  await ctx.store.transaction(async (trx) => {
    if (await ledger.insertModelCall(trx, row)) await ledger.addToPodUsage(trx, pod.id, row);
  });
}

const DAY_MS = 86_400_000;
const DEFAULT_DAYS = 30;

export interface UsageQuery {
  from?: string;
  to?: string;
  group_by?: UsageGrouping;
}

type Sums = Omit<ledger.UsageGroupRow, 'key'>;
export interface UsageReport {
  group_by: UsageGrouping;
  from: string;
  to: string;
  groups: (Sums & { key: string | null })[];
  total: Sums;
}

/** An ISO date (YYYY-MM-DD, as the schema checks it) as the epoch ms of its start, UTC; a day past the month's end rolls over. */
function dateOf(raw: string): number {
  const [year, month, day] = raw.split('-').map(Number);
  return Date.UTC(year, month - 1, day);
}

const roundCost = (value: number | null): number | null => (value === null ? null : Math.round(value * 1e9) / 1e9);

/**
 * What pods created from the start of `from` to the end of `to` used, grouped; the default is the
 * last 30 days up to now. The groups are bounded by the pods there are, not by the range.
 */
export async function usageReport(ctx: DomainContext, orgId: number, query: UsageQuery): Promise<UsageReport> {
  const now = ctx.now();
  const to = query.to === undefined ? now : dateOf(query.to) + DAY_MS;
  const from = query.from === undefined ? to - DEFAULT_DAYS * DAY_MS : dateOf(query.from);
  const groupBy = query.group_by ?? 'day';
  const grouped = await ledger.usageByGroup(ctx.store.db, orgId, from, to, groupBy);
  const rows = groupBy === 'user' ? await foldByUser(ctx.store.db, orgId, grouped) : grouped;
  const total: Sums = { input_tokens: null, output_tokens: null, cache_read_tokens: null, cache_write_tokens: null, cost_usd: null, pods: 0 };
  const add = (a: number | null, b: number | null) => (b === null ? a : (a ?? 0) + b);
  const groups = rows.map((row) => {
    for (const field of ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'cost_usd'] as const) total[field] = add(total[field], row[field]);
    total.pods += row.pods;
    const key = groupBy === 'day' && row.key !== null ? new Date(Number(row.key) * DAY_MS).toISOString().slice(0, 10) : row.key === null ? null : String(row.key);
    return { ...row, key, cost_usd: roundCost(row.cost_usd) };
  });
  total.cost_usd = roundCost(total.cost_usd);
  return { group_by: groupBy, from: new Date(from).toISOString(), to: new Date(to).toISOString(), groups, total };
}
