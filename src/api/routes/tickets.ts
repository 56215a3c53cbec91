import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import { ResponseCache } from '../response-cache.ts';
import { acceptsGzip } from '../content-encoding.ts';
import type { DomainContext } from '../../domain/context.ts';
import { TICKET_STATUSES, type TicketPriority } from '../../protocol/enums.ts';
import * as service from '../../domain/tickets/service.ts';
import { ticketListItem as listItem, ticketView as detail } from '../../domain/tickets/view.ts';
import { IdempotencyHeaders, MessageBody, OrgParams, clampLimit, errorResponses } from '../schemas/common.ts';
import * as s from '../schemas/tickets.ts';
import { ticketDetailVersion, ticketWork } from '../../domain/deliveries/tickets.ts';

const tags = ['Tickets'];

/** The schema's pattern has bounded the count and the lengths (see LABELS_FILTER). */
function parseLabels(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  return raw.split(',').map((l) => l.trim()).filter((l) => l.length > 0);
}

export const ticketRoutes = (ctx: DomainContext): FastifyPluginAsyncTypebox =>
  async function tickets(app) {
    /** Reads (lists, boards, single tickets) are re-rendered only when a ticket of the org changed since (see ResponseCache). */
    const rendered = new ResponseCache();
    const keyOf = (request: FastifyRequest) => `${request.principal.org.id} ${request.url}`;
    /** The body as it is, or gzipped (kept with it) for a client that takes gzip. */
    const send = (request: FastifyRequest, reply: FastifyReply, kept: { key: string; version: number | string } | null, body: Buffer) => {
      reply.type('application/json; charset=utf-8').header('vary', 'accept-encoding');
      const gzip = kept && acceptsGzip(request.headers['accept-encoding']) ? rendered.gzipped(kept.key, kept.version) : null;
      if (gzip) reply.header('content-encoding', 'gzip').send(gzip);
      else reply.send(body);
    };
    /**
     * `version` null: rendered afresh, not kept. A body kept for `version` is sent at once, without
     * a promise (the steady case: returns undefined, as a handler that has sent must).
     */
    const sendRendered = (request: FastifyRequest, reply: FastifyReply, version: number | string | null, compute: () => Promise<unknown>): Promise<void> | undefined => {
      const kept = version === null ? null : { key: keyOf(request), version };
      const body = kept && rendered.get(kept.key, kept.version);
      if (body) {
        send(request, reply, kept, body);
        return undefined;
      }
      return compute().then((value) => {
        const fresh = Buffer.from(String(reply.serialize(value)));
        if (kept) rendered.set(kept.key, kept.version, fresh);
        send(request, reply, kept, fresh);
      });
    };
    const sendCached = (request: FastifyRequest, reply: FastifyReply, compute: () => Promise<unknown>): Promise<void> | undefined => {
      const version = service.ticketsVersion(ctx, request.principal.org.id);
      if (typeof version === 'number') return sendRendered(request, reply, version, compute);
      return version.then((known) => sendRendered(request, reply, known, compute));
    };

    app.get(
      '/tickets',
      {
        config: { scope: 'tickets:read' },
        schema: {
          tags,
          operationId: 'listTickets', summary: 'List tickets, newest first',
          params: OrgParams,
          querystring: s.ListTicketsQuery,
          response: { 200: s.TicketList, ...errorResponses() },
        },
      },
      (request, reply) =>
        sendCached(request, reply, async () => {
          const { limit = 20, offset = 0, labels, repository_id, status, type, assignee_id } = request.query;
          const used = clampLimit(limit, 100);
          const { rows, total } = await service.listTickets(ctx, request.principal.org.id, {
            limit: used,
            offset,
            labels: parseLabels(labels),
            repositoryId: repository_id,
            status,
            type,
            assigneeId: assignee_id,
          });
          return { tickets: rows.map(listItem), total, limit: used, offset };
        }),
    );

    app.get(
      '/tickets/board',
      {
        config: { scope: 'tickets:read' },
        schema: {
          tags,
          operationId: 'getTicketBoard', summary: 'The board: the five status columns in order, each with its total and top tickets',
          params: OrgParams,
          querystring: s.BoardQuery,
          response: { 200: s.Board, ...errorResponses() },
        },
      },
      (request, reply) =>
        sendCached(request, reply, async () => {
          const limit = clampLimit(request.query.limit_per_column ?? 100, 500);
          const columns = await service.ticketBoard(ctx, request.principal.org.id, limit, request.query.repository_id);
          return {
            board: {
              columns: columns.map((c) => ({
                status: c.status,
                total: c.total,
                tickets: c.tickets.map((t) => ({ ...t, priority: t.priority as TicketPriority, labels: JSON.parse(t.labels) as string[] })),
              })),
            },
          };
        }),
    );

    app.get(
      '/tickets/:slug',
      {
        config: { scope: 'tickets:read' },
        schema: {
          tags,
          operationId: 'getTicket', summary: 'Get a ticket (slugs match ignoring case)',
          params: s.TicketParams,
          response: { 200: s.TicketDetailEnvelope, ...errorResponses() },
        },
      },
      // Not against the ticket version: its pods change without the ticket changing.
      (request, reply) =>
        sendRendered(request, reply, ticketDetailVersion(ctx), async () => {
          const ticket = await service.getTicket(ctx, request.principal.org.id, request.params.slug);
          // The view's enums are the store's strings; the schema serializes what it declares.
          return { ticket: { ...detail(ticket), ...(await ticketWork(ctx, request.principal.org.id, ticket.slug)) } } as Static<typeof s.TicketDetailEnvelope>;
        }),
    );

    app.post(
      '/tickets',
      {
        config: { scope: 'tickets:write', idempotent: true },
        schema: {
          tags,
          operationId: 'createTicket', headers: IdempotencyHeaders, summary: 'Create a ticket',
          params: OrgParams,
          body: s.CreateTicketBody,
          response: { 201: s.TicketEnvelope, ...errorResponses(409) },
        },
      },
      // The answer is the ticket.created event's data, serialized once (docs/decisions.md "Storage and performance").
      async (request, reply) => {
        const { json } = await service.createTicketWithJson(ctx, request.principal.org, request.body);
        return (reply as FastifyReply).code(201).type('application/json; charset=utf-8').send(json);
      },
    );

    app.put(
      '/tickets/:slug',
      {
        config: { scope: 'tickets:write' },
        schema: {
          tags,
          operationId: 'updateTicket', summary: 'Update a ticket; only the given fields change, null clears assignee_id, parent_slug and description',
          params: s.TicketParams,
          body: s.UpdateTicketBody,
          response: { 200: s.TicketEnvelope, ...errorResponses() },
        },
      },
      async (request) => ({
        ticket: detail(await service.updateTicket(ctx, request.principal.org.id, request.params.slug, request.body)),
      }),
    );

    app.patch(
      '/tickets/:slug/status',
      {
        config: { scope: 'tickets:write' },
        schema: {
          tags,
          operationId: 'setTicketStatus', summary: `Set a ticket's status (${TICKET_STATUSES.join(', ')})`,
          params: s.TicketParams,
          body: s.StatusBody,
          response: { 200: MessageBody, ...errorResponses() },
        },
      },
      async (request) => {
        const ticket = await service.setTicketStatus(ctx, request.principal.org.id, request.params.slug, request.body.status);
        return { message: `Ticket ${ticket.slug} moved to ${ticket.status}.` };
      },
    );

    app.delete(
      '/tickets/:slug',
      {
        config: { scope: 'tickets:write' },
        schema: {
          tags,
          operationId: 'deleteTicket', summary: 'Delete a ticket permanently; its sub-tickets are detached, not deleted',
          params: s.TicketParams,
          response: { 200: MessageBody, ...errorResponses() },
        },
      },
      async (request) => {
        const slug = await service.deleteTicket(ctx, request.principal.org.id, request.params.slug);
        return { message: `Ticket ${slug} deleted.` };
      },
    );
  };
