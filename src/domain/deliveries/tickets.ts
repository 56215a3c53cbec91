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
