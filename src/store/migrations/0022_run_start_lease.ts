import type { Kysely } from 'kysely';

/**
 * A pending run's start lease (docs/decisions.md "Loops and runs"): while one starter (the
 * request that created the run, or any replica's sweeper) launches the run's pod,
 * `loop_runs.start_claimed_until` keeps every other starter away, however long the launch takes.
 * It is cleared when the start settles; a starter that died mid-launch loses it when it expires.
 */
export function runStartLease() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('loop_runs').addColumn('start_claimed_until', 'bigint').execute();
    },
  };
}
