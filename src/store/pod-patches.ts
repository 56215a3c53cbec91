import type { Executor } from './db.ts';

/** Stores (or replaces: a runner may report an exit twice) a pod's patch. */
export async function savePodPatch(db: Executor, podId: number, patch: string, now: number): Promise<void> {
  await db
    .insertInto('pod_patches')
    .values({ pod_id: podId, patch, created_at: now })
    .onConflict((oc) => oc.column('pod_id').doUpdateSet({ patch, created_at: now }))
    .execute();
}

export async function findPodPatch(db: Executor, podId: number): Promise<string | undefined> {
  const row = await db.selectFrom('pod_patches').select('patch').where('pod_id', '=', podId).executeTakeFirst();
  return row?.patch;
}
