import type { TicketListRow, TicketWithParent } from '../../store/tickets.ts';
import { iso } from '../iso.ts';
import { parseActor, type Actor } from '../../events/actor.ts';
import type { TicketPriority, TicketStatus } from '../../protocol/enums.ts';

/** A ticket as lists show it (no description). */
export const ticketListItem = (row: TicketListRow) => listFields(row, JSON.parse(row.labels) as string[]);

/** `labels`: the row's, parsed. */
function listFields(row: TicketListRow, labels: string[]) {
  return {
    id: row.id,
    slug: row.slug,
    type: row.type,
    title: row.title,
    status: row.status as TicketStatus,
    priority: row.priority as TicketPriority,
    assignee_id: row.assignee_id,
    repository_id: row.repository_id,
    labels,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/**
 * A ticket as `GET /tickets/{slug}` and its events show it. `known`: what the caller holds of the
 * row unserialized (a ticket just created: its labels, and the actor who created and last updated it).
 */
export function ticketView(row: TicketWithParent, known?: { labels: string[]; actor: Actor }) {
  return {
    ...listFields(row, known ? known.labels : (JSON.parse(row.labels) as string[])),
    description: row.description,
    parent_slug: row.parent_slug,
    created_by: known ? known.actor : parseActor(row.created_by),
    updated_by: known ? known.actor : parseActor(row.updated_by),
  };
}
