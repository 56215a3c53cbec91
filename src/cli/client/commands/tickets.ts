import { ORG_BASE, type Schemas } from '../../../client/index.ts';
import { TICKET_PRIORITIES, TICKET_STATUSES, TICKET_TYPES } from '../../../protocol/enums.ts';
import { Names, actorText, namesFor, pickedId, pickedIdOrNone } from '../names.ts';
import { UsageError, defined, pageOptions, pageQuery, read, type Command } from '../framework.ts';
import { pageNote, record, show, table, type Column } from '../output.ts';


const columns = (names: Names): Column<Schemas['TicketListItem']>[] => [
  { header: 'SLUG', value: (t) => t.slug },
  { header: 'TYPE', value: (t) => t.type },
  { header: 'STATUS', value: (t) => t.status },
  { header: 'PRIORITY', value: (t) => t.priority },
  { header: 'ASSIGNEE', value: (t) => names.name('user', t.assignee_id), max: 20 },
  { header: 'LABELS', value: (t) => t.labels, max: 30 },
  { header: 'TITLE', value: (t) => t.title, max: 60 },
];

/** A ticket as a record: its assignee and repository by name (and id), who created and last changed it. */
const ticketRecord = (names: Names) => (data: { ticket: Schemas['Ticket'] }) => {
  const t = data.ticket;
  return record({
    ...t,
    assignee_id: names.label('user', t.assignee_id),
    repository_id: names.label('repository', t.repository_id),
    created_by: actorText(t.created_by),
    updated_by: actorText(t.updated_by),
  });
};
/** The names a ticket record shows. */
const TICKET_NAMES = ['repository', 'user'] as const;
const message = (data: { message: string }) => `${data.message}\n`;

const fieldOptions = {
  title: { type: 'string', value: 'TITLE', description: 'title, 1–500 characters' },
  type: { type: 'string', value: 'TYPE', description: TICKET_TYPES.join(', ') },
  description: { type: 'string', value: 'TEXT', description: 'description' },
  priority: { type: 'string', value: 'PRIORITY', description: TICKET_PRIORITIES.join(', ') },
  status: { type: 'string', value: 'STATUS', description: TICKET_STATUSES.join(', ') },
  assignee: { type: 'string', value: 'USER', description: 'assignee: a person of the organization, by name or id (drover users list)' },
  label: { type: 'string', multiple: true, value: 'LABEL', description: 'a label' },
  parent: { type: 'string', value: 'SLUG', description: 'parent ticket' },
} as const;

const repositoryOption = { type: 'string', value: 'NAME|ID', description: 'the repository (its name, owner/name or id)' } as const;

