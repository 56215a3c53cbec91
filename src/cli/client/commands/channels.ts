import fs from 'node:fs';
import { ORG_BASE, type DroverClient, type Schemas } from '../../../client/index.ts';
import { followEvents } from '../../../client/sse.ts';
import { EXIT, UsageError, defined, pageOptions, pageQuery, read, toInteger, type Command, type CommandContext, type Parsed } from '../framework.ts';
import { pageNote, record, show, streamLine, table, when, type Column } from '../output.ts';
import { Names, actorName, namesFor, pickedId } from '../names.ts';
import { RAW_TEXT_OPTION } from '../terminal.ts';

type Message = Schemas['ChannelMessage'];

const channelColumns = (names: Names): Column<Schemas['ChannelListItem']>[] => [
  { header: 'ID', value: (c) => c.id },
  { header: 'NAME', value: (c) => c.name, max: 40 },
  { header: 'ARCHIVED', value: (c) => (c.archived ? 'yes' : 'no') },
  { header: 'TICKET', value: (c) => c.ticket_slug },
  { header: 'REPO', value: (c) => names.name('repository', c.repository_id) },
  { header: 'UPDATED', value: (c) => when(c.updated_at) },
  { header: 'DESCRIPTION', value: (c) => c.description, max: 40 },
];

/** A channel's record (its repository by name), its document (which can be long) after it. */
const showChannel =
  (names: Names) =>
  ({ channel }: { channel: Schemas['Channel'] }): string => {
    const { document, ...rest } = channel;
    return record({ ...rest, repository_id: names.label('repository', rest.repository_id) }) + (document ? `\n${document.replace(/\n*$/, '\n')}` : '');
  };

/** One message; the lines of a multi-line message after the first are indented. */
const line = (m: Message) => `#${m.id}  ${when(m.created_at)}  ${sender(m)}: ${m.content.replace(/\n/g, '\n    ')}\n`;

/** Who wrote a message: the person, the key's name, the agent's pod, or `system` (older messages: their sender type). */
function sender(m: Pick<Message, 'sender_type' | 'pod_key'> & { sender?: Message['sender'] }): string {
  if (!m.sender) return `${m.sender_type}${m.pod_key ? ` (${m.pod_key})` : ''}`;
  if (m.sender.type === 'pod') return `agent (${String(m.sender.id)})`;
  return actorName(m.sender) ?? m.sender_type;
}

const channelId = (p: Parsed) => toInteger('ID', p.positionals[0], 1);
const idPath = (client: DroverClient, p: Parsed) => ({ ...client.path, id: channelId(p) });

/** `--document TEXT` or `--document-file FILE` (`-` for stdin). */
async function documentOf(ctx: CommandContext, p: Parsed, clearable: boolean): Promise<string | null | undefined> {
  const text = read.string(p, 'document');
  const file = read.string(p, 'document-file');
  if (text !== undefined && file !== undefined) throw new UsageError('give --document or --document-file, not both');
  if (file === '-') return ctx.readStdin();
  if (file !== undefined) {
    try {
      return fs.readFileSync(file, 'utf8');
    } catch (error) {
      throw new UsageError(`--document-file: ${(error as Error).message}`);
    }
  }
  return clearable && text === 'none' ? null : text;
}

const documentOptions = {
  document: { type: 'string', value: 'TEXT', description: 'the channel document (shared context)' },
  'document-file': { type: 'string', value: 'FILE', description: 'the document from a file ("-": stdin)' },
} as const;

/**
 * `channels tail`: the last messages, then new ones as they are posted (the event stream). The
 * stream is opened first and messages already printed are skipped, so none is missed or doubled.
 */
async function tail(ctx: CommandContext, client: DroverClient, id: number, backlog: number): Promise<number> {
  const controller = new AbortController();
  ctx.signal.addEventListener('abort', () => controller.abort(), { once: true });
  const events = followEvents(client, { types: 'message.created', channel_id: id }, {
    signal: controller.signal,
    onRetry: (reason, ms) => ctx.err.write(`drover: ${reason}; reconnecting in ${ms / 1000} s\n`),
  });
  const first = events.next(); // connects; events queue up while the backlog is read
  first.catch(() => undefined); // awaited below; a refusal must not count as unhandled meanwhile
  let newest = 0;
  const print = (m: Message) => {
    if (m.id <= newest) return;
    newest = m.id;
    streamLine(ctx, m, () => line(m));
  };
  if (backlog > 0) {
    const { data } = await client.call(client.api.GET(`${ORG_BASE}/channels/{id}/messages`, { params: { path: { ...client.path, id }, query: { limit: backlog } } }));
    for (const m of [...data.messages].reverse()) print(m);
  }
  for (let next = await first; !next.done; next = await events.next()) {
    const event = next.value;
    if (event.type === 'message.created' && 'data' in event) print(event.data.message as Message);
  }
  return EXIT.OK;
}

