import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CHANNEL_LIST_LIMIT, MESSAGE_LIMIT } from '../../domain/channels/model.ts';
import * as service from '../../domain/channels/service.ts';
import type { DomainContext } from '../../domain/context.ts';
import { channelListItem as listItem, channelView as detail, messageView as message } from '../../domain/channels/view.ts';
import { IdempotencyHeaders, OrgParams, clampLimit, errorResponses, isTrue } from '../schemas/common.ts';
import * as s from '../schemas/channels.ts';

const tags = ['Channels'];

export const channelRoutes = (ctx: DomainContext): FastifyPluginAsyncTypebox =>
  async function channels(app) {
    app.get(
      '/channels',
      {
        config: { scope: 'channels:read' },
        schema: {
          tags,
          operationId: 'listChannels', summary: 'List channels, newest first, without their documents; archived ones only with include_archived=true',
          params: OrgParams,
          querystring: s.ListChannelsQuery,
          response: { 200: s.ChannelList, ...errorResponses() },
        },
      },
      async (request) => {
        const { limit = CHANNEL_LIST_LIMIT.default, offset = 0, repository_id, ticket_slug, include_archived } = request.query;
        const used = clampLimit(limit, CHANNEL_LIST_LIMIT.max);
        const { rows, total } = await service.listChannels(ctx, request.principal.org.id, {
          limit: used,
          offset,
          repositoryId: repository_id,
          ticketSlug: ticket_slug,
          includeArchived: isTrue(include_archived),
        });
        return { channels: rows.map(listItem), total, limit: used, offset };
      },
    );

    app.get(
      '/channels/:id',
      {
        config: { scope: 'channels:read' },
        schema: {
          tags,
          operationId: 'getChannel', summary: 'Get a channel with its document',
          params: s.ChannelParams,
          response: { 200: s.ChannelEnvelope, ...errorResponses() },
        },
      },
      async (request) => ({ channel: detail(await service.getChannel(ctx, request.principal.org.id, request.params.id)) }),
    );

    app.post(
      '/channels',
      {
        config: { scope: 'channels:write', idempotent: true },
        schema: {
          tags,
          operationId: 'createChannel', headers: IdempotencyHeaders, summary: 'Create a channel; names are unique per organization ignoring case',
          params: OrgParams,
          body: s.CreateChannelBody,
          response: { 201: s.ChannelEnvelope, ...errorResponses(409) },
        },
      },
      async (request, reply) => {
        const channel = await service.createChannel(ctx, request.principal.org.id, request.body);
        return reply.code(201).send({ channel: detail(channel) });
      },
    );

    app.put(
      '/channels/:id',
      {
        config: { scope: 'channels:write' },
        schema: {
          tags,
          operationId: 'updateChannel', summary: 'Update a channel; only the given fields change, null clears description and document, archived archives or unarchives',
          params: s.ChannelParams,
          body: s.UpdateChannelBody,
          response: { 200: s.ChannelEnvelope, ...errorResponses(409) },
        },
      },
      async (request) => ({
        channel: detail(await service.updateChannel(ctx, request.principal.org.id, request.params.id, request.body)),
      }),
    );

    app.get(
      '/channels/:id/messages',
      {
        config: { scope: 'channels:read' },
        schema: {
          tags,
          operationId: 'listChannelMessages', summary: 'List messages, most recent first; page with before/after message ids',
          params: s.ChannelParams,
          querystring: s.ListMessagesQuery,
          response: { 200: s.MessageList, ...errorResponses() },
        },
      },
      async (request) => {
        const { limit = MESSAGE_LIMIT.default, before, after } = request.query;
        const rows = await service.listMessages(ctx, request.principal.org.id, request.params.id, {
          limit: clampLimit(limit, MESSAGE_LIMIT.max),
          before,
          after,
        });
        return { messages: rows.map(message) };
      },
    );

    app.post(
      '/channels/:id/messages',
      {
        config: { scope: 'channels:write', idempotent: true },
        schema: {
          tags,
          operationId: 'postChannelMessage', headers: IdempotencyHeaders, summary: 'Send a message; its sender_type comes from the caller (an API key sends as api)',
          params: s.ChannelParams,
          body: s.PostMessageBody,
          response: { 201: s.MessageEnvelope, ...errorResponses(409) },
        },
      },
      async (request, reply) => {
        const row = await service.postMessage(ctx, request.principal, request.params.id, request.body);
        return reply.code(201).send({ message: message(row) });
      },
    );
  };
