import { Type } from 'typebox';
import { EVENT_FAMILIES, EVENT_SCOPES } from '../../protocol/event-types.ts';
import { Text } from './common.ts';

const TYPES_LIST = Object.entries(EVENT_SCOPES)
  .map(([type, scope]) => `${type} (${scope})`)
  .join(', ');

export const EventsQuery = Type.Object(
  {
    types: Type.Optional(
      Text({
        maxLength: 1000,
        description: `Comma-separated event types; \`family.*\` selects a family (${EVENT_FAMILIES.map((f) => `${f}.*`).join(', ')}). Default: every type the key's scopes allow. Types: ${TYPES_LIST}. A type the key may not receive is 403, an unknown one 400.`,
      }),
    ),
    channel_id: Type.Optional(Type.Integer({ minimum: 1, description: 'Only events about this channel (its channel, messages and pods)' })),
    pod_key: Type.Optional(Text({ maxLength: 200, description: 'Only events about this pod (the pod, its messages, its run)' })),
    loop_slug: Type.Optional(Text({ maxLength: 200, description: 'Only events about this loop (the loop and its runs)' })),
    ticket_slug: Type.Optional(Text({ maxLength: 200, description: 'Only events about this ticket (the ticket, its channels, messages and pods)' })),
    last_event_id: Type.Optional(Type.Integer({ minimum: 0, description: 'Resume after this event id (as the Last-Event-ID header; the header wins)' })),
  },
  { additionalProperties: false },
);

export const EventsHeaders = Type.Object({
  'last-event-id': Type.Optional(Type.String({ pattern: '^[0-9]{1,15}$', description: 'Resume after this event id: the events after it are replayed, then the stream goes live' })),
});

export const OutputStreamQuery = Type.Object(
  { offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Byte offset to start from (default 0; clamped to what is kept)' })) },
  { additionalProperties: false },
);

/** The response of an SSE endpoint, for the OpenAPI document. */
export const eventStreamResponse = (description: string) => ({
  description,
  content: { 'text/event-stream': { schema: Type.String({ description }) } },
});
