import type { Kysely } from 'kysely';

/**
 * Pods spawn pods (docs/mcp.md): `pods.parent_pod_key` names the pod whose token created this one
 * (null for pods created with an API key or by a loop). `pods_parent_status` finds a pod's active
 * children (the fan-out limit, and terminating them when the parent ends) without a scan.
 */
export function podParent() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('pods').addColumn('parent_pod_key', 'text').execute();
      await db.schema.createIndex('pods_parent_status').on('pods').columns(['parent_pod_key', 'status']).execute();
    },
  };
}
