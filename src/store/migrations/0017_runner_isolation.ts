import type { Kysely } from 'kysely';

/**
 * Runners say which walls they put around a pod (docs/runners.md "Isolation"): `isolation` holds
 * `{network, memory, pids, cpu, disk}` as JSON text, null until a runner that reports it connects.
 */
export function runnerIsolation() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('runners').addColumn('isolation', 'text').execute();
    },
  };
}
