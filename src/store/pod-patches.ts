import { runNamed } from './compiled.ts';
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

/** A ticket's pods, newest first (at most `limit`): what GET /tickets/:slug lists with their deliveries. */
export async function podsOfTicket(db: Executor, orgId: number, ticketSlug: string, limit: number) {
  // Compiled once (store/compiled.ts): on PostgreSQL it runs on every GET /tickets/{slug}.
  const { rows } = await runNamed(
    db,
    'pods of a ticket',
    (v) =>
      db
        .selectFrom('pods')
        .select(['key', 'status', 'agent_slug', 'created_at', 'delivery'])
        .where('org_id', '=', v('org'))
        .where('ticket_slug', '=', v('slug'))
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(v('limit')),
    { org: orgId, slug: ticketSlug, limit },
  );
  return rows;
}
