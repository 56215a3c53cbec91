import { sql } from 'kysely';
import type { Executor } from './db.ts';
import type { NewTicket, TicketRow, TicketUpdate } from './schema.ts';
import { placeholders, runCompiled, runNamed } from './compiled.ts';

export interface TicketFilter {
  status?: string;
  type?: string;
  repositoryId?: number;
  assigneeId?: number;
  /** Tickets must carry every one of these. */
  labels?: string[];
}

export type TicketWithParent = TicketRow & { parent_slug: string | null };

/** Hands out the next number for (org, prefix); the row lock serialises concurrent creates. */
export async function nextTicketNumber(trx: Executor, orgId: number, prefix: string): Promise<number> {
  const { rows } = await runCompiled(
    trx,
    'next ticket number',
    () =>
      trx
        .insertInto('ticket_sequences')
        .values(placeholders(['org_id', 'prefix', 'last_number']))
        .onConflict((oc) => oc.columns(['org_id', 'prefix']).doUpdateSet({ last_number: sql`ticket_sequences.last_number + 1` }))
        .returning('last_number'),
    [orgId, prefix, 1],
  );
  return Number(rows[0].last_number);
}

const TICKET_COLUMNS = [
  'org_id', 'slug', 'type', 'title', 'description', 'status', 'priority', 'priority_rank', 'assignee_id',
  'repository_id', 'labels', 'parent_id', 'created_by', 'updated_by', 'created_at', 'updated_at',
] as const satisfies readonly (keyof NewTicket)[];

/** Inserts a ticket with its labels and counts it; the row is made of the values written and the id (not read back). */
export async function insertTicket(trx: Executor, ticket: NewTicket, labels: string[]): Promise<TicketRow> {
  const values = TICKET_COLUMNS.map((column) => ticket[column] ?? null);
  const { rows } = await runCompiled(trx, 'insert ticket returning id', () => trx.insertInto('tickets').values(placeholders(TICKET_COLUMNS)).returning('id'), values);
  const row = { id: Number(rows[0].id) } as Record<keyof TicketRow, unknown>;
  TICKET_COLUMNS.forEach((column, i) => (row[column] = values[i]));
  await insertTicketLabels(trx, row.id as number, ticket.org_id, labels);
  await adjustTicketCount(trx, ticket.org_id, ticket.repository_id ?? null, ticket.status, 1);
  return row as TicketRow;
}

async function insertTicketLabels(trx: Executor, ticketId: number, orgId: number, labels: string[]): Promise<void> {
  if (labels.length === 0) return;
  await runCompiled(
    trx,
    `insert ${labels.length} ticket labels`,
    () => trx.insertInto('ticket_labels').values(labels.map(() => placeholders(['ticket_id', 'org_id', 'label']))),
    labels.flatMap((label) => [ticketId, orgId, label]),
  );
}

export async function replaceTicketLabels(trx: Executor, ticketId: number, orgId: number, labels: string[]): Promise<void> {
  await trx.deleteFrom('ticket_labels').where('ticket_id', '=', ticketId).execute();
  await insertTicketLabels(trx, ticketId, orgId, labels);
}

export async function adjustTicketCount(
  trx: Executor,
  orgId: number,
  repositoryId: number | null,
  status: string,
  delta: number,
): Promise<void> {
  await runCompiled(
    trx,
    'adjust ticket count',
    () =>
      trx
        .insertInto('ticket_counts')
        .values(placeholders(['org_id', 'repo_key', 'status', 'n']))
        .onConflict((oc) => oc.columns(['org_id', 'repo_key', 'status']).doUpdateSet({ n: sql`ticket_counts.n + ${0}` })),
    [orgId, repositoryId ?? 0, status, delta, delta],
  );
}

function withParentSlug(db: Executor) {
  return db
    .selectFrom('tickets as t')
    .leftJoin('tickets as p', 'p.id', 't.parent_id')
    .selectAll('t')
    .select('p.slug as parent_slug');
}

// The reads below run on every uncached read (and, on PostgreSQL, GET /tickets/{slug} always):
// built and compiled once per shape (store/compiled.ts), not per request.

export async function findTicketBySlug(db: Executor, orgId: number, slug: string): Promise<TicketWithParent | undefined> {
  const { rows } = await runNamed(db, 'ticket by slug', (v) => withParentSlug(db).where('t.org_id', '=', v('org')).where('t.slug', '=', v('slug')), {
    org: orgId,
    slug,
  });
  return rows[0];
}

