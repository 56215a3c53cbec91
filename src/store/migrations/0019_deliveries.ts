import type { Kysely } from 'kysely';

/**
 * Delivering the work (docs/agents.md "Getting the work back"): `pods.delivery` holds what became
 * of a pod's work as JSON text (read with the pod, like its config; null without a repository),
 * and `pod_patches` the work itself as `git format-patch` text, one row per pod, apart from the
 * pod row so listing pods never reads it. Kept as long as the pod (and its output).
 */
export function deliveries() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('pods').addColumn('delivery', 'text').execute();
      await db.schema
        .createTable('pod_patches')
        .addColumn('pod_id', 'bigint', (c) => c.primaryKey().references('pods.id').onDelete('cascade'))
        .addColumn('patch', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      // A ticket's pods (GET /tickets/:slug lists them, newest first).
      await db.schema.createIndex('pods_org_ticket').on('pods').columns(['org_id', 'ticket_slug', 'created_at']).execute();
    },
  };
}
