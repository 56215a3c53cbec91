import type { ChannelMessagesTable } from '../../store/schema.ts';

/**
 * Who sent a message: `api` (an API key), `agent` (a pod token, with its pod) or `system`
 * (the service itself, e.g. "pod p-… finished").
 */
export const SENDER_TYPES = ['api', 'agent', 'system'] as const satisfies readonly ChannelMessagesTable['sender_type'][];
export type SenderType = (typeof SENDER_TYPES)[number];

/** A message's author as stored: its sender type and the pod it speaks for, if any. */
export interface MessageAuthor {
  senderType: SenderType;
  podKey: string | null;
}

export const CHANNEL_NAME_MIN = 2;
export const CHANNEL_NAME_MAX = 100;
/**
 * Size caps (characters). Bodies are at most 1 MiB, and a character takes at most 6 bytes in a JSON
 * body written as UTF-8 (a control character is escaped as \u00XX; a 4-byte character counts as
 * one character), so a create or update body holding every field at its maximum, written in any
 * characters, fits in 1 MiB: a valid document is never refused as too large (413).
 */
export const MAX_DESCRIPTION = 10_000;
export const MAX_DOCUMENT = 160_000;
export const MAX_CONTENT = 100_000;

/**
 * GET /channels pages with limit/offset: default 100 = max 100, so most organizations get every
 * channel in one answer (the spec shows the list unpaged) while a huge org cannot ask for all at once.
 */
export const CHANNEL_LIST_LIMIT = { default: 100, max: 100 } as const;
/** GET /channels/:id/messages: contract §1 page sizes. */
export const MESSAGE_LIMIT = { default: 50, max: 100 } as const;

/** Names are unique per org ignoring case; this is the form the unique index holds. */
export const channelNameKey = (name: string): string => name.toLowerCase();