export const channelCommands: Command[] = [
  {
    name: 'channels list',
    summary: 'List channels, newest first (archived ones with --archived).',
    options: {
      repository: { type: 'string', value: 'NAME|ID', description: 'only channels of this repository' },
      ticket: { type: 'string', value: 'SLUG', description: 'only channels of this ticket' },
      archived: { type: 'boolean', description: 'include archived channels' },
      ...pageOptions('default 100, at most 100'),
    },
    examples: ['drover channels list', 'drover channels list --ticket ACME-12 --archived'],
    async run(ctx, p) {
      const client = ctx.client();
      const query = defined({
        repository_id: await pickedId(new Names(client), p, 'repository', 'repository'),
        ticket_slug: read.string(p, 'ticket'),
        include_archived: read.flag(p, 'archived') ? ('true' as const) : undefined,
        ...pageQuery(p),
      });
      const answer = await client.call(client.api.GET(`${ORG_BASE}/channels`, { params: { path: client.path, query } }));
      const names = await namesFor(ctx, 'repository');
      show(ctx, answer, (d) => table(d.channels, channelColumns(names), 'No channels.') + pageNote(d.channels.length, d.total, d.offset, 'channels'));
    },
  },
  {
    name: 'channels get',
    summary: 'Show a channel and its document.',
    args: ['ID'],
    examples: ['drover channels get 4'],
    async run(ctx, p) {
      const client = ctx.client();
      const answer = await client.call(client.api.GET(`${ORG_BASE}/channels/{id}`, { params: { path: idPath(client, p) } }));
      show(ctx, answer, showChannel(await namesFor(ctx, 'repository')));
    },
  },
  {
    name: 'channels create',
    summary: 'Create a channel.',
    options: {
      name: { type: 'string', value: 'NAME', description: 'name, 2–100 characters, unique in the organization; required' },
      description: { type: 'string', value: 'TEXT', description: 'description' },
      repository: { type: 'string', value: 'NAME|ID', description: 'the repository it is about' },
      ticket: { type: 'string', value: 'SLUG', description: 'the ticket it is about' },
      ...documentOptions,
    },
    examples: ["drover channels create --name 'Bug ACME-12' --ticket ACME-12 --document-file notes.md"],
    async run(ctx, p) {
      const client = ctx.client();
      const name = read.string(p, 'name');
      if (name === undefined) throw new UsageError('--name is required');
      const body = defined({
        name,
        description: read.string(p, 'description'),
        repository_id: await pickedId(new Names(client), p, 'repository', 'repository'),
        ticket_slug: read.string(p, 'ticket'),
        document: (await documentOf(ctx, p, false)) ?? undefined,
      });
      const created = await client.call(client.api.POST(`${ORG_BASE}/channels`, { params: { path: client.path }, body }));
      show(ctx, created, showChannel(await namesFor(ctx, 'repository')));
    },
  },
  {
    name: 'channels update',
    summary: 'Change a channel: only the given fields change.',
    args: ['ID'],
    options: {
      name: { type: 'string', value: 'NAME', description: 'new name' },
      description: { type: 'string', value: 'TEXT', description: 'new description ("none" clears it)' },
      ...documentOptions,
      archive: { type: 'boolean', description: 'archive the channel' },
      unarchive: { type: 'boolean', description: 'unarchive the channel' },
    },
    notes: ['--document none clears the document.'],
    examples: ['drover channels update 4 --document-file notes.md', 'drover channels update 4 --archive'],
    async run(ctx, p) {
      const client = ctx.client();
      if (read.flag(p, 'archive') && read.flag(p, 'unarchive')) throw new UsageError('give --archive or --unarchive, not both');
      const body = defined({
        name: read.string(p, 'name'),
        description: read.stringOrNone(p, 'description'),
        document: await documentOf(ctx, p, true),
        archived: read.flag(p, 'archive') ? true : read.flag(p, 'unarchive') ? false : undefined,
      });
      const updated = await client.call(client.api.PUT(`${ORG_BASE}/channels/{id}`, { params: { path: idPath(client, p) }, body }));
      show(ctx, updated, showChannel(await namesFor(ctx, 'repository')));
    },
  },
  {
    name: 'channels messages',
    summary: 'Show messages of a channel, oldest of the page first.',
    args: ['ID'],
    options: {
      limit: { type: 'string', value: 'N', description: 'how many (default 50, at most 100)' },
      before: { type: 'string', value: 'MESSAGE_ID', description: 'only older than this message' },
      after: { type: 'string', value: 'MESSAGE_ID', description: 'only newer than this message' },
      raw: RAW_TEXT_OPTION,
    },
    examples: ['drover channels messages 4', 'drover channels messages 4 --before 120 --limit 100'],
    async run(ctx, p) {
      const client = ctx.client();
      const query = defined({ limit: read.integer(p, 'limit', 1), before: read.integer(p, 'before', 1), after: read.integer(p, 'after', 1) });
      const answer = await client.call(client.api.GET(`${ORG_BASE}/channels/{id}/messages`, { params: { path: idPath(client, p), query } }));
      show(ctx, answer, (d) => (d.messages.length === 0 ? 'No messages.\n' : [...d.messages].reverse().map(line).join('')));
    },
  },
  {
    name: 'channels post',
    summary: 'Post a message to a channel.',
    args: ['ID', 'MESSAGE'],
    options: { pod: { type: 'string', value: 'KEY', description: 'the pod the message is about' } },
    notes: ['MESSAGE "-" reads the message from stdin.'],
    examples: ["drover channels post 4 'Deploy is done'", 'git log -1 | drover channels post 4 -'],
    async run(ctx, p) {
      const client = ctx.client();
      const content = p.positionals[1] === '-' ? await ctx.readStdin() : p.positionals[1];
      const body = defined({ content, pod_key: read.string(p, 'pod') });
      show(ctx, await client.call(client.api.POST(`${ORG_BASE}/channels/{id}/messages`, { params: { path: idPath(client, p) }, body })), (d) => line(d.message));
    },
  },
  {
    name: 'channels tail',
    summary: 'Print the last messages of a channel, then new ones as they are posted, until interrupted.',
    args: ['ID'],
    options: { last: { type: 'string', value: 'N', description: 'how many earlier messages to show first (default 10, 0 for none)' }, raw: RAW_TEXT_OPTION },
    notes: ['Follows the event stream (GET /events); with --json each message is one JSON line.'],
    examples: ['drover channels tail 4', 'drover channels tail 4 --last 0 --json'],
    async run(ctx, p) {
      return tail(ctx, ctx.client(), channelId(p), read.integer(p, 'last') ?? 10);
    },
  },
];
