import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Executor } from './db.ts';
import { SLOT_POD_STATUSES } from './runners.ts';
import type { ModelCallsTable } from './schema.ts';

/**
 * The ledger of model calls (migration 0018) and the sums budgets and `GET /usage` read. Spending
 * is read from the pods' usage columns: the relay's exact sums, or the agent's own report for a
 * pod whose calls no relay saw, so every figure adds up to what the pods show.
 */

/** Records a call once (a runner resends what it could not confirm); whether it is new. */
export async function insertModelCall(db: Executor, row: ModelCallsTable): Promise<boolean> {
  const result = await db.insertInto('model_calls').values(row).onConflict((oc) => oc.column('id').doNothing()).executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

type Counts = Pick<ModelCallsTable, 'input_tokens' | 'output_tokens' | 'cache_read_tokens' | 'cache_write_tokens' | 'cost_usd'>;

/** Adds a call to a still-active pod's usage, so it shows as it happens (the runner's report at the end settles it). */
export async function addToPodUsage(db: Executor, podId: number, call: Counts): Promise<void> {
  const plus = (column: string, value: number) => sql<number>`coalesce(${sql.ref(column)}, 0) + ${value}`;
  await db
    .updateTable('pods')
    .set({
      usage_input_tokens: plus('usage_input_tokens', call.input_tokens),
      usage_output_tokens: plus('usage_output_tokens', call.output_tokens),
      usage_cache_read_tokens: plus('usage_cache_read_tokens', call.cache_read_tokens),
      usage_cache_write_tokens: plus('usage_cache_write_tokens', call.cache_write_tokens),
      ...(call.cost_usd === null ? {} : { usage_cost_usd: plus('usage_cost_usd', call.cost_usd) }),
    })
    .where('id', '=', podId)
    .where('status', 'in', SLOT_POD_STATUSES)
    .execute();
}

/** What an organization's pods created since `since` cost (excluding pod `exceptPodId`). */
export async function orgSpentSince(db: Executor, orgId: number, since: number, exceptPodId = 0): Promise<number> {
  const row = await db
    .selectFrom('pods')
    .select((eb) => eb.fn.sum<number>('usage_cost_usd').as('cost'))
    .where('org_id', '=', orgId)
    .where('created_at', '>=', since)
    .where('id', '!=', exceptPodId)
    .executeTakeFirst();
  return Number(row?.cost ?? 0);
}

/** What a loop's runs' pods created since `since` cost (excluding pod `exceptPodId`). */
export async function loopSpentSince(db: Executor, loopId: number, since: number, exceptPodId = 0): Promise<number> {
  const row = await db
    .selectFrom('loop_runs')
    .innerJoin('pods', 'pods.key', 'loop_runs.pod_key')
    .select((eb) => eb.fn.sum<number>('pods.usage_cost_usd').as('cost'))
    .where('loop_runs.loop_id', '=', loopId)
    .where('pods.created_at', '>=', since)
    .where('pods.id', '!=', exceptPodId)
    .executeTakeFirst();
  return Number(row?.cost ?? 0);
}

export const USAGE_GROUPINGS = ['day', 'agent', 'loop', 'ticket', 'repository', 'user'] as const;
export type UsageGrouping = (typeof USAGE_GROUPINGS)[number];

export interface UsageGroupRow {
  key: string | number | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cache_read_tokens: number | null;
  cache_write_tokens: number | null;
  cost_usd: number | null;
  pods: number;
}

/** The pods' usage summed per group, over pods created in [from, to). `day` keys are days since the epoch (UTC); `user` keys the pods' `created_by` actors. */
export async function usageByGroup(db: Executor, orgId: number, from: number, to: number, groupBy: UsageGrouping): Promise<UsageGroupRow[]> {
  const key: RawBuilder<string | number | null> = {
    day: sql<number>`(pods.created_at / 86400000)`,
    agent: sql<string>`pods.agent_slug`,
    loop: sql<string | null>`loops.slug`,
    ticket: sql<string | null>`pods.ticket_slug`,
    repository: sql<string | null>`repositories.name`,
    // The stored actor (JSON, as written: one dialect-free key); the domain folds it into people.
    user: sql<string | null>`pods.created_by`,
  }[groupBy];
  const inRange = sql<SqlBool>`pods.org_id = ${orgId} and pods.created_at >= ${from} and pods.created_at < ${to}`;
  const rows = await db
    .selectFrom('pods')
    .leftJoin('loop_runs', 'loop_runs.pod_key', 'pods.key')
    .leftJoin('loops', 'loops.id', 'loop_runs.loop_id')
    .leftJoin('repositories', 'repositories.id', 'pods.repository_id')
    .select((eb) => [
      key.as('key'),
      eb.fn.sum<number>('pods.usage_input_tokens').as('input_tokens'),
      eb.fn.sum<number>('pods.usage_output_tokens').as('output_tokens'),
      eb.fn.sum<number>('pods.usage_cache_read_tokens').as('cache_read_tokens'),
      eb.fn.sum<number>('pods.usage_cache_write_tokens').as('cache_write_tokens'),
      eb.fn.sum<number>('pods.usage_cost_usd').as('cost_usd'),
      eb.fn.countAll<number>().as('pods'),
    ])
    .where(inRange)
    .groupBy(key)
    .orderBy(key)
    .execute();
  const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return rows.map((r) => ({
    key: typeof r.key === 'string' || r.key === null ? r.key : Number(r.key),
    input_tokens: n(r.input_tokens),
    output_tokens: n(r.output_tokens),
    cache_read_tokens: n(r.cache_read_tokens),
    cache_write_tokens: n(r.cache_write_tokens),
    cost_usd: n(r.cost_usd),
    pods: Number(r.pods),
  }));
}
