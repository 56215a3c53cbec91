import { AppError, conflict, invalid, notFound } from '../../errors.ts';
import * as channels from '../../store/channels.ts';
import * as messages from '../../store/channel-messages.ts';
import { isUniqueViolation, type Executor } from '../../store/db.ts';
import { podBelongsToOrg } from '../../store/pods.ts';
import { findRepository } from '../../store/repositories.ts';
import type { ChannelMessageRow, ChannelRow, ChannelUpdate } from '../../store/schema.ts';
import { findTicketBySlug } from '../../store/tickets.ts';
import type { Principal } from '../auth/authenticate.ts';
import { recordEvent } from '../../events/writer.ts';
import { SYSTEM_ACTOR, actorJson, currentActor } from '../../events/actor.ts';
import type { DomainContext } from '../context.ts';
import { channelView, messageView } from './view.ts';
import { canonicalSlug } from '../tickets/model.ts';
import { MAX_CONTENT, channelNameKey, normalizeChannelName, type MessageAuthor } from './model.ts';

export interface CreateChannelInput {
  name: string;
  description?: string;
  repository_id?: number;
  ticket_slug?: string;
  document?: string;
}

export interface UpdateChannelInput {
  name?: string;
  description?: string | null;
  document?: string | null;
  archived?: boolean;
}

export interface ListChannelsInput {
  limit: number;
  offset: number;
  repositoryId?: number;
  ticketSlug?: string;
  includeArchived: boolean;
}

export interface PostMessageInput {
  content: string;
  pod_key?: string;
}

async function requireChannel(db: Executor, orgId: number, id: number): Promise<ChannelRow> {
  const channel = await channels.findChannel(db, orgId, id);
  if (!channel) throw notFound('channel');
  return channel;
}

const channelSubjects = (channel: ChannelRow) => ({ channel_id: channel.id, ticket_slug: channel.ticket_slug });

/** The unique index on (org_id, name_key) is the one arbiter of name clashes, races included. */
function rethrowNameTaken(error: unknown, name: string | undefined): never {
  if (name !== undefined && isUniqueViolation(error)) {
    throw new AppError('ALREADY_EXISTS', `a channel named "${name}" already exists (names are unique ignoring case and Unicode compatibility forms)`);
  }
  throw error;
}

export async function createChannel(ctx: DomainContext, orgId: number, input: CreateChannelInput): Promise<ChannelRow> {
  const name = normalizeChannelName(input.name);
  try {
    return await ctx.store.transaction(async (trx) => {
      if (input.repository_id !== undefined && !(await findRepository(trx, orgId, input.repository_id))) {
        throw invalid('/repository_id', 'must be the id of a repository of this organization');
      }
      let ticketSlug: string | null = null;
      if (input.ticket_slug !== undefined) {
        const ticket = await findTicketBySlug(trx, orgId, canonicalSlug(input.ticket_slug));
        if (!ticket) throw invalid('/ticket_slug', 'must be the slug of a ticket of this organization');
        ticketSlug = ticket.slug;
      }
      const now = ctx.now();
      const created = await channels.insertChannel(trx, {
        org_id: orgId,
        name,
        name_key: channelNameKey(name),
        description: input.description ?? null,
        repository_id: input.repository_id ?? null,
        ticket_slug: ticketSlug,
        document: input.document ?? null,
        archived: 0,
        created_at: now,
        updated_at: now,
      });
      await recordEvent(ctx, trx, orgId, 'channel.created', channelView(created), channelSubjects(created));
      return created;
    });
  } catch (error) {
    rethrowNameTaken(error, name);
  }
}

export async function getChannel(ctx: DomainContext, orgId: number, id: number): Promise<ChannelRow> {
  return requireChannel(ctx.store.db, orgId, id);
}

export async function listChannels(ctx: DomainContext, orgId: number, input: ListChannelsInput) {
  const { limit, offset, ...rest } = input;
  const filter: channels.ChannelFilter = { ...rest, ticketSlug: rest.ticketSlug === undefined ? undefined : canonicalSlug(rest.ticketSlug) };
  const [rows, total] = await Promise.all([
    channels.listChannels(ctx.store.db, orgId, filter, { limit, offset }),
    channels.countChannels(ctx.store.db, orgId, filter),
  ]);
  return { rows, total };
}

