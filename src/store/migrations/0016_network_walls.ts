import { sql, type Kysely } from 'kysely';

/**
 * The network walls of pods (docs/runners.md "Network"): `orgs.network_allow`, the organization's
 * list of hosts its pods may reach (JSON text of canonical `host:port` entries), and
 * `pods.network_refused`, how many connections a pod's proxy refused.
 */
export function networkWalls() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('orgs').addColumn('network_allow', 'text', (c) => c.notNull().defaultTo(sql`'[]'`)).execute();
      await db.schema.alterTable('pods').addColumn('network_refused', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
    },
  };
}
