/** The channel tools (docs/mcp.md): list, read, post, wait, and the channel's shared document. */
import { z } from 'zod';
import { channelOf, tool } from '../tool.ts';
import { waitForMessages } from '../waits.ts';

const channelId = z.number().int().positive().optional().describe("the channel's id; default: this pod's channel (DROVER_CHANNEL_ID)");
const messageId = (what: string) => z.number().int().positive().optional().describe(what);

export const channelTools = [
  tool({
    name: 'channel_list',
    title: 'List channels',
    description: "The organization's channels (not archived), newest first: id, name, description.",
    input: {},
    scope: 'channels:read',
    async run(_args, { client }) {
      return client.call(client.api.GET('/api/v1/ext/orgs/{org}/channels', { params: { path: client.path } }));
    },
  }),
  tool({
    name: 'channel_read',
    title: 'Read channel messages',
    description:
      "A channel's messages, most recent first (default 50, at most 100). `before` pages to older messages; `after` gives the messages newer than that id (the oldest of them first in the page).",
    input: {
      channel_id: channelId,
      limit: z.number().int().min(1).max(100).optional().describe('how many messages (default 50, at most 100)'),
      before: messageId('only messages older than this message id'),
      after: messageId('only messages newer than this message id'),
    },
    scope: 'channels:read',
    async run(args, { client, env }) {
      const id = channelOf(args, env);
      const query = { limit: args.limit, before: args.before, after: args.after };
      return client.call(client.api.GET('/api/v1/ext/orgs/{org}/channels/{id}/messages', { params: { path: { ...client.path, id }, query } }));
    },
  }),
  tool({
    name: 'channel_post',
    title: 'Post to a channel',
    description: 'Posts a message to a channel (1 to 100,000 characters). Inside a pod it is sent as the agent (sender_type "agent", with the pod key).',
    input: { channel_id: channelId, content: z.string().min(1).max(100_000).describe('the message, Markdown') },
    scope: 'channels:write',
    async run(args, { client, env }) {
      const id = channelOf(args, env);
      return client.call(client.api.POST('/api/v1/ext/orgs/{org}/channels/{id}/messages', { params: { path: { ...client.path, id } }, body: { content: args.content } }));
    },
  }),
  tool({
    name: 'channel_wait',
    title: 'Wait for channel messages',
    description:
      'Waits for the next messages of a channel: those newer than `after` (default: the latest message when the call starts). ' +
      'Answers as soon as there is at least one ({"messages": [...], "timed_out": false}, most recent first, at most 100), ' +
      'or {"messages": [], "timed_out": true} after timeout_sec (default 60, at most 300).',
    input: {
      channel_id: channelId,
      after: messageId('wait for messages newer than this message id (default: the latest message now)'),
      timeout_sec: z.number().int().min(1).max(300).optional().describe('how long to wait, in seconds (default 60, at most 300)'),
    },
    scope: 'channels:read',
    async run(args, { client, env }, signal) {
      const id = channelOf(args, env);
      return { value: await waitForMessages(client, id, args.after, (args.timeout_sec ?? 60) * 1000, signal) };
    },
  }),
  tool({
    name: 'channel_document_get',
    title: "Read a channel's document",
    description: "The channel's shared document (Markdown; null when it has none), with the channel's id and name.",
    input: { channel_id: channelId },
    scope: 'channels:read',
    async run(args, { client, env }) {
      const id = channelOf(args, env);
      const { data } = await client.call(client.api.GET('/api/v1/ext/orgs/{org}/channels/{id}', { params: { path: { ...client.path, id } } }));
      return { value: { channel_id: data.channel.id, name: data.channel.name, document: data.channel.document } };
    },
  }),
  tool({
    name: 'channel_document_update',
    title: "Replace a channel's document",
    description: "Replaces the channel's shared document (Markdown) with `document`; answers the channel.",
    input: { channel_id: channelId, document: z.string().describe('the whole new document') },
    scope: 'channels:write',
    async run(args, { client, env }) {
      const id = channelOf(args, env);
      return client.call(client.api.PUT('/api/v1/ext/orgs/{org}/channels/{id}', { params: { path: { ...client.path, id } }, body: { document: args.document } }));
    },
  }),
];
