import type { Kysely } from 'kysely';
import type { DatabaseKind } from '../db.ts';
import { idColumn } from './columns.ts';

/**
 * The per-organization event log of docs/events.md.
 *
 * - `events`: one row per change, written in the change's own transaction. The id is global and
 *   auto-incremented; `event_heads` makes it increase per organization in commit order (see
 *   store/events.ts). `data` is the event's JSON line as the stream sends it; the filter columns
 *   (`channel_id`, `pod_key`, `loop_slug`, `ticket_slug`) are what the stream's filters compare.
 * - `event_heads`: one row per organization, locked by every event write of that organization;
 *   `pruned_through` is the newest of its events that retention has removed (a resume from an
 *   older id is answered with `reset`).
 */
export function events(kind: DatabaseKind) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await idColumn(kind, db.schema.createTable('events'))
        .addColumn('org_id', 'bigint', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('channel_id', 'bigint')
        .addColumn('pod_key', 'text')
        .addColumn('loop_slug', 'text')
        .addColumn('ticket_slug', 'text')
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('events_org_id').on('events').columns(['org_id', 'id']).execute();
      await db.schema.createIndex('events_created_at').on('events').columns(['created_at']).execute();
      await db.schema
        .createTable('event_heads')
        .addColumn('org_id', 'bigint', (c) => c.primaryKey())
        .addColumn('last_event_id', 'bigint', (c) => c.notNull())
        .addColumn('pruned_through', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  };
}
