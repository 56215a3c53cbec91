/** The ticket tools (docs/mcp.md): search, get, create, update, set status. */
import { z } from 'zod';
import { TICKET_PRIORITIES, TICKET_STATUSES, TICKET_TYPES } from '../../protocol/enums.ts';
import { tool } from '../tool.ts';

const slug = z.string().min(1).max(80).describe('the ticket slug, e.g. ENG-12');
const labels = z.array(z.string().min(1).max(50)).max(20);

export const ticketTools = [
  tool({
    name: 'ticket_search',
    title: 'Search tickets',
    description: 'Tickets, newest first, filtered by status, type and labels (tickets having all of them); default 20, at most 100.',
    input: {
      status: z.enum(TICKET_STATUSES).optional(),
      labels: labels.optional().describe('tickets having all of these labels'),
      type: z.enum(TICKET_TYPES).optional(),
      limit: z.number().int().min(1).max(100).optional().describe('how many (default 20, at most 100)'),
    },
    scope: 'tickets:read',
    async run(args, { client }) {
      const query = { status: args.status, type: args.type, labels: args.labels?.length ? args.labels.join(',') : undefined, limit: args.limit };
      return client.call(client.api.GET('/api/v1/ext/orgs/{org}/tickets', { params: { path: client.path, query } }));
    },
  }),
  tool({
    name: 'ticket_get',
    title: 'Get a ticket',
    description: 'One ticket with its description.',
    input: { slug },
    scope: 'tickets:read',
    async run(args, { client }) {
      return client.call(client.api.GET('/api/v1/ext/orgs/{org}/tickets/{slug}', { params: { path: { ...client.path, slug: args.slug } } }));
    },
  }),
  tool({
    name: 'ticket_create',
    title: 'Create a ticket',
    description: 'Creates a ticket; answers it with its slug.',
    input: {
      type: z.enum(TICKET_TYPES),
      title: z.string().min(1).describe('a short title'),
      description: z.string().optional().describe('the details, Markdown'),
      priority: z.enum(TICKET_PRIORITIES).optional().describe('default medium'),
      parent_slug: slug.optional().describe('the parent ticket'),
      labels: labels.optional(),
    },
    scope: 'tickets:write',
    async run(args, { client }) {
      return client.call(client.api.POST('/api/v1/ext/orgs/{org}/tickets', { params: { path: client.path }, body: args }));
    },
  }),
  tool({
    name: 'ticket_update',
    title: 'Update a ticket',
    description: 'Changes the given fields of a ticket (the others stay); null clears description and parent_slug.',
    input: {
      slug,
      title: z.string().min(1).optional(),
      description: z.string().nullable().optional(),
      type: z.enum(TICKET_TYPES).optional(),
      priority: z.enum(TICKET_PRIORITIES).optional(),
      status: z.enum(TICKET_STATUSES).optional(),
      labels: labels.optional().describe('replaces the labels'),
      parent_slug: slug.nullable().optional(),
      assignee_id: z.number().int().positive().nullable().optional().describe('a user of the organization; null unassigns'),
    },
    scope: 'tickets:write',
    async run({ slug: ticket, ...body }, { client }) {
      return client.call(client.api.PUT('/api/v1/ext/orgs/{org}/tickets/{slug}', { params: { path: { ...client.path, slug: ticket } }, body }));
    },
  }),
  tool({
    name: 'ticket_set_status',
    title: "Set a ticket's status",
    description: 'Moves a ticket to another column of the board.',
    input: { slug, status: z.enum(TICKET_STATUSES) },
    scope: 'tickets:write',
    async run(args, { client }) {
      return client.call(
        client.api.PATCH('/api/v1/ext/orgs/{org}/tickets/{slug}/status', { params: { path: { ...client.path, slug: args.slug } }, body: { status: args.status } }),
      );
    },
  }),
];
