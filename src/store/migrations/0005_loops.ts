import type { Kysely } from 'kysely';
import type { DatabaseKind } from '../db.ts';
import { idColumn } from './columns.ts';

export function loops(kind: DatabaseKind) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await idColumn(kind, db.schema.createTable('loops'))
        .addColumn('org_id', 'bigint', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
        .addColumn('slug', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('agent_slug', 'text')
        .addColumn('custom_agent_slug', 'text')
        .addColumn('prompt_template', 'text', (c) => c.notNull())
        .addColumn('prompt_variables', 'text', (c) => c.notNull())
        .addColumn('repository_id', 'bigint')
        .addColumn('runner_id', 'bigint')
        .addColumn('branch_name', 'text')
        .addColumn('execution_mode', 'text', (c) => c.notNull())
        .addColumn('cron_expression', 'text')
        .addColumn('cron_timezone', 'text', (c) => c.notNull())
        .addColumn('sandbox_strategy', 'text', (c) => c.notNull())
        .addColumn('session_persistence', 'integer', (c) => c.notNull())
        .addColumn('concurrency_policy', 'text', (c) => c.notNull())
        .addColumn('max_concurrent_runs', 'integer', (c) => c.notNull())
        .addColumn('timeout_minutes', 'integer', (c) => c.notNull())
        .addColumn('callback_url', 'text')
        .addColumn('callback_secret_encrypted', 'text', (c) => c.notNull())
        .addColumn('autopilot_config', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('next_run_at', 'bigint')
        /** Counts runs per loop for run_number; its row update also serialises triggers of one loop. */
        .addColumn('run_counter', 'bigint', (c) => c.notNull())
        /** The runner that holds the persistent sandbox, and the agent session to resume. */
        .addColumn('sandbox_runner_id', 'bigint')
        .addColumn('last_session_id', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('loops_org_slug', ['org_id', 'slug'])
        .execute();
      await db.schema.createIndex('loops_org_list').on('loops').columns(['org_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('loops_due').on('loops').columns(['status', 'next_run_at']).execute();

      await idColumn(kind, db.schema.createTable('loop_runs'))
        .addColumn('org_id', 'bigint', (c) => c.notNull())
        .addColumn('loop_id', 'bigint', (c) => c.notNull().references('loops.id').onDelete('cascade'))
        .addColumn('run_number', 'bigint', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('trigger_type', 'text', (c) => c.notNull())
        .addColumn('variables', 'text', (c) => c.notNull())
        .addColumn('resolved_prompt', 'text')
        .addColumn('pod_key', 'text')
        .addColumn('runner_id', 'bigint')
        .addColumn('scheduled_at', 'bigint')
        .addColumn('started_at', 'bigint')
        .addColumn('deadline_at', 'bigint')
        .addColumn('finished_at', 'bigint')
        .addColumn('error_message', 'text')
        .addColumn('callback_status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('loop_runs_number', ['loop_id', 'run_number'])
        // Each cron slot fires at most once, whichever replica claims it.
        .addUniqueConstraint('loop_runs_slot', ['loop_id', 'scheduled_at'])
        .execute();
      await db.schema.createIndex('loop_runs_loop_status').on('loop_runs').columns(['loop_id', 'status', 'id']).execute();
      await db.schema.createIndex('loop_runs_list').on('loop_runs').columns(['loop_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('loop_runs_deadline').on('loop_runs').columns(['status', 'deadline_at']).execute();
      await db.schema.createIndex('loop_runs_pod').on('loop_runs').column('pod_key').execute();
    },
  };
}
