import type { Kysely } from 'kysely';

/**
 * Persistent workspaces of deleted loops that their runners still hold (docs/agents.md "Getting
 * the work back"): one row per runner and workspace, until the runner says it delivered the work
 * and removed the directory. `pod_key` names the loop's last pod there (its repository and
 * `CONFIG deliver` say where undelivered work goes).
 */
export function workspaceRemovals() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('workspace_removals')
        .addColumn('runner_id', 'bigint', (c) => c.notNull().references('runners.id').onDelete('cascade'))
        .addColumn('persistent_key', 'text', (c) => c.notNull())
        .addColumn('pod_key', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('workspace_removals_pk', ['runner_id', 'persistent_key'])
        .execute();
    },
  };
}
