import { sql } from 'kysely';
import { dialectOf, type Executor } from './db.ts';
import { SLOT_POD_STATUSES } from './runners.ts';
import type { OrgQuotasTable } from './schema.ts';

export type QuotaOverrides = Omit<OrgQuotasTable, 'org_id' | 'updated_at'>;

export async function findOrgQuotas(db: Executor, orgId: number): Promise<QuotaOverrides | undefined> {
  return db
    .selectFrom('org_quotas')
    .select(['max_active_pods', 'max_queued_pods', 'max_loops', 'pod_output_bytes_per_sec', 'max_cost_usd_per_month'])
    .where('org_id', '=', orgId)
    .executeTakeFirst();
}

/** Writes the given overrides (others keep their value); null puts a quota back on the server default. */
export async function upsertOrgQuotas(db: Executor, orgId: number, set: Partial<QuotaOverrides>, now: number): Promise<void> {
  const empty: QuotaOverrides = { max_active_pods: null, max_queued_pods: null, max_loops: null, pod_output_bytes_per_sec: null, max_cost_usd_per_month: null };
  await db
    .insertInto('org_quotas')
    .values({ org_id: orgId, ...empty, ...set, updated_at: now })
    .onConflict((oc) => oc.column('org_id').doUpdateSet({ ...set, updated_at: now }))
    .execute();
}

/** Locks the organization's row until commit (PostgreSQL), so a count and the insert it allows are one step. */
export async function lockOrg(db: Executor, orgId: number): Promise<void> {
  // SQLite runs one write transaction at a time.
  if (dialectOf(db) === 'postgres') await sql`select id from orgs where id = ${orgId} for update`.execute(db);
}

export async function countActivePods(db: Executor, orgId: number): Promise<number> {
  const row = await db
    .selectFrom('pods')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .where('status', 'in', SLOT_POD_STATUSES)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The organization's pods waiting for a runner (the max_queued_pods quota). */
export async function countQueuedPods(db: Executor, orgId: number): Promise<number> {
  const row = await db
    .selectFrom('pods')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .where('status', '=', 'queued')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
