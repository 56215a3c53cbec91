import type { Kysely } from 'kysely';

/**
 * What an agent reported at its end (docs/agents.md "Results"): its final message and its usage.
 * One column per usage figure (not a JSON text), so a loop's total cost is a SUM in the database.
 * The session id has its own column since 0004. Runs show their pod's.
 */
export function podResults() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('pods').addColumn('result', 'text').execute();
      for (const column of ['usage_input_tokens', 'usage_output_tokens', 'usage_cache_read_tokens', 'usage_cache_write_tokens', 'usage_turns']) {
        await db.schema.alterTable('pods').addColumn(column, 'bigint').execute();
      }
      await db.schema.alterTable('pods').addColumn('usage_cost_usd', 'double precision').execute();
    },
  };
}
