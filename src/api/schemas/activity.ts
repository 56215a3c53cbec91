import { Type } from 'typebox';
import { ACTOR_TYPES } from '../../events/actor.ts';
import { ActorOrNull, Nullable, Text, Timestamp } from './common.ts';

export const ActivityQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ format: 'date-time', description: 'events at or after this time' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'events before this time' })),
    types: Type.Optional(Text({ maxLength: 1000, description: 'comma-separated event types or families (`pod.*`); default: every type the key may read' })),
    actor_type: Type.Optional(Type.Enum([...ACTOR_TYPES], { description: 'only changes made by this kind of actor' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'default 50' })),
    cursor: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,15}$', description: 'next_cursor of the previous page' })),
  },
  { additionalProperties: false },
);

export const ActivityPage = Type.Object({
  events: Type.Array(
    Type.Object({
      id: Type.Integer(),
      type: Type.String(),
      created_at: Timestamp,
      actor: ActorOrNull,
      data: Type.Unknown({ description: 'the resource as the event stream carries it (`{"ticket": {…}}`, …)' }),
    }),
  ),
  next_cursor: Nullable(Type.String({ description: 'pass as cursor for the next (older) page; null on the last page' })),
});
