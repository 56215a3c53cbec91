import type { Executor } from './db.ts';
import { adjustTicketCount, bumpTicketVersion } from './tickets.ts';
import { SLOT_POD_STATUSES } from './runners.ts';

/**
 * What still uses a resource an administrator deletes (src/domain/admin/deletes.ts decides what
 * refuses the delete and what is detached), at most `limit` names of each.
 */

/** What a loop or a pod names: a repository by id, or a custom agent by slug. */
export type Use = { repositoryId: number } | { agentSlug: string };

/** Slugs of the loops that use it. */
export async function loopsUsing(db: Executor, orgId: number, use: Use, limit: number): Promise<string[]> {
  let query = db.selectFrom('loops').select('slug').where('org_id', '=', orgId);
  query = 'repositoryId' in use ? query.where('repository_id', '=', use.repositoryId) : query.where('custom_agent_slug', '=', use.agentSlug);
  return (await query.orderBy('slug').limit(limit).execute()).map((r) => r.slug);
}

/** Keys of the active pods that use it. */
export async function activePodsUsing(db: Executor, orgId: number, use: Use, limit: number): Promise<string[]> {
  let query = db.selectFrom('pods').select('key').where('org_id', '=', orgId).where('status', 'in', SLOT_POD_STATUSES);
  query = 'repositoryId' in use ? query.where('repository_id', '=', use.repositoryId) : query.where('agent_slug', '=', use.agentSlug);
  return (await query.orderBy('id').limit(limit).execute()).map((r) => r.key);
}

/** Unassigns the user's tickets; returns the ids of those that were assigned to them. */
export async function unassignUser(trx: Executor, orgId: number, userId: number, now: number): Promise<number[]> {
  const rows = await trx.updateTable('tickets').set({ assignee_id: null, updated_at: now }).where('org_id', '=', orgId).where('assignee_id', '=', userId).returning('id').execute();
  if (rows.length > 0) await bumpTicketVersion(trx, orgId);
  return rows.map((r) => Number(r.id));
}

/**
 * Detaches tickets and channels from a repository (their `repository_id` becomes null; ticket
 * slugs keep the prefix they were given). Ticket totals move to the organization's own bucket.
 */
export async function detachRepository(trx: Executor, orgId: number, repositoryId: number, now: number): Promise<{ ticketIds: number[]; channelIds: number[] }> {
  const tickets = await trx
    .updateTable('tickets')
    .set({ repository_id: null, updated_at: now })
    .where('org_id', '=', orgId)
    .where('repository_id', '=', repositoryId)
    .returning('id')
    .execute();
  const counts = await trx.selectFrom('ticket_counts').select(['status', 'n']).where('org_id', '=', orgId).where('repo_key', '=', repositoryId).execute();
  for (const { status, n } of counts) if (Number(n) !== 0) await adjustTicketCount(trx, orgId, null, status, Number(n));
  await trx.deleteFrom('ticket_counts').where('org_id', '=', orgId).where('repo_key', '=', repositoryId).execute();
  if (tickets.length > 0) await bumpTicketVersion(trx, orgId);
  const channels = await trx
    .updateTable('channels')
    .set({ repository_id: null, updated_at: now })
    .where('org_id', '=', orgId)
    .where('repository_id', '=', repositoryId)
    .returning('id')
    .execute();
  return { ticketIds: tickets.map((r) => Number(r.id)), channelIds: channels.map((r) => Number(r.id)) };
}
