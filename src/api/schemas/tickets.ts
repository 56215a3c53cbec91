import { Type, type Static } from 'typebox';
import { MAX_LABEL_LENGTH, MAX_LABELS } from '../../domain/tickets/model.ts';
import { TICKET_PRIORITIES, TICKET_STATUSES, TICKET_TYPES } from '../../protocol/enums.ts';
import { ActorOrNull, Id, Limit, NonBlank, Nullable, Offset, OrgParams, Text, Timestamp, explainedPattern } from './common.ts';

export const TicketType = Type.Enum(TICKET_TYPES);
export const TicketStatus = Type.Enum(TICKET_STATUSES);
export const TicketPriority = Type.Enum(TICKET_PRIORITIES);
const Title = NonBlank({ maxLength: 500 });
const Description = Text({ maxLength: 100_000 });
const Labels = Type.Array(Text({ minLength: 1, maxLength: MAX_LABEL_LENGTH }), { maxItems: MAX_LABELS });
const Slug = Text({ minLength: 1, maxLength: 80 });

/**
 * The `labels` filter: at most MAX_LABELS comma-separated labels, each at most MAX_LABEL_LENGTH
 * characters once the whitespace around it is trimmed; empty items are ignored. Written so that
 * every item matches one way only (no backtracking blow-up on a long refused value).
 */
const LABEL_ITEM = `\\s*(?:[^,\\s\\u0000](?:[^,\\u0000]{0,${MAX_LABEL_LENGTH - 2}}[^,\\s\\u0000])?\\s*)?`;
const LABELS_FILTER = explainedPattern(
  `^${LABEL_ITEM}(?:,${LABEL_ITEM}){0,${MAX_LABELS - 1}}$`,
  `must be at most ${MAX_LABELS} comma-separated labels of at most ${MAX_LABEL_LENGTH} characters each`,
);

const listFields = {
  id: Type.Integer(),
  slug: Type.String(),
  type: TicketType,
  title: Type.String(),
  status: TicketStatus,
  priority: TicketPriority,
  assignee_id: Nullable(Type.Integer()),
  repository_id: Nullable(Type.Integer()),
  labels: Type.Array(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const TicketListItem = Type.Object(listFields, { $id: 'TicketListItem' });
const detailFields = {
  ...listFields,
  description: Nullable(Type.String()),
  parent_slug: Nullable(Type.String()),
  created_by: ActorOrNull,
  updated_by: ActorOrNull,
};
export const Ticket = Type.Object(detailFields, { $id: 'Ticket' });
export const BoardTicket = Type.Object(
  {
    id: Type.Integer(),
    slug: Type.String(),
    title: Type.String(),
    type: TicketType,
    priority: TicketPriority,
    assignee_id: Nullable(Type.Integer()),
    labels: Type.Array(Type.String()),
  },
  { $id: 'BoardTicket' },
);

export const TicketEnvelope = Type.Object({ ticket: Type.Ref('Ticket') });
/** GET /tickets/:slug: the ticket with its pods and their work (docs/agents.md "Getting the work back"). */
export const TicketDetailEnvelope = Type.Object({
  ticket: Type.Object({
      ...detailFields,
      pods: Type.Array(
        Type.Object({ key: Type.String(), status: Type.String(), agent_slug: Type.String(), created_at: Timestamp, delivery: Type.Union([Type.Ref('Delivery'), Type.Null()]) }),
        { description: "the ticket's pods, newest first (at most 20)" },
      ),
      merge_requests: Type.Array(
        Type.Object({ id: Type.Integer(), url: Type.String(), state: Type.Enum(['opened', 'merged', 'closed']), branch: Type.String() }),
        { description: 'merge requests its pods opened, as their deliveries recorded them' },
      ),
  }),
});
export const TicketList = Type.Object({
  tickets: Type.Array(Type.Ref('TicketListItem')),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});
export const Board = Type.Object({
  board: Type.Object({
    columns: Type.Array(
      Type.Object({ status: TicketStatus, total: Type.Integer(), tickets: Type.Array(Type.Ref('BoardTicket')) }),
    ),
  }),
});

export const CreateTicketBody = Type.Object(
  {
    type: TicketType,
    title: Title,
    description: Type.Optional(Description),
    priority: Type.Optional(TicketPriority),
    status: Type.Optional(TicketStatus),
    assignee_id: Type.Optional(Id),
    repository_id: Type.Optional(Id),
    labels: Type.Optional(Labels),
    parent_slug: Type.Optional(Slug),
  },
  { additionalProperties: false },
);

export const UpdateTicketBody = Type.Object(
  {
    type: Type.Optional(TicketType),
    title: Type.Optional(Title),
    description: Type.Optional(Nullable(Description)),
    priority: Type.Optional(TicketPriority),
    status: Type.Optional(TicketStatus),
    assignee_id: Type.Optional(Nullable(Id)),
    labels: Type.Optional(Labels),
    parent_slug: Type.Optional(Nullable(Slug)),
  },
  { additionalProperties: false },
);

export const StatusBody = Type.Object({ status: TicketStatus }, { additionalProperties: false });

export const ListTicketsQuery = Type.Object(
  {
    repository_id: Type.Optional(Id),
    status: Type.Optional(TicketStatus),
    type: Type.Optional(TicketType),
    assignee_id: Type.Optional(Id),
    labels: Type.Optional(
      Type.String({
        maxLength: MAX_LABELS * (MAX_LABEL_LENGTH + 1),
        pattern: LABELS_FILTER,
        description: `comma-separated, at most ${MAX_LABELS} labels of at most ${MAX_LABEL_LENGTH} characters (trimmed); tickets must have all of them`,
      }),
    ),
    limit: Type.Optional(Limit(20, 100)),
    offset: Type.Optional(Offset),
  },
  { additionalProperties: false },
);

export const BoardQuery = Type.Object(
  {
    repository_id: Type.Optional(Id),
    limit_per_column: Type.Optional(Limit(100, 500)),
  },
  { additionalProperties: false },
);

export const TicketParams = Type.Object({ ...OrgParams.properties, slug: Slug });

export type CreateTicketBody = Static<typeof CreateTicketBody>;
export type UpdateTicketBody = Static<typeof UpdateTicketBody>;
