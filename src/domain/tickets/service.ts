import { invalid, notFound } from '../../errors.ts';
import type { Executor } from '../../store/db.ts';
import type { OrgRow } from '../../store/schema.ts';
import { findRepository } from '../../store/repositories.ts';
import { userExists } from '../../store/users.ts';
import * as tickets from '../../store/tickets.ts';
import { eventData, recordEvent, recordEventData } from '../../events/writer.ts';
import { actorJson, currentActor } from '../../events/actor.ts';
import type { DomainContext } from '../context.ts';
import { ticketView } from './view.ts';
import { canonicalSlug, normalizeLabels, priorityRank } from './model.ts';
import { TICKET_STATUSES, type TicketPriority, type TicketStatus, type TicketType } from '../../protocol/enums.ts';

export interface CreateTicketInput {
  type: TicketType;
  title: string;
  description?: string;
  priority?: TicketPriority;
  status?: TicketStatus;
  assignee_id?: number;
  repository_id?: number;
  labels?: string[];
  parent_slug?: string;
}

export interface UpdateTicketInput {
  type?: TicketType;
  title?: string;
  description?: string | null;
  priority?: TicketPriority;
  status?: TicketStatus;
  assignee_id?: number | null;
  labels?: string[];
  parent_slug?: string | null;
}

export interface ListTicketsInput extends tickets.TicketFilter {
  limit: number;
  offset: number;
}

async function requireTicket(db: Executor, orgId: number, slug: string): Promise<tickets.TicketWithParent> {
  const ticket = await tickets.findTicketBySlug(db, orgId, canonicalSlug(slug));
  if (!ticket) throw notFound('ticket');
  return ticket;
}

async function checkAssignee(db: Executor, orgId: number, assigneeId: number | null | undefined): Promise<void> {
  if (assigneeId == null) return;
  if (!(await userExists(db, orgId, assigneeId))) throw invalid('/assignee_id', 'must be the id of a user of this organization');
}

async function resolveParent(db: Executor, orgId: number, parentSlug: string): Promise<number> {
  const parent = await tickets.findTicketBySlug(db, orgId, canonicalSlug(parentSlug));
  if (!parent) throw invalid('/parent_slug', 'must be the slug of a ticket of this organization');
  return parent.id;
}

/** A ticket just created, and the API's answer for it as JSON (`{"ticket": {…}}`), which is also its event's data. */
export interface CreatedTicket {
  ticket: tickets.TicketWithParent;
  json: string;
}

export async function createTicket(ctx: DomainContext, org: OrgRow, input: CreateTicketInput): Promise<tickets.TicketWithParent> {
  return (await createTicketWithJson(ctx, org, input)).ticket;
}

export async function createTicketWithJson(ctx: DomainContext, org: OrgRow, input: CreateTicketInput): Promise<CreatedTicket> {
  return ctx.store.transaction(async (trx) => {
    let prefix = org.ticket_prefix;
    if (input.repository_id !== undefined) {
      const repository = await findRepository(trx, org.id, input.repository_id);
      if (!repository) throw invalid('/repository_id', 'must be the id of a repository of this organization');
      prefix = repository.ticket_prefix ?? prefix;
    }
    await checkAssignee(trx, org.id, input.assignee_id);
    const parentId = input.parent_slug === undefined ? null : await resolveParent(trx, org.id, input.parent_slug);
    const parentSlug = input.parent_slug === undefined ? null : canonicalSlug(input.parent_slug);
    const labels = normalizeLabels(input.labels ?? []);
    const priority = input.priority ?? 'medium';
    const number = await tickets.nextTicketNumber(trx, org.id, prefix);
    await tickets.bumpTicketVersion(trx, org.id);
    const now = ctx.now();
    const actor = currentActor();
    const actorText = actorJson(actor);
    const row = await tickets.insertTicket(
      trx,
      {
        org_id: org.id,
        slug: `${prefix}-${number}`,
        type: input.type,
        title: input.title,
        description: input.description ?? null,
        status: input.status ?? 'backlog',
        priority,
        priority_rank: priorityRank(priority),
        assignee_id: input.assignee_id ?? null,
        repository_id: input.repository_id ?? null,
        labels: JSON.stringify(labels),
        parent_id: parentId,
        created_by: actorText,
        updated_by: actorText,
        created_at: now,
        updated_at: now,
      },
      labels,
    );
    const ticket = { ...row, parent_slug: parentSlug };
    // Serialized once: the event's data is the API's answer (docs/decisions.md "Storage and performance").
    const json = eventData('ticket.created', ticketView(ticket, { labels, actor }));
    await recordEventData(ctx, trx, org.id, 'ticket.created', json, { ticket_slug: ticket.slug });
    return { ticket, json };
  });
}

export async function getTicket(ctx: DomainContext, orgId: number, slug: string): Promise<tickets.TicketWithParent> {
  return requireTicket(ctx.store.db, orgId, slug);
}

export async function listTickets(ctx: DomainContext, orgId: number, input: ListTicketsInput) {
  const { limit, offset, ...filter } = input;
  if (filter.labels) filter.labels = normalizeLabels(filter.labels);
  const [rows, total] = await Promise.all([
    tickets.listTickets(ctx.store.db, orgId, filter, { limit, offset }),
    tickets.countTickets(ctx.store.db, orgId, filter),
  ]);
  return { rows, total };
}

