import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as admin from '../../src/domain/admin/service.ts';
import type { DomainContext } from '../../src/domain/context.ts';
import type { OrgRow } from '../../src/store/schema.ts';
import * as tickets from '../../src/store/tickets.ts';
import { createTicket, deleteTicket, listTickets, setTicketStatus, ticketBoard, updateTicket } from '../../src/domain/tickets/service.ts';
import { runNamed } from '../../src/store/compiled.ts';
import { TICKET_STATUSES, type TicketStatus, type TicketType } from '../../src/protocol/enums.ts';
import { DATABASES, createTestStore } from '../helpers/databases.ts';

describe.each(DATABASES)('ticket store on %s', (kind) => {
  let ctx: DomainContext;
  let org: OrgRow;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    const created = await createTestStore(kind);
    cleanup = created.cleanup;
    let clock = Date.parse('2026-01-01T00:00:00.000Z');
    ctx = { store: created.store, now: () => (clock += 1000) };
    org = await admin.createOrg(ctx, { slug: 'acme', name: 'Acme' });
  });
  afterEach(async () => cleanup());

  it('numbers tickets per (org, prefix) from 1 and never reuses a number', async () => {
    const other = await admin.createOrg(ctx, { slug: 'other', name: 'Other', ticket_prefix: 'OTH' });
    const a1 = await createTicket(ctx, org, { type: 'bug', title: 'a1' });
    const a2 = await createTicket(ctx, org, { type: 'bug', title: 'a2' });
    const o1 = await createTicket(ctx, other, { type: 'bug', title: 'o1' });
    expect([a1.slug, a2.slug, o1.slug]).toEqual(['ACME-1', 'ACME-2', 'OTH-1']);
    await deleteTicket(ctx, org.id, 'acme-2');
    const a3 = await createTicket(ctx, org, { type: 'bug', title: 'a3' });
    expect(a3.slug).toBe('ACME-3');
  });

  it("uses the repository's ticket prefix when the ticket belongs to a repository", async () => {
    const repo = await ctx.store.db
      .insertInto('repositories')
      .values({
        org_id: org.id,
        name: 'web',
        full_name: 'acme/web',
        provider: 'github',
        url: 'https://example.invalid/acme/web.git',
        default_branch: 'main',
        ticket_prefix: 'WEB',
        api_base_url: null,
        token_encrypted: null,
        created_at: ctx.now(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const t = await createTicket(ctx, org, { type: 'task', title: 'in repo', repository_id: repo.id });
    const u = await createTicket(ctx, org, { type: 'task', title: 'no repo' });
    expect(t.slug).toBe('WEB-1');
    expect(u.slug).toBe('ACME-1');
  });

  it('keeps totals per status consistent through create, status moves and deletes', async () => {
    const t1 = await createTicket(ctx, org, { type: 'bug', title: 't1' });
    await createTicket(ctx, org, { type: 'bug', title: 't2', status: 'todo' });
    await createTicket(ctx, org, { type: 'bug', title: 't3', status: 'todo' });
    await setTicketStatus(ctx, org.id, t1.slug, 'done');
    await updateTicket(ctx, org.id, 'ACME-2', { status: 'in_progress' });
    await deleteTicket(ctx, org.id, 'ACME-3');
    const counts = await tickets.countsByStatus(ctx.store.db, org.id);
    expect(Object.fromEntries([...counts].filter(([, n]) => n !== 0))).toEqual({ done: 1, in_progress: 1 });
    expect(await tickets.countTickets(ctx.store.db, org.id, {})).toBe(2);
    const real = await ctx.store.db
      .selectFrom('tickets')
      .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
      .where('org_id', '=', org.id)
      .groupBy('status')
      .execute();
    expect(Object.fromEntries(real.map((r) => [r.status, Number(r.n)]))).toEqual({ done: 1, in_progress: 1 });
  });

  it('filters by labels requiring all of them, and by type, status and assignee', async () => {
    const user = await admin.createUser(ctx, 'acme', { name: 'Ann', email: 'ann@example.com' });
    await createTicket(ctx, org, { type: 'bug', title: 'ab', labels: ['a', 'b'] });
    await createTicket(ctx, org, { type: 'feature', title: 'a', labels: ['a'], assignee_id: user.id });
    await createTicket(ctx, org, { type: 'bug', title: 'bc', labels: ['b', 'c'], status: 'todo' });
    const titles = async (filter: tickets.TicketFilter) =>
      (await tickets.listTickets(ctx.store.db, org.id, filter, { limit: 100, offset: 0 })).map((t) => t.title);
    expect(await titles({ labels: ['a'] })).toEqual(['a', 'ab']);
    expect(await titles({ labels: ['a', 'b'] })).toEqual(['ab']);
    expect(await titles({ labels: ['a', 'c'] })).toEqual([]);
    expect(await titles({ type: 'bug' })).toEqual(['bc', 'ab']);
    expect(await titles({ status: 'todo' })).toEqual(['bc']);
    expect(await titles({ assigneeId: user.id })).toEqual(['a']);
    expect(await tickets.countTickets(ctx.store.db, org.id, { labels: ['b'] })).toBe(2);
    expect(await tickets.countTickets(ctx.store.db, org.id, { type: 'bug', status: 'todo' })).toBe(1);
  });

  it('orders board columns by priority, then newest first, and reports full totals', async () => {
    await createTicket(ctx, org, { type: 'bug', title: 'low', priority: 'low' });
    await createTicket(ctx, org, { type: 'bug', title: 'urgent-old', priority: 'urgent' });
    await createTicket(ctx, org, { type: 'bug', title: 'medium', priority: 'medium' });
    await createTicket(ctx, org, { type: 'bug', title: 'urgent-new', priority: 'urgent' });
    const board = await ticketBoard(ctx, org.id, 3);
    expect(board.map((c) => c.status)).toEqual(['backlog', 'todo', 'in_progress', 'in_review', 'done']);
    expect(board[0].total).toBe(4);
    expect(board[0].tickets.map((t) => t.title)).toEqual(['urgent-new', 'urgent-old', 'medium']);
  });

  it('detaches children when their parent is deleted, deleting nothing else', async () => {
    const parent = await createTicket(ctx, org, { type: 'feature', title: 'parent' });
    const child = await createTicket(ctx, org, { type: 'task', title: 'child', parent_slug: parent.slug });
    expect(child.parent_slug).toBe(parent.slug);
    await deleteTicket(ctx, org.id, parent.slug);
    const after = await tickets.findTicketBySlug(ctx.store.db, org.id, child.slug);
    expect(after?.parent_slug).toBeNull();
    expect(await tickets.countTickets(ctx.store.db, org.id, {})).toBe(1);
  });

  it('refuses a parent that would create a cycle', async () => {
    const a = await createTicket(ctx, org, { type: 'task', title: 'a' });
    const b = await createTicket(ctx, org, { type: 'task', title: 'b', parent_slug: a.slug });
    const c = await createTicket(ctx, org, { type: 'task', title: 'c', parent_slug: b.slug });
    await expect(updateTicket(ctx, org.id, a.slug, { parent_slug: c.slug })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(updateTicket(ctx, org.id, a.slug, { parent_slug: a.slug })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    const unchanged = await tickets.findTicketBySlug(ctx.store.db, org.id, a.slug);
    expect(unchanged?.parent_slug).toBeNull();
  });

  it('rolls back the whole create when a check fails (no number consumed)', async () => {
    await expect(createTicket(ctx, org, { type: 'bug', title: 'x', assignee_id: 999 })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(createTicket(ctx, org, { type: 'bug', title: 'x', parent_slug: 'ACME-99' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    const t = await createTicket(ctx, org, { type: 'bug', title: 'ok' });
    expect(t.slug).toBe('ACME-1');
    expect(await tickets.countTickets(ctx.store.db, org.id, {})).toBe(1);
  });

  // The reads of the hot paths are built and compiled once per shape (src/store/compiled.ts
  // `runNamed`) and run with each call's values: every shape the ticket list can take answers
  // what its filters say, whichever shape or values ran before it on the same compiled statement.
  it('fills each named value where the statement takes it, keeps the constants of the statement, and names a missing value', async () => {
    const db = ctx.store.db;
    const a = await createTicket(ctx, org, { type: 'bug', title: 'a', status: 'todo' });
    const b = await createTicket(ctx, org, { type: 'bug', title: 'b', status: 'done' });
    const build = (v: (key: string) => never) => db.selectFrom('tickets').select('title').where('org_id', '=', v('org')).where('status', '=', 'todo').where('slug', '=', v('slug'));
    expect((await runNamed(db, 'test: todo by slug', build, { org: org.id, slug: a.slug })).rows).toEqual([{ title: 'a' }]);
    // Same compiled statement, other values; the constant 'todo' stays part of it.
    expect((await runNamed(db, 'test: todo by slug', build, { org: org.id, slug: b.slug })).rows).toEqual([]);
    expect((await runNamed(db, 'test: todo by slug', build, { org: org.id + 1, slug: a.slug })).rows).toEqual([]);
    await expect(runNamed(db, 'test: todo by slug', build, { org: org.id })).rejects.toThrow('statement "test: todo by slug" needs the value "slug"');
    // Inside a transaction too.
    const inTransaction = await ctx.store.transaction((trx) => tickets.findTicketBySlug(trx, org.id, b.slug));
    expect(inTransaction?.title).toBe('b');
  });

  it('answers every shape of the ticket list, page and total, as the filters say', async () => {
    const user = await admin.createUser(ctx, 'acme', { name: 'Ann', email: 'ann@example.com' });
    const types: TicketType[] = ['bug', 'feature', 'task'];
    const labelSets = [[], ['x'], ['y'], ['x', 'y'], ['x', 'z']];
    const made: { title: string; status: TicketStatus; type: TicketType; assignee: number | null; labels: string[] }[] = [];
    for (let i = 0; i < 30; i++) {
      const ticket = {
        title: `t${i}`,
        status: TICKET_STATUSES[i % TICKET_STATUSES.length],
        type: types[i % types.length],
        assignee: i % 4 === 0 ? user.id : null,
        labels: labelSets[i % labelSets.length],
      };
      made.push(ticket);
      await createTicket(ctx, org, { title: ticket.title, status: ticket.status, type: ticket.type, labels: ticket.labels, ...(ticket.assignee ? { assignee_id: ticket.assignee } : {}) });
    }
    const newestFirst = [...made].reverse();
    const filters: tickets.TicketFilter[] = [
      {},
      { status: 'todo' },
      { type: 'bug' },
      { assigneeId: user.id },
      { repositoryId: 12345 },
      { labels: ['x'] },
      { labels: ['x', 'y'] },
      { labels: ['y', 'x'] },
      { status: 'backlog', type: 'feature' },
      { type: 'task', labels: ['x'], assigneeId: user.id },
      { status: 'in_progress', labels: ['z', 'x'] },
    ];
    // Twice round, and each shape with two pages: a compiled statement reused with other values.
    for (let round = 0; round < 2; round++) {
      for (const filter of filters) {
        const expected = newestFirst
          .filter(
            (t) =>
              (filter.status === undefined || t.status === filter.status) &&
              (filter.type === undefined || t.type === filter.type) &&
              (filter.assigneeId === undefined || t.assignee === filter.assigneeId) &&
              filter.repositoryId === undefined &&
              (filter.labels ?? []).every((label) => t.labels.includes(label)),
          )
          .map((t) => t.title);
        for (const page of [{ limit: 4, offset: 0 }, { limit: 3, offset: 2 + round }]) {
          const { rows, total } = await listTickets(ctx, org.id, { ...filter, ...page });
          const what = `${JSON.stringify(filter)} ${JSON.stringify(page)}`;
          expect(rows.map((r) => r.title), what).toEqual(expected.slice(page.offset, page.offset + page.limit));
          expect(total, what).toBe(expected.length);
        }
      }
    }
    const board = await ticketBoard(ctx, org.id, 2);
    for (const column of board) {
      const expected = newestFirst.filter((t) => t.status === column.status);
      expect(column.total).toBe(expected.length);
      expect(column.tickets).toHaveLength(Math.min(2, expected.length));
    }
    expect((await ticketBoard(ctx, org.id, 2, 12345)).every((c) => c.total === 0 && c.tickets.length === 0)).toBe(true);
  });
});
