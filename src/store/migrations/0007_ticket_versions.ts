import type { Kysely } from 'kysely';

/** A counter per organization bumped by every ticket write, so rendered ticket reads can be reused until it moves. */
export function ticketVersions() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('ticket_versions')
        .addColumn('org_id', 'bigint', (c) => c.primaryKey())
        .addColumn('version', 'bigint', (c) => c.notNull())
        .execute();
    },
  };
}
