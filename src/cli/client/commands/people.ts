/**
 * Who is who, who did what, and what a team shares (docs/cli.md "People and activity"):
 * `drover whoami`, `drover activity` (GET /activity), `drover users list` and `drover presets list`.
 */
import { ORG_BASE } from '../../../client/index.ts';
import { ACTOR_TYPES } from '../../../protocol/enums.ts';
import { UsageError, defined, isoTime, read, type Command } from '../framework.ts';
import { actorName } from '../names.ts';
import { record, show, table, when } from '../output.ts';
import { summary } from './events.ts';

export const peopleCommands: Command[] = [
  {
    name: 'whoami',
    summary: 'Show the credential in use: its person (for a key of theirs), its API key or pod, and its scopes.',
    examples: ['drover whoami', 'drover whoami --json'],
    async run(ctx) {
      const client = ctx.client();
      const answer = await client.call(client.api.GET(`${ORG_BASE}/auth/whoami`, { params: { path: client.path } }));
      show(ctx, answer, ({ principal: p }) =>
        record({
          user: p.user ? `${p.user.name} (${p.user.id})` : p.type === 'api_key' ? '- (a key of no one)' : null,
          type: p.type,
          api_key_id: p.api_key_id,
          pod_key: p.pod_key,
          organization: client.path.org,
          scopes: p.scopes,
        }),
      );
    },
  },
  {
    name: 'activity',
    summary: "Page through the organization's event log, newest first, with who made each change (GET /activity).",
    options: {
      types: { type: 'string', value: 'TYPES', description: 'comma-separated types; pod.* selects a family' },
      'actor-type': { type: 'string', value: 'TYPE', description: `only changes made by: ${ACTOR_TYPES.join(', ')}` },
      from: { type: 'string', value: 'TIME', description: 'events at or after this ISO 8601 time' },
      to: { type: 'string', value: 'TIME', description: 'events before this ISO 8601 time' },
      limit: { type: 'string', value: 'N', description: 'page size (default 50, at most 500)' },
      cursor: { type: 'string', value: 'CURSOR', description: 'the next page: the cursor the previous page printed' },
    },
    notes: ['Events are kept 30 days by default (DROVER_EVENT_RETENTION_HOURS). `drover events` follows them live instead.'],
    examples: ['drover activity', "drover activity --types 'ticket.*' --actor-type user --from 2026-11-27", 'drover activity --limit 100 --cursor 4711'],
    async run(ctx, p) {
      const client = ctx.client();
      const cursor = read.string(p, 'cursor');
      if (cursor !== undefined && !/^[1-9]\d{0,15}$/.test(cursor)) throw new UsageError(`--cursor must be the number a previous page printed, got "${cursor}"`);
      const query = defined({
        types: read.string(p, 'types'),
        actor_type: read.oneOf(p, 'actor-type', ACTOR_TYPES),
        from: isoTime(read.string(p, 'from'), 'from'),
        to: isoTime(read.string(p, 'to'), 'to'),
        limit: read.integer(p, 'limit', 1),
        cursor,
      });
      const answer = await client.call(client.api.GET(`${ORG_BASE}/activity`, { params: { path: client.path, query } }));
      show(ctx, answer, (d) => {
        const rows = table(
          d.events,
          [
            { header: 'ID', value: (e) => e.id },
            { header: 'TIME', value: (e) => when(e.created_at) },
            { header: 'TYPE', value: (e) => e.type },
            { header: 'BY', value: (e) => actorName(e.actor), max: 30 },
            { header: 'WHAT', value: (e) => summary({ ...e, data: (e.data ?? {}) as Record<string, unknown> }), max: 70 },
          ],
          'No activity.',
        );
        return rows + (d.next_cursor ? `(more: --cursor ${d.next_cursor})\n` : '');
      });
    },
  },
  {
    name: 'users list',
    summary: "The organization's people (id and name), for --assignee and for reading who did what.",
    examples: ['drover users list'],
    async run(ctx) {
      const client = ctx.client();
      const answer = await client.call(client.api.GET(`${ORG_BASE}/users`, { params: { path: client.path } }));
      show(ctx, answer, (d) => table(d.users, [{ header: 'ID', value: (u) => u.id }, { header: 'NAME', value: (u) => u.name }], 'No users.'));
    },
  },
  {
    name: 'presets list',
    summary: "The organization's presets: an agent and agentfile lines that pods run --preset and loops create --preset start from.",
    examples: ['drover presets list', 'drover presets list --json'],
    async run(ctx) {
      const client = ctx.client();
      const answer = await client.call(client.api.GET(`${ORG_BASE}/presets`, { params: { path: client.path } }));
      show(ctx, answer, (d) =>
        table(
          d.presets,
          [
            { header: 'NAME', value: (x) => x.name },
            { header: 'AGENT', value: (x) => x.agent_slug },
            { header: 'LINES', value: (x) => x.agentfile_layer, max: 60 },
            { header: 'DESCRIPTION', value: (x) => x.description, max: 40 },
          ],
          'No presets (drover admin presets create).',
        ),
      );
    },
  },
];
