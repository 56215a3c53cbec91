import { TICKET_PRIORITIES, TICKET_STATUSES, type TicketStatus } from '../../../src/protocol/enums.ts';

export type { TicketStatus };
import type { BoardTicket, Ticket } from '../api-types.ts';
export const STATUS_LABELS: Record<TicketStatus, string> = { backlog: 'Backlog', todo: 'Todo', in_progress: 'In progress', in_review: 'In review', done: 'Done' };

/** A board card: the board endpoint's ticket, with the column it is in (web/src/api-types.ts). */
export type Card = Omit<BoardTicket, 'labels'> & { labels?: string[]; status: TicketStatus };
export type { Ticket };

export interface Filters {
  label: string;
  type: string;
  assignee: string;
}

export type Columns = Record<TicketStatus, { total: number; cards: Card[] }>;

export const emptyColumns = (): Columns => Object.fromEntries(TICKET_STATUSES.map((s) => [s, { total: 0, cards: [] }])) as unknown as Columns;

/** The board's order: urgent first, then newest (higher id) first. */
export function byBoardOrder(a: Card, b: Card): number {
  const rank = (c: Card) => TICKET_PRIORITIES.indexOf(c.priority as (typeof TICKET_PRIORITIES)[number]);
  return rank(b) - rank(a) || b.id - a.id;
}

export const hasFilters = (f: Filters) => Boolean(f.label.trim() || f.type || f.assignee.trim());

/** Whether a ticket from an event belongs on a board showing `filters`. */
export function matches(ticket: Ticket, f: Filters): boolean {
  const labels = f.label.split(',').map((l) => l.trim()).filter(Boolean);
  if (labels.some((l) => !ticket.labels.includes(l))) return false;
  if (f.type && ticket.type !== f.type) return false;
  if (f.assignee.trim() && String(ticket.assignee_id) !== f.assignee.trim()) return false;
  return true;
}

/** Columns with `ticket` placed in its status column (and out of any other), totals kept. */
export function placeTicket(columns: Columns, ticket: Card | null, slug: string, previous: TicketStatus | null): Columns {
  const next = { ...columns };
  for (const status of TICKET_STATUSES) {
    const column = next[status];
    const had = column.cards.some((c) => c.slug === slug);
    if (had || status === previous) {
      next[status] = { total: Math.max(0, column.total - 1), cards: column.cards.filter((c) => c.slug !== slug) };
    }
  }
  if (ticket) {
    const column = next[ticket.status];
    next[ticket.status] = { total: column.total + 1, cards: [...column.cards, ticket].sort(byBoardOrder) };
  }
  return next;
}

export function statusOf(columns: Columns, slug: string): TicketStatus | null {
  return TICKET_STATUSES.find((s) => columns[s].cards.some((c) => c.slug === slug)) ?? null;
}