/** Only the given fields change; archived channels may be renamed, edited and unarchived. */
export async function updateChannel(ctx: DomainContext, orgId: number, id: number, input: UpdateChannelInput): Promise<ChannelRow> {
  const name = input.name === undefined ? undefined : normalizeChannelName(input.name);
  try {
    return await ctx.store.transaction(async (trx) => {
      const channel = await requireChannel(trx, orgId, id);
      const patch: ChannelUpdate = {};
      if (name !== undefined) {
        patch.name = name;
        patch.name_key = channelNameKey(name);
      }
      if (input.description !== undefined) patch.description = input.description;
      if (input.document !== undefined) patch.document = input.document;
      if (input.archived !== undefined) patch.archived = input.archived ? 1 : 0;
      if (Object.keys(patch).length === 0) return channel;
      patch.updated_at = ctx.now();
      const updated = await channels.updateChannel(trx, channel.id, patch);
      await recordEvent(ctx, trx, orgId, 'channel.updated', channelView(updated), channelSubjects(updated));
      return updated;
    });
  } catch (error) {
    rethrowNameTaken(error, name);
  }
}

/** A page of a channel's messages, most recent first; archived channels stay readable. */
export async function listMessages(
  ctx: DomainContext,
  orgId: number,
  channelId: number,
  page: messages.MessagePage,
): Promise<ChannelMessageRow[]> {
  const channel = await requireChannel(ctx.store.db, orgId, channelId);
  return messages.listMessages(ctx.store.db, channel.id, page);
}

/**
 * The author of a message posted over the API, from who is calling: an API key is `api`; a pod
 * token is `agent` with its own pod_key (a pod cannot speak for another pod).
 */
async function authorOf(db: Executor, principal: Principal, podKey: string | undefined): Promise<MessageAuthor> {
  switch (principal.kind) {
    case 'api_key':
      if (podKey !== undefined && !(await podBelongsToOrg(db, principal.org.id, podKey))) {
        throw invalid('/pod_key', 'must be a pod of this organization');
      }
      return { senderType: principal.user ? 'user' : 'api', podKey: podKey ?? null };
    case 'pod':
      if (podKey !== undefined && podKey !== principal.podKey) {
        throw invalid('/pod_key', "must be omitted or be the calling pod's own key");
      }
      return { senderType: 'agent', podKey: principal.podKey };
  }
}

/** POST /channels/:id/messages: the sender type comes from the principal, never from the body. */
export async function postMessage(
  ctx: DomainContext,
  principal: Principal,
  channelId: number,
  input: PostMessageInput,
): Promise<ChannelMessageRow> {
  const author = await authorOf(ctx.store.db, principal, input.pod_key);
  return appendMessage(ctx, principal.org.id, channelId, input.content, author);
}

/**
 * A message from the service itself (e.g. "pod p-… finished"), for other services to call; not
 * exposed over HTTP. `podKey` is trusted: callers pass pods they hold. Throws NOT_FOUND or
 * CHANNEL_ARCHIVED like an API post, so a background caller decides whether that matters.
 */
export async function postSystemMessage(
  ctx: DomainContext,
  orgId: number,
  channelId: number,
  content: string,
  podKey?: string,
): Promise<ChannelMessageRow> {
  if (content.length === 0 || content.length > MAX_CONTENT) throw invalid('/content', `must be 1 to ${MAX_CONTENT} characters`);
  return appendMessage(ctx, orgId, channelId, content, { senderType: 'system', podKey: podKey ?? null });
}

/**
 * Every message goes in here. On PostgreSQL the channel row is locked until commit, so ids of one
 * channel commit in order (an `after=<id>` poll never skips a late-committing message) and an
 * archive cannot slip in between the check and the insert.
 */
async function appendMessage(
  ctx: DomainContext,
  orgId: number,
  channelId: number,
  content: string,
  author: MessageAuthor,
): Promise<ChannelMessageRow> {
  return ctx.store.transaction(async (trx) => {
    const channel = await channels.findChannel(trx, orgId, channelId, { forUpdate: true });
    if (!channel) throw notFound('channel');
    if (channel.archived) throw conflict('CHANNEL_ARCHIVED', `channel "${channel.name}" is archived; unarchive it to post`);
    const message = await messages.insertMessage(trx, {
      org_id: orgId,
      channel_id: channel.id,
      content,
      sender_type: author.senderType,
      pod_key: author.podKey,
      sender: actorJson(author.senderType === 'system' ? SYSTEM_ACTOR : currentActor()),
      created_at: ctx.now(),
    });
    await recordEvent(ctx, trx, orgId, 'message.created', messageView(message), { channel_id: channel.id, pod_key: message.pod_key, ticket_slug: channel.ticket_slug });
    return message;
  });
}

/** `channel.updated` for channels another change has altered (their repository deleted), in its transaction. */
export async function recordChannelsUpdated(ctx: DomainContext, trx: Executor, orgId: number, ids: number[]): Promise<void> {
  for (const id of ids) {
    const channel = (await channels.findChannel(trx, orgId, id))!;
    await recordEvent(ctx, trx, orgId, 'channel.updated', channelView(channel), channelSubjects(channel));
  }
}