export async function findTicketById(db: Executor, id: number): Promise<TicketWithParent | undefined> {
  const { rows } = await runNamed(db, 'ticket by id', (v) => withParentSlug(db).where('t.id', '=', v('id')), { id });
  return rows[0];
}

type Value = (key: string) => never;

/** Which filters a query has: the shape its compiled statement is kept under. */
function shapeOf(filter: TicketFilter): string {
  const labels = filter.labels?.length ?? 0;
  return [filter.status, filter.type, filter.repositoryId, filter.assigneeId].map((f) => (f === undefined ? '-' : '+')).join('') + ` ${labels}`;
}

/** The named values of a filter (`filtered` uses them as `v('status')`, `v('label0')`, …). */
function filterValues(orgId: number, filter: TicketFilter): Record<string, unknown> {
  const values: Record<string, unknown> = { org: orgId, status: filter.status, type: filter.type, repository: filter.repositoryId, assignee: filter.assigneeId };
  const labels = filter.labels ?? [];
  labels.forEach((label, i) => (values[`label${i}`] = label));
  values.labelCount = labels.length;
  return values;
}

function filtered(db: Executor, v: Value, filter: TicketFilter) {
  let query = db.selectFrom('tickets').where('tickets.org_id', '=', v('org'));
  if (filter.status !== undefined) query = query.where('tickets.status', '=', v('status'));
  if (filter.type !== undefined) query = query.where('tickets.type', '=', v('type'));
  if (filter.repositoryId !== undefined) query = query.where('tickets.repository_id', '=', v('repository'));
  if (filter.assigneeId !== undefined) query = query.where('tickets.assignee_id', '=', v('assignee'));
  const labels = filter.labels ?? [];
  if (labels.length > 0) {
    query = query.where('tickets.id', 'in', (eb) =>
      eb
        .selectFrom('ticket_labels')
        .select('ticket_labels.ticket_id')
        .where('ticket_labels.org_id', '=', v('org'))
        .where('ticket_labels.label', 'in', labels.map((_, i) => v(`label${i}`)))
        .groupBy('ticket_labels.ticket_id')
        .having((h) => h.fn.countAll(), '=', v('labelCount')),
    );
  }
  return query;
}

/** The columns of a list item (no description, which can be large). */
const LIST_COLUMNS = [
  'tickets.id',
  'tickets.slug',
  'tickets.type',
  'tickets.title',
  'tickets.status',
  'tickets.priority',
  'tickets.assignee_id',
  'tickets.repository_id',
  'tickets.labels',
  'tickets.created_at',
  'tickets.updated_at',
] as const;
export type TicketListRow = Pick<TicketRow, 'id' | 'slug' | 'type' | 'title' | 'status' | 'priority' | 'assignee_id' | 'repository_id' | 'labels' | 'created_at' | 'updated_at'>;

export async function listTickets(
  db: Executor,
  orgId: number,
  filter: TicketFilter,
  page: { limit: number; offset: number },
): Promise<TicketListRow[]> {
  const { rows } = await runNamed(
    db,
    `list tickets ${shapeOf(filter)}`,
    (v) =>
      filtered(db, v, filter)
        .select(LIST_COLUMNS)
        .orderBy('tickets.created_at', 'desc')
        .orderBy('tickets.id', 'desc')
        .limit(v('limit'))
        .offset(v('offset')),
    { ...filterValues(orgId, filter), limit: page.limit, offset: page.offset },
  );
  return rows;
}

/**
 * Totals filtered only by status and/or repository come from the maintained counters,
 * so a list or board over 100k tickets never counts rows; other filters count the matches.
 */
export async function countTickets(db: Executor, orgId: number, filter: TicketFilter): Promise<number> {
  const countable = filter.type === undefined && filter.assigneeId === undefined && (filter.labels ?? []).length === 0;
  if (countable) {
    const { rows } = await runNamed(
      db,
      `count tickets from counters ${shapeOf(filter)}`,
      (v) => {
        let query = db
          .selectFrom('ticket_counts')
          .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('n'), sql<number>`0`).as('n'))
          .where('org_id', '=', v('org'));
        if (filter.status !== undefined) query = query.where('status', '=', v('status'));
        if (filter.repositoryId !== undefined) query = query.where('repo_key', '=', v('repository'));
        return query;
      },
      filterValues(orgId, filter),
    );
    return Number(rows[0].n);
  }
  const { rows } = await runNamed(
    db,
    `count tickets ${shapeOf(filter)}`,
    (v) => filtered(db, v, filter).select((eb) => eb.fn.countAll<number>().as('n')),
    filterValues(orgId, filter),
  );
  return Number(rows[0].n);
}