export const ticketCommands: Command[] = [
  {
    name: 'tickets list',
    summary: 'List tickets, newest first.',
    options: {
      status: { type: 'string', value: 'STATUS', description: TICKET_STATUSES.join(', ') },
      type: { type: 'string', value: 'TYPE', description: TICKET_TYPES.join(', ') },
      label: { type: 'string', multiple: true, value: 'LABEL', description: 'only tickets with this label' },
      assignee: { type: 'string', value: 'USER', description: 'only tickets assigned to this person (name or id)' },
      repository: { ...repositoryOption, description: 'only tickets of this repository (name or id)' },
      ...pageOptions('default 20, at most 100'),
    },
    examples: ['drover tickets list', 'drover tickets list --status todo --label api --limit 50'],
    async run(ctx, p) {
      const client = ctx.client();
      const names = new Names(client);
      const labels = read.strings(p, 'label');
      const query = defined({
        status: read.oneOf(p, 'status', TICKET_STATUSES),
        type: read.oneOf(p, 'type', TICKET_TYPES),
        labels: labels.length > 0 ? labels.join(',') : undefined,
        assignee_id: await pickedId(names, p, 'user', 'assignee'),
        repository_id: await pickedId(names, p, 'repository', 'repository'),
        ...pageQuery(p),
      });
      const answer = await client.call(client.api.GET(`${ORG_BASE}/tickets`, { params: { path: client.path, query } }));
      const shown = ctx.json ? names : await names.load('user');
      show(ctx, answer, (d) => table(d.tickets, columns(shown), 'No tickets.') + pageNote(d.tickets.length, d.total, d.offset, 'tickets'));
    },
  },
  {
    name: 'tickets get',
    summary: 'Show a ticket.',
    args: ['SLUG'],
    examples: ['drover tickets get ACME-12'],
    async run(ctx, p) {
      const client = ctx.client();
      const answer = await client.call(client.api.GET(`${ORG_BASE}/tickets/{slug}`, { params: { path: { ...client.path, slug: p.positionals[0] } } }));
      show(ctx, answer, ticketRecord(await namesFor(ctx, ...TICKET_NAMES)));
    },
  },
  {
    name: 'tickets create',
    summary: 'Create a ticket.',
    options: { ...fieldOptions, repository: repositoryOption },
    notes: ['--type and --title are required.'],
    examples: ["drover tickets create --type bug --title 'Login fails' --priority high --label auth --label web", "drover tickets create --type task --title 'Add a health check' --repository web"],
    async run(ctx, p) {
      const client = ctx.client();
      const names = new Names(client);
      const type = read.oneOf(p, 'type', TICKET_TYPES);
      const title = read.string(p, 'title');
      if (!type || title === undefined) throw new UsageError('--type and --title are required');
      const labels = read.strings(p, 'label');
      const body = defined({
        type,
        title,
        description: read.string(p, 'description'),
        priority: read.oneOf(p, 'priority', TICKET_PRIORITIES),
        status: read.oneOf(p, 'status', TICKET_STATUSES),
        assignee_id: await pickedId(names, p, 'user', 'assignee'),
        labels: labels.length > 0 ? labels : undefined,
        parent_slug: read.string(p, 'parent'),
        repository_id: await pickedId(names, p, 'repository', 'repository'),
      });
      const created = await client.call(client.api.POST(`${ORG_BASE}/tickets`, { params: { path: client.path }, body }));
      show(ctx, created, ticketRecord(ctx.json ? names : await names.load(...TICKET_NAMES)));
    },
  },
  {
    name: 'tickets update',
    summary: 'Change a ticket: only the given fields change.',
    args: ['SLUG'],
    options: { ...fieldOptions, 'clear-labels': { type: 'boolean', description: 'remove every label' } },
    notes: ['--label replaces all labels. --assignee none, --parent none and --description none clear the field.'],
    examples: ['drover tickets update ACME-12 --priority urgent --assignee Ann', 'drover tickets update ACME-12 --label api --label backend --parent none'],
    async run(ctx, p) {
      const client = ctx.client();
      const names = new Names(client);
      const labels = read.strings(p, 'label');
      const body = defined({
        title: read.string(p, 'title'),
        type: read.oneOf(p, 'type', TICKET_TYPES),
        description: read.stringOrNone(p, 'description'),
        priority: read.oneOf(p, 'priority', TICKET_PRIORITIES),
        status: read.oneOf(p, 'status', TICKET_STATUSES),
        assignee_id: await pickedIdOrNone(names, p, 'user', 'assignee'),
        labels: read.flag(p, 'clear-labels') ? [] : labels.length > 0 ? labels : undefined,
        parent_slug: read.stringOrNone(p, 'parent'),
      });
      const path = { ...client.path, slug: p.positionals[0] };
      const updated = await client.call(client.api.PUT(`${ORG_BASE}/tickets/{slug}`, { params: { path }, body }));
      show(ctx, updated, ticketRecord(ctx.json ? names : await names.load(...TICKET_NAMES)));
    },
  },
  {
    name: 'tickets status',
    summary: "Move a ticket to a status: backlog, todo, in_progress, in_review or done.",
    args: ['SLUG', 'STATUS'],
    examples: ['drover tickets status ACME-12 in_review'],
    async run(ctx, p) {
      const client = ctx.client();
      const [slug, status] = p.positionals;
      if (!(TICKET_STATUSES as readonly string[]).includes(status)) throw new UsageError(`STATUS must be one of ${TICKET_STATUSES.join(', ')}, got "${status}"`);
      const path = { ...client.path, slug };
      show(ctx, await client.call(client.api.PATCH(`${ORG_BASE}/tickets/{slug}/status`, { params: { path }, body: { status: status as (typeof TICKET_STATUSES)[number] } })), message);
    },
  },
  {
    name: 'tickets delete',
    summary: 'Delete a ticket for good (its sub-tickets are kept, detached).',
    args: ['SLUG'],
    examples: ['drover tickets delete ACME-12'],
    async run(ctx, p) {
      const client = ctx.client();
      show(ctx, await client.call(client.api.DELETE(`${ORG_BASE}/tickets/{slug}`, { params: { path: { ...client.path, slug: p.positionals[0] } } })), message);
    },
  },
  {
    name: 'tickets board',
    summary: 'The board: the five status columns with their tickets, most urgent first.',
    options: {
      repository: { ...repositoryOption, description: 'only tickets of this repository (name or id)' },
      'limit-per-column': { type: 'string', value: 'N', description: 'tickets shown per column (default 100, at most 500)' },
    },
    examples: ['drover tickets board', 'drover tickets board --repository web --limit-per-column 10'],
    async run(ctx, p) {
      const client = ctx.client();
      const query = defined({ repository_id: await pickedId(new Names(client), p, 'repository', 'repository'), limit_per_column: read.integer(p, 'limit-per-column', 1) });
      const answer = await client.call(client.api.GET(`${ORG_BASE}/tickets/board`, { params: { path: client.path, query } }));
      show(ctx, answer, ({ board }) =>
        board.columns
          .map((column) => {
            const rest = column.total - column.tickets.length;
            const lines = column.tickets.map((t) => `  ${t.slug.padEnd(10)} ${t.priority.padEnd(7)} ${t.type.padEnd(12)} ${t.title}`);
            return [`${column.status} (${column.total})`, ...lines, ...(rest > 0 ? [`  … ${rest} more`] : [])].join('\n');
          })
          .join('\n\n') + '\n',
      );
    },
  },
];
