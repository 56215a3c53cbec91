import { dialectOf, type Executor } from './db.ts';
import type { PodRow } from './schema-runners.ts';

/**
 * Queued pods (docs/decisions.md "Runners and pods"): pods with status `queued` and no runner yet.
 * Their order is first in, first out per organization: by `created_at`, then `id` (the exact
 * reverse of the order of pod lists, so a page of a list holds a contiguous stretch of the queue).
 */

/** Whether the organization has any queued pod (one index probe: most placements find none). */
export async function hasQueuedPods(db: Executor, orgId: number): Promise<boolean> {
  const row = await db.selectFrom('pods').select('id').where('org_id', '=', orgId).where('status', '=', 'queued').limit(1).executeTakeFirst();
  return row !== undefined;
}

/**
 * The organization's queued pods after `after` (exclusive; null: from the head), oldest first, at
 * most `limit`. On PostgreSQL they are locked for the caller's transaction, skipping pods another
 * transaction holds (one being terminated right now), so a placement never waits on one.
 */
export async function queuedPodsOf(
  db: Executor,
  orgId: number,
  after: Pick<PodRow, 'created_at' | 'id'> | null,
  limit: number,
): Promise<PodRow[]> {
  let query = db.selectFrom('pods').selectAll().where('org_id', '=', orgId).where('status', '=', 'queued');
  if (after) {
    query = query.where((eb) =>
      eb.or([eb('created_at', '>', after.created_at), eb.and([eb('created_at', '=', after.created_at), eb('id', '>', after.id)])]),
    );
  }
  query = query.orderBy('created_at').orderBy('id').limit(limit);
  return dialectOf(db) === 'postgres' ? query.forUpdate().skipLocked().execute() : query.execute();
}

/** The 1-based place of a queued pod in its organization's queue (1: the next to get a slot). */
export async function queuePosition(db: Executor, pod: Pick<PodRow, 'org_id' | 'created_at' | 'id'>): Promise<number> {
  const row = await db
    .selectFrom('pods')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', pod.org_id)
    .where('status', '=', 'queued')
    .where((eb) => eb.or([eb('created_at', '<', pod.created_at), eb.and([eb('created_at', '=', pod.created_at), eb('id', '<', pod.id)])]))
    .executeTakeFirstOrThrow();
  return Number(row.n) + 1;
}

/** Organizations that have queued pods. */
export async function orgsWithQueuedPods(db: Executor): Promise<number[]> {
  const rows = await db.selectFrom('pods').select('org_id').distinct().where('status', '=', 'queued').execute();
  return rows.map((r) => Number(r.org_id));
}

/** Queued pods created before `createdBefore`: they have waited longer than the queue timeout. */
export async function queuedPodsCreatedBefore(db: Executor, createdBefore: number, limit: number): Promise<PodRow[]> {
  return db
    .selectFrom('pods')
    .selectAll()
    .where('status', '=', 'queued')
    .where('created_at', '<', createdBefore)
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}