export async function updateTicket(
  ctx: DomainContext,
  orgId: number,
  slug: string,
  input: UpdateTicketInput,
): Promise<tickets.TicketWithParent> {
  return ctx.store.transaction(async (trx) => {
    const ticket = await requireTicket(trx, orgId, slug);
    await tickets.bumpTicketVersion(trx, orgId);
    const patch: Parameters<typeof tickets.updateTicket>[2] = { updated_at: ctx.now(), updated_by: actorJson() };
    if (input.title !== undefined) patch.title = input.title;
    if (input.type !== undefined) patch.type = input.type;
    if (input.description !== undefined) patch.description = input.description;
    if (input.priority !== undefined) {
      patch.priority = input.priority;
      patch.priority_rank = priorityRank(input.priority);
    }
    if (input.assignee_id !== undefined) {
      await checkAssignee(trx, orgId, input.assignee_id);
      patch.assignee_id = input.assignee_id;
    }
    if (input.parent_slug !== undefined) {
      patch.parent_id = input.parent_slug === null ? null : await parentWithoutCycle(trx, orgId, ticket.id, input.parent_slug);
    }
    if (input.labels !== undefined) {
      const labels = normalizeLabels(input.labels);
      patch.labels = JSON.stringify(labels);
      await tickets.replaceTicketLabels(trx, ticket.id, orgId, labels);
    }
    if (input.status !== undefined && input.status !== ticket.status) {
      await moveStatus(trx, ticket, input.status);
      patch.status = input.status;
    }
    await tickets.updateTicket(trx, ticket.id, patch);
    const updated = (await tickets.findTicketById(trx, ticket.id))!;
    await recordEvent(ctx, trx, orgId, 'ticket.updated', ticketView(updated), { ticket_slug: updated.slug });
    return updated;
  });
}

async function parentWithoutCycle(trx: Executor, orgId: number, ticketId: number, parentSlug: string): Promise<number> {
  const parentId = await resolveParent(trx, orgId, parentSlug);
  if (parentId === ticketId) throw invalid('/parent_slug', 'may not be the ticket itself');
  const ancestors = await tickets.ancestorIds(trx, parentId);
  if (ancestors.includes(ticketId)) throw invalid('/parent_slug', 'would create a cycle (the parent descends from this ticket)');
  return parentId;
}

async function moveStatus(trx: Executor, ticket: tickets.TicketWithParent, status: TicketStatus): Promise<void> {
  await tickets.adjustTicketCount(trx, ticket.org_id, ticket.repository_id, ticket.status, -1);
  await tickets.adjustTicketCount(trx, ticket.org_id, ticket.repository_id, status, 1);
}

export async function setTicketStatus(ctx: DomainContext, orgId: number, slug: string, status: TicketStatus) {
  return updateTicket(ctx, orgId, slug, { status });
}

export async function deleteTicket(ctx: DomainContext, orgId: number, slug: string): Promise<string> {
  return ctx.store.transaction(async (trx) => {
    const ticket = await requireTicket(trx, orgId, slug);
    await tickets.bumpTicketVersion(trx, orgId);
    await tickets.deleteTicket(trx, ticket);
    await recordEvent(ctx, trx, orgId, 'ticket.deleted', ticketView(ticket), { ticket_slug: ticket.slug });
    return ticket.slug;
  });
}

export async function ticketBoard(ctx: DomainContext, orgId: number, limitPerColumn: number, repositoryId?: number) {
  const db = ctx.store.db;
  const [totals, ...columns] = await Promise.all([
    tickets.countsByStatus(db, orgId, repositoryId),
    ...TICKET_STATUSES.map((status) => tickets.boardColumn(db, orgId, status, limitPerColumn, repositoryId)),
  ]);
  return TICKET_STATUSES.map((status, i) => ({ status, total: totals.get(status) ?? 0, tickets: columns[i] }));
}

/** Per store: the version last read per organization, and the store's change token read before it. */
const knownVersions = new WeakMap<object, Map<number, { token: string; version: number }>>();

/**
 * Moves with every ticket write of the organization: rendered reads stay valid while it does not.
 * On SQLite it is read again only once the database may have changed (Store.changeToken, read
 * before the version so a write in between makes the next call read again); on PostgreSQL, where
 * other replicas write, it is read on every call (docs/decisions.md "Storage and performance").
 * Known without a query (SQLite, the change token unmoved: the steady case of a cached read), it is
 * answered at once, not as a promise.
 */
export function ticketsVersion(ctx: DomainContext, orgId: number): number | Promise<number> {
  const token = ctx.store.changeToken();
  if (token === null) return tickets.ticketVersion(ctx.store.db, orgId);
  let known = knownVersions.get(ctx.store);
  if (!known) knownVersions.set(ctx.store, (known = new Map()));
  const entry = known.get(orgId);
  if (entry && entry.token === token) return entry.version;
  return tickets.ticketVersion(ctx.store.db, orgId).then((version) => {
    known.set(orgId, { token, version });
    return version;
  });
}

/** `ticket.updated` for tickets another change has altered (a repository or user deleted), in its transaction. */
export async function recordTicketsUpdated(ctx: DomainContext, trx: Executor, orgId: number, ids: number[]): Promise<void> {
  for (const id of ids) {
    const ticket = (await tickets.findTicketById(trx, id))!;
    await recordEvent(ctx, trx, orgId, 'ticket.updated', ticketView(ticket), { ticket_slug: ticket.slug });
  }
}
