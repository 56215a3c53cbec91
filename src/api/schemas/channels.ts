import { Type, type Static } from 'typebox';
import { CHANNEL_LIST_LIMIT, CHANNEL_NAME_MAX, CHANNEL_NAME_MIN, MAX_CONTENT, MAX_DESCRIPTION, MAX_DOCUMENT, MESSAGE_LIMIT } from '../../domain/channels/model.ts';
import { SENDER_TYPES } from '../../protocol/enums.ts';
import { ActorOrNull, Limit, NonBlank, Nullable, OrgParams, QueryBoolean, Text, Timestamp } from './common.ts';

/** Ids bounded to what a JSON number holds exactly, so a huge id is a 400 rather than a database error. */
const RowId = (description?: string) =>
  Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, ...(description === undefined ? {} : { description }) });
const Name = NonBlank({
  minLength: CHANNEL_NAME_MIN,
  maxLength: CHANNEL_NAME_MAX,
  description:
    'Stored NFKC-normalized and trimmed, and unique per organization in that form ignoring case (`ſecret`, `ｓecret` and `Secret ` are `secret`); ' +
    'control, format and other invisible characters (Unicode Cc, Cf, Zl, Zp, default-ignorable) are refused, and the normalized name must still be 2 to 100 characters',
});
const Description = Text({ maxLength: MAX_DESCRIPTION });
const Document = Text({
  maxLength: MAX_DOCUMENT,
  description: 'Initial document or context for the channel (at most as long as a 1 MiB body can hold, whatever its characters)',
});
const TicketSlug = Text({ minLength: 1, maxLength: 80 });
/** Pod keys: lowercase letters, digits and `-`, at most 64 characters (docs/api.md). */
const PodKey = Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9-]+$' });

const listFields = {
  id: Type.Integer(),
  name: Type.String(),
  description: Nullable(Type.String()),
  repository_id: Nullable(Type.Integer()),
  ticket_slug: Nullable(Type.String()),
  archived: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const ChannelListItem = Type.Object(listFields, { $id: 'ChannelListItem' });
export const Channel = Type.Object({ ...listFields, document: Nullable(Type.String()) }, { $id: 'Channel' });
export const ChannelMessage = Type.Object(
  {
    id: Type.Integer(),
    channel_id: Type.Integer(),
    content: Type.String(),
    sender_type: Type.Enum(SENDER_TYPES, { description: "api: an API key of no one; user: a person's API key; agent: a pod token; system: the service itself" }),
    sender: ActorOrNull,
    pod_key: Nullable(Type.String()),
    created_at: Timestamp,
  },
  { $id: 'ChannelMessage' },
);

/** Shared schemas, registered once with `app.addSchema`. */
export const SHARED_SCHEMAS = [ChannelListItem, Channel, ChannelMessage];

export const ChannelEnvelope = Type.Object({ channel: Type.Ref('Channel') });
export const ChannelList = Type.Object({
  channels: Type.Array(Type.Ref('ChannelListItem')),
  total: Type.Integer({ description: 'channels matching the filters, across all pages' }),
  limit: Type.Integer({ description: 'the page size used' }),
  offset: Type.Integer(),
});
export const MessageEnvelope = Type.Object({ message: Type.Ref('ChannelMessage') });
export const MessageList = Type.Object({ messages: Type.Array(Type.Ref('ChannelMessage')) });

export const CreateChannelBody = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    repository_id: Type.Optional(RowId()),
    ticket_slug: Type.Optional(TicketSlug),
    document: Type.Optional(Document),
  },
  { additionalProperties: false },
);

export const UpdateChannelBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Nullable(Description)),
    document: Type.Optional(Nullable(Document)),
    archived: Type.Optional(Type.Boolean({ description: 'true archives the channel, false unarchives it' })),
  },
  { additionalProperties: false },
);

export const PostMessageBody = Type.Object(
  {
    content: Text({ minLength: 1, maxLength: MAX_CONTENT }),
    pod_key: Type.Optional(PodKey),
  },
  { additionalProperties: false },
);

export const ListChannelsQuery = Type.Object(
  {
    repository_id: Type.Optional(RowId()),
    ticket_slug: Type.Optional(Text({ maxLength: 80, description: 'matched ignoring case' })),
    include_archived: Type.Optional(QueryBoolean),
    limit: Type.Optional(Limit(CHANNEL_LIST_LIMIT.default, CHANNEL_LIST_LIMIT.max)),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 })),
  },
  { additionalProperties: false },
);

export const ListMessagesQuery = Type.Object(
  {
    limit: Type.Optional(Limit(MESSAGE_LIMIT.default, MESSAGE_LIMIT.max)),
    before: Type.Optional(RowId('only messages older than this message id')),
    after: Type.Optional(
      RowId('only messages newer than this message id; the page then holds the oldest of those (to poll and page forward)'),
    ),
  },
  { additionalProperties: false },
);

export const ChannelParams = Type.Object({ ...OrgParams.properties, id: RowId() });

export type CreateChannelBody = Static<typeof CreateChannelBody>;
export type UpdateChannelBody = Static<typeof UpdateChannelBody>;
