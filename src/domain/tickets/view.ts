import type { TicketListRow, TicketWithParent } from '../../store/tickets.ts';
import { iso } from '../iso.ts';
import { parseActor } from '../../events/actor.ts';
import type { TicketPriority, TicketStatus } from '../../protocol/enums.ts';

/** A ticket as lists show it (no description). */
export function ticketListItem(row: TicketListRow) {
  return {
    id: row.id,
    slug: row.slug,
    type: row.type,
    title: row.title,
    status: row.status as TicketStatus,
    priority: row.priority as TicketPriority,
    assignee_id: row.assignee_id,
    repository_id: row.repository_id,
    labels: JSON.parse(row.labels) as string[],
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** A ticket as `GET /tickets/{slug}` and its events show it. */
export function ticketView(row: TicketWithParent) {
  return {
    ...ticketListItem(row),
    description: row.description,
    parent_slug: row.parent_slug,
    created_by: parseActor(row.created_by),
    updated_by: parseActor(row.updated_by),
  };
}
