/**
 * What GET /tickets/:slug adds (docs/agents.md "Getting the work back"): the ticket's pods with
 * their deliveries, and the merge requests their deliveries opened, newest first.
 */
import { podsOfTicket } from '../../store/pod-patches.ts';
import type { DomainContext } from '../context.ts';
import { iso } from '../iso.ts';
import { parseDelivery } from './model.ts';

export const TICKET_PODS_LIMIT = 20;
/** Pods read for the merge requests: enough for any ticket a team works on. */
const MERGE_REQUEST_PODS_LIMIT = 500;

/**
 * What a rendered `GET /tickets/{slug}` body may be reused against, or null when it must be
 * rendered afresh (docs/decisions.md "Storage and performance"): its pods and their deliveries
 * change without the ticket changing, so the ticket version does not cover it. On SQLite the
 * store's change token does (it moves with any write through this process and any commit by
 * another); on PostgreSQL nothing read without a query does, so it is rendered every time.
 */
export function ticketDetailVersion(ctx: DomainContext): string | null {
  return ctx.store.changeToken();
}

export async function ticketWork(ctx: DomainContext, orgId: number, ticketSlug: string) {
  const rows = await podsOfTicket(ctx.store.db, orgId, ticketSlug, MERGE_REQUEST_PODS_LIMIT);
  const pods = rows.slice(0, TICKET_PODS_LIMIT).map((row) => ({
    key: row.key,
    status: row.status,
    agent_slug: row.agent_slug,
    created_at: iso(row.created_at),
    delivery: parseDelivery(row.delivery),
  }));
  const seen = new Set<number>();
  const mergeRequests: { id: number; url: string; state: 'opened' | 'merged' | 'closed'; branch: string }[] = [];
  for (const row of rows) {
    const delivery = parseDelivery(row.delivery);
    const mr = delivery?.merge_request;
    if (!mr || seen.has(mr.id)) continue;
    seen.add(mr.id);
    mergeRequests.push({ id: mr.id, url: mr.url, state: mr.state, branch: delivery.branch ?? '' });
  }
  return { pods, merge_requests: mergeRequests };
}
