import type { Kysely } from 'kysely';

/**
 * Model access through the runner (docs/agents.md "The model relay"): `model_calls` is the ledger
 * of every call a runner's relay passed (one row per call, its id chosen by the runner so a report
 * sent twice is kept once); the budgets are `loops.budget_usd_per_day` and
 * `org_quotas.max_cost_usd_per_month` (null: none). A pod's own `max_cost_usd` lives in its config.
 */
export function modelUsage() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('model_calls')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'bigint', (c) => c.notNull())
        .addColumn('pod_id', 'bigint', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('model', 'text')
        .addColumn('input_tokens', 'bigint', (c) => c.notNull())
        .addColumn('output_tokens', 'bigint', (c) => c.notNull())
        .addColumn('cache_read_tokens', 'bigint', (c) => c.notNull())
        .addColumn('cache_write_tokens', 'bigint', (c) => c.notNull())
        .addColumn('cost_usd', 'double precision')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('model_calls_pod').on('model_calls').columns(['pod_id']).execute();
      await db.schema.createIndex('model_calls_org_created').on('model_calls').columns(['org_id', 'created_at']).execute();
      await db.schema.alterTable('loops').addColumn('budget_usd_per_day', 'double precision').execute();
      await db.schema.alterTable('org_quotas').addColumn('max_cost_usd_per_month', 'double precision').execute();
    },
  };
}
