import type { Executor } from './db.ts';

/** Persistent workspaces of deleted loops their runners are to remove (migration 0021). */
export interface WorkspaceRemoval {
  runner_id: number;
  persistent_key: string;
  pod_key: string | null;
}

export async function addWorkspaceRemovals(db: Executor, removals: WorkspaceRemoval[], now: number): Promise<void> {
  if (removals.length === 0) return;
  await db
    .insertInto('workspace_removals')
    .values(removals.map((r) => ({ ...r, created_at: now })))
    .onConflict((oc) => oc.columns(['runner_id', 'persistent_key']).doNothing())
    .execute();
}

export async function workspaceRemovalsOf(db: Executor, runnerId: number): Promise<WorkspaceRemoval[]> {
  return db.selectFrom('workspace_removals').select(['runner_id', 'persistent_key', 'pod_key']).where('runner_id', '=', runnerId).orderBy('created_at').execute();
}

export async function deleteWorkspaceRemoval(db: Executor, runnerId: number, persistentKey: string): Promise<void> {
  await db.deleteFrom('workspace_removals').where('runner_id', '=', runnerId).where('persistent_key', '=', persistentKey).execute();
}

/** The runners each run of a loop ran on, with the key of the last pod there (newest run first). */
export async function loopRunnersWithLastPod(db: Executor, loopId: number): Promise<{ runner_id: number; pod_key: string }[]> {
  const rows = await db
    .selectFrom('loop_runs')
    .select(['runner_id', 'pod_key'])
    .where('loop_id', '=', loopId)
    .where('runner_id', 'is not', null)
    .where('pod_key', 'is not', null)
    .orderBy('id', 'desc')
    .execute();
  const seen = new Map<number, string>();
  for (const row of rows) if (!seen.has(row.runner_id!)) seen.set(row.runner_id!, row.pod_key!);
  return [...seen].map(([runner_id, pod_key]) => ({ runner_id, pod_key }));
}

export async function findWorkspaceRemoval(db: Executor, runnerId: number, persistentKey: string): Promise<WorkspaceRemoval | undefined> {
  return db.selectFrom('workspace_removals').select(['runner_id', 'persistent_key', 'pod_key']).where('runner_id', '=', runnerId).where('persistent_key', '=', persistentKey).executeTakeFirst();
}
