import { sql } from 'kysely';
import type { DatabaseKind, Executor } from './db.ts';
import { notify } from './notify.ts';
import type { EventRow, EventsTable } from './schema.ts';

export type NewEvent = Omit<EventsTable, 'id'>;

/**
 * Appends an event in the caller's transaction. On PostgreSQL the organization's `event_heads`
 * row is locked first: its events then take their ids (a global sequence) one transaction at a
 * time, so within an organization ids become visible in increasing order and a reader that has
 * seen id N never later finds a committed id below N. SQLite runs one writer at a time anyway.
 * The NOTIFY (`channel`, PostgreSQL) is delivered when the transaction commits, never if it rolls back.
 */
export async function appendEvent(trx: Executor, kind: DatabaseKind, event: NewEvent, channel: string | null): Promise<number> {
  if (kind === 'postgres') {
    await trx
      .insertInto('event_heads')
      .values({ org_id: event.org_id, last_event_id: 0 })
      .onConflict((oc) => oc.column('org_id').doUpdateSet({ last_event_id: sql`event_heads.last_event_id` }))
      .execute();
  }
  const { id } = await trx.insertInto('events').values(event).returning('id').executeTakeFirstOrThrow();
  if (kind === 'postgres') {
    await trx.updateTable('event_heads').set({ last_event_id: id }).where('org_id', '=', event.org_id).execute();
    if (channel) await notify(trx, channel, `${event.org_id} ${id}`);
  }
  return Number(id);
}

/** The organization's events after `afterId`, oldest first. */
export async function eventsAfter(db: Executor, orgId: number, afterId: number, limit: number, upTo?: number): Promise<EventRow[]> {
  let query = db.selectFrom('events').selectAll().where('org_id', '=', orgId).where('id', '>', afterId);
  if (upTo !== undefined) query = query.where('id', '<=', upTo);
  return query.orderBy('id').limit(limit).execute();
}

/** The organization's newest event id (0 when it has none). */
export async function latestEventId(db: Executor, orgId: number): Promise<number> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.max<number | null>('id').as('id'))
    .where('org_id', '=', orgId)
    .executeTakeFirst();
  return Number(row?.id ?? 0);
}

/** The newest of the organization's events that retention removed (0: none). */
export async function prunedThrough(db: Executor, orgId: number): Promise<number> {
  const row = await db.selectFrom('event_heads').select('pruned_through').where('org_id', '=', orgId).executeTakeFirst();
  return Number(row?.pruned_through ?? 0);
}

/**
 * Removes events created before `cutoff`, remembering per organization the newest id removed
 * (which only grows: the rows older than an earlier cutoff are gone already).
 * Returns how many were removed.
 */
export async function pruneEvents(trx: Executor, cutoff: number): Promise<number> {
  const pruned = await trx
    .selectFrom('events')
    .select(['org_id', (eb) => eb.fn.max<number>('id').as('id')])
    .where('created_at', '<', cutoff)
    .groupBy('org_id')
    .execute();
  if (pruned.length === 0) return 0;
  for (const { org_id, id } of pruned) {
    await trx
      .insertInto('event_heads')
      .values({ org_id, last_event_id: Number(id), pruned_through: Number(id) })
      .onConflict((oc) => oc.column('org_id').doUpdateSet({ pruned_through: Number(id) }))
      .execute();
  }
  const result = await trx.deleteFrom('events').where('created_at', '<', cutoff).executeTakeFirst();
  return Number(result.numDeletedRows);
}
