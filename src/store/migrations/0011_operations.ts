import { sql, type Kysely } from 'kysely';
import type { DatabaseKind } from '../db.ts';
import { idColumn } from './columns.ts';

/**
 * Operations (docs/decisions.md): pod output as appended chunks, per-organization quotas, runner
 * deletion and credential rotation, and the webhook delivery log (redeliveries share an event id).
 */
export function operations(kind: DatabaseKind) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // Pod output: one row per chunk the runner sent, at its byte offset in the pod's output,
      // instead of one row per pod rewritten (up to 1 MiB) for every chunk.
      await db.schema
        .createTable('pod_output_chunks')
        .addColumn('pod_id', 'bigint', (c) => c.notNull().references('pods.id').onDelete('cascade'))
        .addColumn('start_offset', 'bigint', (c) => c.notNull())
        .addColumn('end_offset', 'bigint', (c) => c.notNull())
        .addColumn('data', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('pod_output_chunks_pk', ['pod_id', 'start_offset'])
        .execute();
      const bytes = kind === 'postgres' ? sql`octet_length(data)` : sql`length(cast(data as blob))`;
      await sql`insert into pod_output_chunks (pod_id, start_offset, end_offset, data)
                select pod_id, total_bytes - ${bytes}, total_bytes, data from pod_output where total_bytes > 0`.execute(db);
      await db.schema.dropTable('pod_output').execute();

      // Quotas per organization; null means the server-wide default.
      await db.schema
        .createTable('org_quotas')
        .addColumn('org_id', 'bigint', (c) => c.primaryKey().references('orgs.id').onDelete('cascade'))
        .addColumn('max_active_pods', 'integer')
        .addColumn('max_queued_pods', 'integer')
        .addColumn('max_loops', 'integer')
        .addColumn('pod_output_bytes_per_sec', 'bigint')
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();

      // A deleted runner keeps its row (its pods name it) but no credential that can match.
      await db.schema.alterTable('runners').addColumn('deleted_at', 'bigint').execute();
      await db.schema.alterTable('runners').addColumn('credential_rotated_at', 'bigint').execute();

      // A redelivery is a new row with the event id of the first: event_id is no longer unique.
      if (kind === 'postgres') {
        await sql`alter table webhook_deliveries drop constraint webhook_deliveries_event_id_key`.execute(db);
      } else {
        // SQLite cannot drop a column constraint: the table is rebuilt without it.
        await sql`alter table webhook_deliveries rename to webhook_deliveries_old`.execute(db);
        await idColumn(kind, db.schema.createTable('webhook_deliveries'))
          .addColumn('org_id', 'bigint', (c) => c.notNull())
          .addColumn('event_id', 'text', (c) => c.notNull())
          .addColumn('url', 'text', (c) => c.notNull())
          .addColumn('secret_encrypted', 'text', (c) => c.notNull())
          .addColumn('payload', 'text', (c) => c.notNull())
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('attempts', 'integer', (c) => c.notNull())
          .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
          .addColumn('last_status_code', 'integer')
          .addColumn('last_error', 'text')
          .addColumn('subject_type', 'text', (c) => c.notNull())
          .addColumn('subject_id', 'bigint', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .execute();
        await sql`insert into webhook_deliveries select * from webhook_deliveries_old`.execute(db);
        await db.schema.dropTable('webhook_deliveries_old').execute();
        await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
      }
      await db.schema.createIndex('webhook_deliveries_event').on('webhook_deliveries').column('event_id').execute();
      await db.schema.createIndex('webhook_deliveries_subject').on('webhook_deliveries').columns(['subject_type', 'subject_id', 'id']).execute();

      // One row per attempt of a delivery: when, what came back, how long it took.
      await idColumn(kind, db.schema.createTable('webhook_attempts'))
        .addColumn('delivery_id', 'bigint', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
        .addColumn('attempt', 'integer', (c) => c.notNull())
        .addColumn('attempted_at', 'bigint', (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('error', 'text')
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webhook_attempts_delivery').on('webhook_attempts').columns(['delivery_id', 'id']).execute();
    },
  };
}