export async function countsByStatus(db: Executor, orgId: number, repositoryId?: number): Promise<Map<string, number>> {
  const { rows } = await runNamed(
    db,
    `ticket counts by status${repositoryId === undefined ? '' : ' of a repository'}`,
    (v) => {
      let query = db
        .selectFrom('ticket_counts')
        .select(['status', (eb) => eb.fn.sum<number>('n').as('n')])
        .where('org_id', '=', v('org'))
        .groupBy('status');
      if (repositoryId !== undefined) query = query.where('repo_key', '=', v('repository'));
      return query;
    },
    { org: orgId, repository: repositoryId },
  );
  return new Map(rows.map((r) => [r.status, Number(r.n)]));
}

export type BoardTicketRow = Pick<TicketRow, 'id' | 'slug' | 'title' | 'type' | 'priority' | 'assignee_id' | 'labels'>;

/** The top of one board column, read straight off the board index. */
export async function boardColumn(
  db: Executor,
  orgId: number,
  status: string,
  limit: number,
  repositoryId?: number,
): Promise<BoardTicketRow[]> {
  const { rows } = await runNamed(
    db,
    `board column${repositoryId === undefined ? '' : ' of a repository'}`,
    (v) => {
      let query = db
        .selectFrom('tickets')
        .select(['id', 'slug', 'title', 'type', 'priority', 'assignee_id', 'labels'])
        .where('org_id', '=', v('org'));
      if (repositoryId !== undefined) query = query.where('repository_id', '=', v('repository'));
      return query
        .where('status', '=', v('status'))
        .orderBy('priority_rank', 'desc')
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(v('limit'));
    },
    { org: orgId, status, limit, repository: repositoryId },
  );
  return rows;
}

export async function updateTicket(trx: Executor, id: number, patch: TicketUpdate): Promise<void> {
  await trx.updateTable('tickets').set(patch).where('id', '=', id).execute();
}

/** The parent ids above a ticket, nearest first (bounded, in case of a corrupt chain). */
export async function ancestorIds(db: Executor, ticketId: number, max = 10_000): Promise<number[]> {
  const chain: number[] = [];
  let current: number | null = ticketId;
  while (current !== null && chain.length < max) {
    const row: { parent_id: number | null } | undefined = await db
      .selectFrom('tickets')
      .select('parent_id')
      .where('id', '=', current)
      .executeTakeFirst();
    current = row?.parent_id ?? null;
    if (current !== null) chain.push(current);
  }
  return chain;
}

/** Deletes one ticket; its children stay, detached. */
export async function deleteTicket(trx: Executor, ticket: TicketRow): Promise<void> {
  await trx.updateTable('tickets').set({ parent_id: null }).where('parent_id', '=', ticket.id).execute();
  await trx.deleteFrom('ticket_labels').where('ticket_id', '=', ticket.id).execute();
  await trx.deleteFrom('tickets').where('id', '=', ticket.id).execute();
  await adjustTicketCount(trx, ticket.org_id, ticket.repository_id, ticket.status, -1);
}

/** Every ticket write bumps its organization's version, in the write's own transaction. */
export async function bumpTicketVersion(trx: Executor, orgId: number): Promise<void> {
  await runCompiled(
    trx,
    'bump ticket version',
    () =>
      trx
        .insertInto('ticket_versions')
        .values(placeholders(['org_id', 'version']))
        .onConflict((oc) => oc.column('org_id').doUpdateSet({ version: sql`ticket_versions.version + 1` })),
    [orgId, 1],
  );
}

export async function ticketVersion(db: Executor, orgId: number): Promise<number> {
  const { rows } = await runNamed(db, 'ticket version', (v) => db.selectFrom('ticket_versions').select('version').where('org_id', '=', v('org')), { org: orgId });
  return Number(rows[0]?.version ?? 0);
}
