import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as admin from '../../src/domain/admin/service.ts';
import * as ticketService from '../../src/domain/tickets/service.ts';
import { eventsAfter } from '../../src/store/events.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

describe.each(DATABASES)('tickets API on %s', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await startTestApp(kind);
  });
  afterEach(async () => t.close());

  const create = async (payload: Record<string, unknown>) => {
    const response = await t.request({ method: 'POST', url: t.path('/tickets'), payload });
    expect(response.statusCode, response.body).toBe(201);
    return response.json().ticket;
  };

  describe('POST /tickets', () => {
    it('creates a ticket with defaults and returns every detail field', async () => {
      const response = await t.request({ method: 'POST', url: t.path('/tickets'), payload: { type: 'feature', title: 'Add login' } });
      expect(response.statusCode).toBe(201);
      const { ticket } = response.json();
      expect(ticket).toEqual({
        id: expect.any(Number),
        slug: 'ACME-1',
        type: 'feature',
        title: 'Add login',
        description: null,
        status: 'backlog',
        priority: 'medium',
        assignee_id: null,
        repository_id: null,
        labels: [],
        parent_slug: null,
        created_by: { type: 'api_key', id: expect.any(Number), name: expect.any(String) },
        updated_by: { type: 'api_key', id: expect.any(Number), name: expect.any(String) },
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        updated_at: ticket.created_at,
      });
    });

    it('keeps the given fields, drops duplicate labels in order, links the parent', async () => {
      const user = await admin.createUser(t.ctx, 'acme', { name: 'Ann', email: 'ann@example.com' });
      const parent = await create({ type: 'feature', title: 'Parent' });
      const child = await create({
        type: 'bug',
        title: 'Child',
        description: '# Steps\n1. open',
        priority: 'urgent',
        status: 'todo',
        assignee_id: user.id,
        labels: ['ui', 'auth', 'ui'],
        parent_slug: parent.slug.toLowerCase(),
      });
      expect(child).toMatchObject({
        slug: 'ACME-2',
        description: '# Steps\n1. open',
        priority: 'urgent',
        status: 'todo',
        assignee_id: user.id,
        labels: ['ui', 'auth'],
        parent_slug: 'ACME-1',
      });
    });

    it.each([
      [{ title: 'x' }, '/type'],
      [{ type: 'bug' }, '/title'],
      [{ type: 'epic', title: 'x' }, '/type'],
      [{ type: 'bug', title: 'x'.repeat(501) }, '/title'],
      [{ type: 'bug', title: '   ' }, '/title'],
      [{ type: 'bug', title: 'x', priority: 'critical' }, '/priority'],
      [{ type: 'bug', title: 'x', status: 'open' }, '/status'],
      [{ type: 'bug', title: 'x', labels: Array.from({ length: 21 }, (_, i) => `l${i}`) }, '/labels'],
      [{ type: 'bug', title: 'x', labels: [''] }, '/labels/0'],
      [{ type: 'bug', title: 'x', assignee_id: '1' }, '/assignee_id'],
      [{ type: 'bug', title: 'x', colour: 'red' }, '/colour'],
    ])('rejects %j naming %s', async (payload, field) => {
      const response = await t.request({ method: 'POST', url: t.path('/tickets'), payload });
      expect(response.statusCode).toBe(400);
      const body = response.json();
      expect(body.code).toBe('VALIDATION_FAILED');
      expect(body.details.map((d: { field: string }) => d.field)).toContain(field);
    });

    it('answers with exactly the JSON its ticket.created event carries, the ticket as GET shows it', async () => {
      const user = await admin.createUser(t.ctx, 'acme', { name: 'Zoë "Z" \\ O’Neil', email: 'z@example.com' });
      const parent = await create({ type: 'feature', title: 'Parent' });
      const payload = {
        type: 'bug',
        title: 'Quotes " and \\ backslashes, tabs\t, émoji 🚀 and </script>',
        description: 'line 1\nline 2\u2028\u001f',
        priority: 'urgent',
        status: 'todo',
        assignee_id: user.id,
        labels: ['ui', 'ünïcode', 'ui'],
        parent_slug: parent.slug,
      };
      const response = await t.request({ method: 'POST', url: t.path('/tickets'), payload });
      expect(response.statusCode).toBe(201);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      const { ticket } = response.json();
      // The event's data, as stored, is the answer byte for byte (serialized once, docs/decisions.md "Storage and performance").
      const events = await eventsAfter(t.store.db, t.org.id, 0, 100);
      const created = events.filter((e) => e.type === 'ticket.created' && e.ticket_slug === ticket.slug);
      expect(created).toHaveLength(1);
      expect(created[0].payload).toBe(response.body);
      // …and it is the ticket as GET /tickets/:slug shows it, field for field and in the same order.
      const got = (await t.request({ method: 'GET', url: t.path(`/tickets/${ticket.slug}`) })).json().ticket;
      const { pods, merge_requests: mergeRequests, ...detail } = got;
      expect([pods, mergeRequests]).toEqual([[], []]);
      expect(Object.keys(ticket)).toEqual(Object.keys(detail));
      expect(ticket).toEqual(detail);
      expect(ticket).toMatchObject({ title: payload.title, description: payload.description, labels: ['ui', 'ünïcode'], parent_slug: parent.slug });
    });

    it('rejects references that do not exist in the org', async () => {
      const other = await t.createOrg('other');
      const foreignUser = await admin.createUser(t.ctx, 'other', { name: 'Bob', email: 'bob@example.com' });
      const foreignKey = await t.issueKey(['tickets:write'], { org: other });
      const foreignTicket = (
        await t.request({ method: 'POST', url: t.path('/tickets', 'other'), key: foreignKey.key, payload: { type: 'bug', title: 'theirs' } })
      ).json().ticket;
      for (const [payload, field] of [
        [{ assignee_id: foreignUser.id }, '/assignee_id'],
        [{ assignee_id: 9999 }, '/assignee_id'],
        [{ repository_id: 9999 }, '/repository_id'],
        [{ parent_slug: foreignTicket.slug }, '/parent_slug'],
      ] as const) {
        const response = await t.request({ method: 'POST', url: t.path('/tickets'), payload: { type: 'bug', title: 'x', ...payload } });
        expect(response.statusCode).toBe(400);
        expect(response.json().details[0].field).toBe(field);
      }
      const list = await t.request({ method: 'GET', url: t.path('/tickets') });
      expect(list.json().total).toBe(0);
    });
  });

  describe('GET /tickets', () => {
    it('lists newest first with total, limit and offset, and no parent_slug or description', async () => {
      for (let i = 1; i <= 5; i++) await create({ type: 'task', title: `t${i}` });
      const response = await t.request({ method: 'GET', url: t.path('/tickets?limit=2&offset=1') });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body).toMatchObject({ total: 5, limit: 2, offset: 1 });
      expect(body.tickets.map((x: { title: string }) => x.title)).toEqual(['t4', 't3']);
      expect(body.tickets[0]).not.toHaveProperty('parent_slug');
      expect(body.tickets[0]).not.toHaveProperty('description');
    });

    it('applies every filter, labels requiring all of them', async () => {
      const user = await admin.createUser(t.ctx, 'acme', { name: 'Ann', email: 'ann@example.com' });
      await create({ type: 'bug', title: 'a', labels: ['x', 'y'], status: 'todo' });
      await create({ type: 'feature', title: 'b', labels: ['x'], assignee_id: user.id });
      await create({ type: 'bug', title: 'c', labels: ['y'] });
      const titles = async (query: string) => {
        const response = await t.request({ method: 'GET', url: t.path(`/tickets?${query}`) });
        expect(response.statusCode, response.body).toBe(200);
        const body = response.json();
        expect(body.total).toBe(body.tickets.length);
        return body.tickets.map((x: { title: string }) => x.title);
      };
      expect(await titles('labels=x,y')).toEqual(['a']);
      expect(await titles('labels=x')).toEqual(['b', 'a']);
      expect(await titles('labels=%20y%20,')).toEqual(['c', 'a']);
      expect(await titles('type=bug')).toEqual(['c', 'a']);
      expect(await titles('status=todo')).toEqual(['a']);
      expect(await titles(`assignee_id=${user.id}`)).toEqual(['b']);
      expect(await titles('repository_id=12345')).toEqual([]);
      expect(await titles('type=bug&labels=y&status=backlog')).toEqual(['c']);
    });

    it('clamps limit to 100 and rejects limits that are not positive integers', async () => {
      const clamped = await t.request({ method: 'GET', url: t.path('/tickets?limit=5000') });
      expect(clamped.json().limit).toBe(100);
      for (const bad of ['limit=abc', 'limit=0', 'limit=-1', 'offset=-1', 'limit=2.5']) {
        const response = await t.request({ method: 'GET', url: t.path(`/tickets?${bad}`) });
        expect(response.statusCode, bad).toBe(400);
        expect(response.json().details[0].field).toBe(bad.split('=')[0]);
      }
    });
  });

  describe('rendered reads', () => {
    it('serve the same URL again until a ticket of the org changes, then the new state', async () => {
      const url = t.path('/tickets?limit=5');
      const board = t.path('/tickets/board');
      const first = await t.request({ method: 'GET', url });
      expect((await t.request({ method: 'GET', url })).body).toBe(first.body);
      const ticket = await create({ type: 'bug', title: 'new' });
      expect((await t.request({ method: 'GET', url })).json().total).toBe(1);
      expect((await t.request({ method: 'GET', url: board })).json().board.columns[0].total).toBe(1);
      await t.request({ method: 'PATCH', url: t.path(`/tickets/${ticket.slug}/status`), payload: { status: 'done' } });
      expect((await t.request({ method: 'GET', url: board })).json().board.columns[4].total).toBe(1);
      await t.request({ method: 'PUT', url: t.path(`/tickets/${ticket.slug}`), payload: { title: 'renamed' } });
      expect((await t.request({ method: 'GET', url })).json().tickets[0].title).toBe('renamed');
      await t.request({ method: 'DELETE', url: t.path(`/tickets/${ticket.slug}`) });
      expect((await t.request({ method: 'GET', url })).json().total).toBe(0);
      const other = await t.createOrg('other');
      const otherKey = await t.issueKey(['tickets:read'], { org: other });
      expect((await t.request({ method: 'GET', url: t.path('/tickets?limit=5', 'other'), key: otherKey.key })).json().total).toBe(0);
    });

    // SQLite: another process on the same file (data_version moves); PostgreSQL: another replica.
    it('never serve a body older than a write committed through another store on the same database', async () => {
      const url = t.path('/tickets?limit=5');
      const board = t.path('/tickets/board');
      expect((await t.request({ method: 'GET', url })).json().total).toBe(0);
      expect((await t.request({ method: 'GET', url: board })).json().board.columns[0].total).toBe(0);
      const other = t.database.open();
      try {
        const elsewhere = { ...t.ctx, store: other };
        for (let n = 1; n <= 3; n++) {
          const ticket = await ticketService.createTicket(elsewhere, t.org, { type: 'task', title: `written elsewhere ${n}` });
          const list = (await t.request({ method: 'GET', url })).json();
          expect(list.total).toBe(2 * n - 1);
          expect(list.tickets[0].slug).toBe(ticket.slug);
          expect((await t.request({ method: 'GET', url: board })).json().board.columns[0].total).toBe(2 * n - 1);
          // And its own writes right after: the version read before them is not reused.
          await create({ type: 'bug', title: `written here ${n}` });
          expect((await t.request({ method: 'GET', url })).json().total).toBe(2 * n);
          await ticketService.updateTicket(elsewhere, t.org.id, ticket.slug, { title: `renamed elsewhere ${n}` });
          expect((await t.request({ method: 'GET', url: t.path(`/tickets/${ticket.slug}`) })).json().ticket.title).toBe(`renamed elsewhere ${n}`);
        }
      } finally {
        await other.close();
      }
    });
  });

  describe('GET /tickets/board', () => {
    it('returns the five columns in order with totals, priority order and limit_per_column', async () => {
      await create({ type: 'bug', title: 'low', priority: 'low' });
      await create({ type: 'bug', title: 'high', priority: 'high' });
      await create({ type: 'bug', title: 'urgent', priority: 'urgent' });
      await create({ type: 'bug', title: 'done', status: 'done' });
      const response = await t.request({ method: 'GET', url: t.path('/tickets/board?limit_per_column=2') });
      expect(response.statusCode).toBe(200);
      const { columns } = response.json().board;
      expect(columns.map((c: { status: string }) => c.status)).toEqual(['backlog', 'todo', 'in_progress', 'in_review', 'done']);
      expect(columns[0].total).toBe(3);
      expect(columns[0].tickets.map((x: { title: string }) => x.title)).toEqual(['urgent', 'high']);
      expect(Object.keys(columns[0].tickets[0]).sort()).toEqual(['assignee_id', 'id', 'labels', 'priority', 'slug', 'title', 'type']);
      expect(columns[4]).toMatchObject({ total: 1 });
      expect(columns[1]).toEqual({ status: 'todo', total: 0, tickets: [] });
    });

    it("carries each ticket's labels (a card keeps them after a reload)", async () => {
      await create({ type: 'task', title: 'labelled', labels: ['ui', 'api'] });
      await create({ type: 'task', title: 'bare' });
      const { columns } = (await t.request({ method: 'GET', url: t.path('/tickets/board') })).json().board;
      const cards = columns[0].tickets as Array<{ title: string; labels: string[] }>;
      expect(cards.find((c) => c.title === 'labelled')!.labels.sort()).toEqual(['api', 'ui']);
      expect(cards.find((c) => c.title === 'bare')!.labels).toEqual([]);
    });

    it('filters by repository_id', async () => {
      await create({ type: 'bug', title: 'no repo' });
      const response = await t.request({ method: 'GET', url: t.path('/tickets/board?repository_id=77') });
      expect(response.statusCode).toBe(200);
      expect(response.json().board.columns.every((c: { total: number }) => c.total === 0)).toBe(true);
    });
  });

  describe('GET /tickets/:slug', () => {
    it('finds a ticket ignoring case, and 404s for unknown slugs', async () => {
      await create({ type: 'bug', title: 'x' });
      const found = await t.request({ method: 'GET', url: t.path('/tickets/acme-1') });
      expect(found.statusCode).toBe(200);
      expect(found.json().ticket.slug).toBe('ACME-1');
      const missing = await t.request({ method: 'GET', url: t.path('/tickets/ACME-2') });
      expect(missing.statusCode).toBe(404);
      expect(missing.json().code).toBe('NOT_FOUND');
    });
  });

  describe('PUT /tickets/:slug', () => {
    it('changes only the given fields; null clears assignee, parent and description', async () => {
      const user = await admin.createUser(t.ctx, 'acme', { name: 'Ann', email: 'ann@example.com' });
      const parent = await create({ type: 'feature', title: 'parent' });
      const ticket = await create({ type: 'bug', title: 'x', assignee_id: user.id, parent_slug: parent.slug, description: 'd', labels: ['a'] });
      const renamed = await t.request({ method: 'PUT', url: t.path(`/tickets/${ticket.slug}`), payload: { title: 'renamed', labels: ['b'] } });
      expect(renamed.statusCode).toBe(200);
      expect(renamed.json().ticket).toMatchObject({ title: 'renamed', labels: ['b'], assignee_id: user.id, parent_slug: parent.slug, description: 'd', type: 'bug' });
      const cleared = await t.request({
        method: 'PUT',
        url: t.path(`/tickets/${ticket.slug}`),
        payload: { assignee_id: null, parent_slug: null, description: null, status: 'in_review', priority: 'high', type: 'chore' },
      });
      expect(cleared.json().ticket).toMatchObject({ assignee_id: null, parent_slug: null, description: null, status: 'in_review', priority: 'high', type: 'chore', title: 'renamed' });
      const board = (await t.request({ method: 'GET', url: t.path('/tickets/board') })).json().board;
      expect(board.columns[3].total).toBe(1);
    });

    it('rejects cycles, unknown parents and users, and 404s for unknown tickets', async () => {
      const a = await create({ type: 'task', title: 'a' });
      const b = await create({ type: 'task', title: 'b', parent_slug: a.slug });
      for (const payload of [{ parent_slug: b.slug }, { parent_slug: a.slug }, { parent_slug: 'ACME-99' }, { assignee_id: 42 }]) {
        const response = await t.request({ method: 'PUT', url: t.path(`/tickets/${a.slug}`), payload });
        expect(response.statusCode, JSON.stringify(payload)).toBe(400);
      }
      expect((await t.request({ method: 'GET', url: t.path(`/tickets/${a.slug}`) })).json().ticket.parent_slug).toBeNull();
      const missing = await t.request({ method: 'PUT', url: t.path('/tickets/ACME-99'), payload: { title: 'x' } });
      expect(missing.statusCode).toBe(404);
    });
  });

  describe('PATCH /tickets/:slug/status', () => {
    it('moves the ticket and answers with a message', async () => {
      const ticket = await create({ type: 'bug', title: 'x' });
      const response = await t.request({ method: 'PATCH', url: t.path(`/tickets/${ticket.slug}/status`), payload: { status: 'in_progress' } });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ message: expect.stringContaining('in_progress') });
      expect((await t.request({ method: 'GET', url: t.path(`/tickets/${ticket.slug}`) })).json().ticket.status).toBe('in_progress');
    });

    it('requires a valid status and an existing ticket', async () => {
      const ticket = await create({ type: 'bug', title: 'x' });
      for (const payload of [{}, { status: 'open' }, { status: 3 }, { status: 'done', extra: 1 }]) {
        const response = await t.request({ method: 'PATCH', url: t.path(`/tickets/${ticket.slug}/status`), payload });
        expect(response.statusCode).toBe(400);
      }
      const missing = await t.request({ method: 'PATCH', url: t.path('/tickets/ACME-9/status'), payload: { status: 'done' } });
      expect(missing.statusCode).toBe(404);
    });
  });

  describe('DELETE /tickets/:slug', () => {
    it('deletes the ticket, detaches its children, and 404s afterwards', async () => {
      const parent = await create({ type: 'feature', title: 'parent' });
      const child = await create({ type: 'task', title: 'child', parent_slug: parent.slug });
      const response = await t.request({ method: 'DELETE', url: t.path(`/tickets/${parent.slug}`) });
      expect(response.statusCode).toBe(200);
      expect(response.json().message).toContain(parent.slug);
      expect((await t.request({ method: 'GET', url: t.path(`/tickets/${parent.slug}`) })).statusCode).toBe(404);
      expect((await t.request({ method: 'GET', url: t.path(`/tickets/${child.slug}`) })).json().ticket.parent_slug).toBeNull();
      expect((await t.request({ method: 'DELETE', url: t.path(`/tickets/${parent.slug}`) })).statusCode).toBe(404);
      expect((await t.request({ method: 'GET', url: t.path('/tickets') })).json().total).toBe(1);
    });
  });
});
