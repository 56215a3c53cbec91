import type { Kysely } from 'kysely';
import type { DatabaseKind } from '../db.ts';
import { idColumn } from './columns.ts';

export function runnersAndPods(kind: DatabaseKind) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await idColumn(kind, db.schema.createTable('runner_tokens'))
        .addColumn('org_id', 'bigint', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('labels', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      await idColumn(kind, db.schema.createTable('runners'))
        .addColumn('org_id', 'bigint', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('credential_hash', 'text', (c) => c.notNull().unique())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('version', 'text', (c) => c.notNull())
        .addColumn('os', 'text', (c) => c.notNull())
        .addColumn('arch', 'text', (c) => c.notNull())
        .addColumn('labels', 'text', (c) => c.notNull())
        .addColumn('agents', 'text', (c) => c.notNull())
        .addColumn('max_pods', 'integer', (c) => c.notNull())
        .addColumn('connection_id', 'text')
        .addColumn('last_heartbeat_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('runners_org').on('runners').columns(['org_id', 'created_at']).execute();

      await idColumn(kind, db.schema.createTable('custom_agents'))
        .addColumn('org_id', 'bigint', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
        .addColumn('slug', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('command', 'text', (c) => c.notNull())
        .addColumn('args', 'text', (c) => c.notNull())
        .addColumn('prompt_position', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('custom_agents_org_slug', ['org_id', 'slug'])
        .execute();

      await idColumn(kind, db.schema.createTable('pods'))
        .addColumn('org_id', 'bigint', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
        .addColumn('key', 'text', (c) => c.notNull().unique())
        .addColumn('runner_id', 'bigint', (c) => c.notNull().references('runners.id'))
        .addColumn('agent_slug', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        /** What should be true: `run` until terminated, then `stop`. The runner reconciles to it. */
        .addColumn('desired_state', 'text', (c) => c.notNull())
        .addColumn('prompt', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('config', 'text', (c) => c.notNull())
        .addColumn('repository_id', 'bigint')
        .addColumn('branch', 'text')
        .addColumn('ticket_slug', 'text')
        .addColumn('channel_id', 'bigint')
        .addColumn('alias', 'text')
        .addColumn('credentials', 'text', (c) => c.notNull())
        .addColumn('token_prefix', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull())
        /** The runner needs the token itself to hand it to the agent; kept encrypted like repository tokens. */
        .addColumn('token_encrypted', 'text', (c) => c.notNull())
        .addColumn('error_message', 'text')
        .addColumn('exit_code', 'integer')
        .addColumn('session_id', 'text')
        .addColumn('started_at', 'bigint')
        /** started_at + pod_timeout_minutes: compared by the sweeper as a backstop for the runner's timer. */
        .addColumn('deadline_at', 'bigint')
        .addColumn('finished_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('pods_org_list').on('pods').columns(['org_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('pods_org_status').on('pods').columns(['org_id', 'status', 'created_at', 'id']).execute();
      await db.schema.createIndex('pods_runner').on('pods').columns(['runner_id', 'status', 'created_at']).execute();
      await db.schema.createIndex('pods_deadline').on('pods').columns(['status', 'deadline_at']).execute();
      await db.schema.createIndex('pods_token').on('pods').column('token_prefix').execute();

      await db.schema
        .createTable('pod_output')
        .addColumn('pod_id', 'bigint', (c) => c.primaryKey().references('pods.id').onDelete('cascade'))
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('total_bytes', 'bigint', (c) => c.notNull())
        .execute();
    },
  };
}
