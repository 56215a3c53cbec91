import type { Kysely } from 'kysely';
import type { DatabaseKind } from '../db.ts';
import { idColumn } from './columns.ts';

/**
 * People, presets and placement (docs/api.md "Actors and activity", "Presets", "Placement by labels").
 *
 * - `api_keys.user_id`: the person a key belongs to (null: a key of no one, e.g. a CI bot).
 * - Actors are stored as the JSON `{type, id, name}` as they were when the change was made (a renamed
 *   or deleted user keeps their name on what they did): `events.actor` (with `actor_type` for the
 *   activity filter), `tickets.created_by`/`updated_by`, `pods.created_by`, `loop_runs.triggered_by`,
 *   `channel_messages.sender`. Null on rows written before this migration.
 * - `pods.runner_labels`/`loops.runner_labels`: JSON arrays (null: none), `preset`: the preset's name
 *   the pod or loop was made from.
 * - `presets`: a named agent plus agentfile lines, unique by name per organization.
 */
export function people(kind: DatabaseKind) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('api_keys').addColumn('user_id', 'bigint').execute();
      await db.schema.alterTable('events').addColumn('actor', 'text').execute();
      await db.schema.alterTable('events').addColumn('actor_type', 'text').execute();
      await db.schema.alterTable('tickets').addColumn('created_by', 'text').execute();
      await db.schema.alterTable('tickets').addColumn('updated_by', 'text').execute();
      await db.schema.alterTable('pods').addColumn('created_by', 'text').execute();
      await db.schema.alterTable('pods').addColumn('runner_labels', 'text').execute();
      await db.schema.alterTable('pods').addColumn('preset', 'text').execute();
      await db.schema.alterTable('loops').addColumn('runner_labels', 'text').execute();
      await db.schema.alterTable('loops').addColumn('preset', 'text').execute();
      await db.schema.alterTable('loop_runs').addColumn('triggered_by', 'text').execute();
      await db.schema.alterTable('channel_messages').addColumn('sender', 'text').execute();
      await db.schema.createIndex('api_keys_user').on('api_keys').columns(['org_id', 'user_id']).execute();
      await idColumn(kind, db.schema.createTable('presets'))
        .addColumn('org_id', 'bigint', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('agent_slug', 'text', (c) => c.notNull())
        .addColumn('agentfile_layer', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('presets_org_name').on('presets').columns(['org_id', 'name']).unique().execute();
    },
  };
}
