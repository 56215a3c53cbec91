import { sql } from 'kysely';
import { dialectOf, type Executor } from './db.ts';
import { notify } from './notifications.ts';
import { placeholders, runCompiled } from './compiled.ts';
import type { EventRow, EventsTable } from './schema.ts';

export type NewEvent = Omit<EventsTable, 'id'>;

const EVENT_COLUMNS = ['org_id', 'type', 'channel_id', 'pod_key', 'loop_slug', 'ticket_slug', 'payload', 'actor', 'actor_type', 'created_at'] as const satisfies readonly (keyof NewEvent)[];

/**
 * Appends an event in the caller's transaction. On PostgreSQL the organization's `event_heads`
 * row is locked first: its events then take their ids (a global sequence) one transaction at a
 * time, so within an organization ids become visible in increasing order and a reader that has
 * seen id N never later finds a committed id below N. SQLite runs one writer at a time anyway.
 * The NOTIFY (`channel`, PostgreSQL) is delivered when the transaction commits, never if it rolls back.
 */
export async function appendEvent(trx: Executor, event: NewEvent, channel: string | null): Promise<number> {
  const postgres = dialectOf(trx) === 'postgres';
  if (postgres) {
    await trx
      .insertInto('event_heads')
      .values({ org_id: event.org_id, last_event_id: 0 })
      .onConflict((oc) => oc.column('org_id').doUpdateSet({ last_event_id: sql`event_heads.last_event_id` }))
      .execute();
  }
  const inserted = await runCompiled(
    trx,
    'append event',
    () => trx.insertInto('events').values(placeholders(EVENT_COLUMNS)).returning('id'),
    EVENT_COLUMNS.map((column) => event[column]),
  );
  const id = inserted.rows[0].id;
  if (postgres) {
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
 * Removes up to `batch` of the oldest events created before `cutoff` (found through
 * `events_created_at`, deleted by primary key), remembering per organization the newest id removed
 * (`pruned_through` only grows). Returns how many were removed: fewer than `batch` means done.
 */
export async function pruneEventBatch(trx: Executor, cutoff: number, batch: number): Promise<number> {
  const rows = await trx.selectFrom('events').select(['id', 'org_id']).where('created_at', '<', cutoff).orderBy('created_at').limit(batch).execute();
  if (rows.length === 0) return 0;
  const newest = new Map<number, number>();
  for (const row of rows) newest.set(Number(row.org_id), Math.max(newest.get(Number(row.org_id)) ?? 0, Number(row.id)));
  for (const [orgId, id] of newest) {
    await trx
      .insertInto('event_heads')
      .values({ org_id: orgId, last_event_id: id, pruned_through: id })
      .onConflict((oc) =>
        oc.column('org_id').doUpdateSet({ pruned_through: sql<number>`case when event_heads.pruned_through < ${id} then ${id} else event_heads.pruned_through end` }),
      )
      .execute();
  }
  const result = await trx.deleteFrom('events').where('id', 'in', rows.map((row) => row.id)).executeTakeFirst();
  return Number(result.numDeletedRows);
}
