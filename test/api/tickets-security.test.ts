/**
 * The security matrix of the seven ticket endpoints (docs/api.md "Authentication",
 * "Errors"): missing, malformed, unknown, revoked and expired keys; scopes; foreign and
 * unknown organizations; tickets of another organization; both auth headers; and the order
 * 401 → 404 → 403 → 400 when the body is malformed too. Every row runs against every endpoint and
 * every database.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../src/protocol/scopes.ts';
import type { OrgRow } from '../../src/store/schema.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { expectError } from '../helpers/errors.ts';
import { securityMatrix } from '../helpers/security-matrix.ts';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

interface Endpoint {
  name: string;
  method: Method;
  scope: Extract<Scope, 'tickets:read' | 'tickets:write'>;
  /** The path below /orgs/{org}; `slug` is an existing ticket for the routes that address one. */
  path: (slug: string) => string;
  /** A valid body for the write routes. */
  body?: Record<string, unknown>;
  /** The status of a successful call. */
  success: number;
  addressesTicket: boolean;
}

const ENDPOINTS: Endpoint[] = [
  { name: 'GET /tickets', method: 'GET', scope: 'tickets:read', path: () => '/tickets', success: 200, addressesTicket: false },
  { name: 'GET /tickets/board', method: 'GET', scope: 'tickets:read', path: () => '/tickets/board', success: 200, addressesTicket: false },
  { name: 'GET /tickets/:slug', method: 'GET', scope: 'tickets:read', path: (s) => `/tickets/${s}`, success: 200, addressesTicket: true },
  {
    name: 'POST /tickets',
    method: 'POST',
    scope: 'tickets:write',
    path: () => '/tickets',
    body: { type: 'bug', title: 'Created by the security matrix', labels: ['matrix'] },
    success: 201,
    addressesTicket: false,
  },
  {
    name: 'PUT /tickets/:slug',
    method: 'PUT',
    scope: 'tickets:write',
    path: (s) => `/tickets/${s}`,
    body: { title: 'Changed by the security matrix', priority: 'urgent', labels: ['changed'] },
    success: 200,
    addressesTicket: true,
  },
  {
    name: 'PATCH /tickets/:slug/status',
    method: 'PATCH',
    scope: 'tickets:write',
    path: (s) => `/tickets/${s}/status`,
    body: { status: 'done' },
    success: 200,
    addressesTicket: true,
  },
  { name: 'DELETE /tickets/:slug', method: 'DELETE', scope: 'tickets:write', path: (s) => `/tickets/${s}`, success: 200, addressesTicket: true },
];
const WRITE_ENDPOINTS = ENDPOINTS.filter((e) => e.scope === 'tickets:write');
const TICKET_ENDPOINTS = ENDPOINTS.filter((e) => e.addressesTicket);

describe.each(DATABASES)('ticket endpoints security on %s', (kind) => {
  let t: TestApp;
  let clock = Date.parse('2026-03-01T12:00:00.000Z');
  let globex: OrgRow;
  let globexKey: string;
  let readKey: string;
  let fixtureSlug: string;
  let globexSlug: string;

  type Send = { slug?: string; org?: string; key?: string | null; headers?: Record<string, string>; payload?: unknown };
  const send = (ep: Endpoint, options: Send = {}): Promise<LightMyRequestResponse> => {
    const { slug = fixtureSlug, org, key, headers, payload } = options;
    const body = payload !== undefined ? payload : ep.body;
    return t.request({
      method: ep.method,
      url: t.path(ep.path(slug), org),
      key,
      headers,
      ...(body === undefined ? {} : typeof body === 'string' ? { payload: body, headers: { 'content-type': 'application/json', ...headers } } : { payload: body as object }),
    });
  };

  const createTicket = async (key = t.key, org?: string): Promise<string> => {
    const res = await t.request({
      method: 'POST',
      url: t.path('/tickets', org),
      key,
      payload: { type: 'feature', title: 'A ticket to act on', description: 'details', labels: ['one', 'two'], priority: 'high' },
    });
    expect(res.statusCode, res.body).toBe(201);
    return (res.json() as { ticket: { slug: string } }).ticket.slug;
  };

  const getTicket = async (slug: string, key = t.key, org?: string) => {
    const res = await t.request({ method: 'GET', url: t.path(`/tickets/${slug}`, org), key });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { ticket: Record<string, unknown> };
  };

  const total = async (key = t.key, org?: string): Promise<number> => {
    const res = await t.request({ method: 'GET', url: t.path('/tickets', org), key });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { total: number }).total;
  };

  /** Every ticket-related row, in a stable order: a rejected request must not change any of them. */
  const snapshot = async () => {
    const db = t.store.db;
    const [tickets, labels, sequences, counts, idempotency] = await Promise.all([
      db.selectFrom('tickets').selectAll().orderBy('id').execute(),
      db.selectFrom('ticket_labels').selectAll().orderBy('ticket_id').orderBy('label').execute(),
      db.selectFrom('ticket_sequences').selectAll().orderBy('org_id').orderBy('prefix').execute(),
      db.selectFrom('ticket_counts').selectAll().orderBy('org_id').orderBy('repo_key').orderBy('status').execute(),
      db.selectFrom('idempotency_keys').select(['api_key_id', 'key']).orderBy('api_key_id').orderBy('key').execute(),
    ]);
    return { tickets, labels, sequences, counts, idempotency };
  };

  /** A target ticket for the routes that address one; a fresh one when the call may change it. */
  const target = async (ep: Endpoint, mayChange: boolean): Promise<string> => (ep.addressesTicket && mayChange ? createTicket() : fixtureSlug);

  beforeAll(async () => {
    t = await startTestApp(kind, { now: () => clock });
    globex = await t.createOrg('globex');
    globexKey = (await t.issueKey(SCOPES, { org: globex })).key;
    readKey = (await t.issueKey(['tickets:read'])).key;
    fixtureSlug = await createTicket();
    globexSlug = await createTicket(globexKey, 'globex');
  });

  afterAll(async () => {
    await t?.close();
  });

  securityMatrix<string>(
    ENDPOINTS.map((ep) => ({ ...ep, payload: ep.body, addresses: ep.addressesTicket, changes: ep.scope === 'tickets:write' })),
    {
      app: () => t,
      now: () => clock,
      foreign: () => ({ org: 'globex', key: globexKey, target: globexSlug }),
      target: (ep, fresh) => (ep.addresses && fresh ? createTicket() : fixtureSlug),
      missing: 'ACME-99999',
      probe: () => '/tickets',
      snapshot,
    },
  );

  it('an expired key is valid until the instant of expiry, then 401 INVALID_API_KEY', async () => {
    const expiresAt = clock + 60_000;
    const { key } = await t.issueKey(SCOPES, { expiresAt: new Date(expiresAt).toISOString() });
    clock = expiresAt - 1;
    expect((await t.request({ method: 'GET', url: t.path('/tickets'), key })).statusCode).toBe(200);
    for (const ep of ENDPOINTS) {
      clock = expiresAt;
      const before = await snapshot();
      expectError(await send(ep, { key }), 401, 'INVALID_API_KEY');
      clock = expiresAt + 24 * 60 * 60 * 1000;
      expectError(await send(ep, { key }), 401, 'INVALID_API_KEY');
      expect(await snapshot()).toEqual(before);
    }
  });

  describe.each(WRITE_ENDPOINTS)('$name', (ep) => {
    it('a read-only key (tickets:read) leaves the ticket and the total as they were', async () => {
      const slug = await target(ep, true);
      const ticketBefore = await getTicket(slug);
      const totalBefore = await total();
      expectError(await send(ep, { key: readKey, slug, headers: { 'idempotency-key': `ro-${ep.method}` } }), 403, 'INSUFFICIENT_SCOPE');
      expect(await total()).toBe(totalBefore);
      expect(await getTicket(slug)).toEqual(ticketBefore);
    });
  });

  describe('order of checks with a malformed body', () => {
    const BAD_BODIES: { name: string; payload: string; code: string; status: number; endpoints: Endpoint[] }[] = [
      { name: 'invalid JSON', payload: '{"type": "bug",', code: 'INVALID_JSON', status: 400, endpoints: WRITE_ENDPOINTS },
      { name: 'a JSON array', payload: '[]', code: 'VALIDATION_FAILED', status: 400, endpoints: WRITE_ENDPOINTS },
      {
        name: 'wrong types and an unknown field',
        payload: '{"type": 3, "title": ["x"], "status": 7, "bogus": true}',
        code: 'VALIDATION_FAILED',
        status: 400,
        endpoints: WRITE_ENDPOINTS.filter((e) => e.method !== 'DELETE'),
      },
    ];

    for (const bad of BAD_BODIES) {
      describe.each(bad.endpoints)(`$name with ${bad.name}`, (ep) => {
        it('no key → 401, not 400', async () => {
          expectError(await send(ep, { key: null, payload: bad.payload }), 401, 'AUTH_REQUIRED');
          expectError(await send(ep, { key: 'garbage', payload: bad.payload }), 401, 'INVALID_API_KEY');
        });

        it("another org's key → 404, not 400", async () => {
          expectError(await send(ep, { key: globexKey, payload: bad.payload }), 404, 'NOT_FOUND');
          expectError(await send(ep, { org: 'no-such-org', payload: bad.payload }), 404, 'NOT_FOUND');
        });

        it('a read-only key → 403, not 400', async () => {
          const body = expectError(await send(ep, { key: readKey, payload: bad.payload }), 403, 'INSUFFICIENT_SCOPE');
          expect(body.required_scopes).toEqual(['tickets:write']);
        });

        it(`a full key → ${bad.status} ${bad.code}`, async () => {
          const before = await snapshot();
          expectError(await send(ep, { payload: bad.payload }), bad.status, bad.code);
          expect(await snapshot()).toEqual(before);
        });
      });
    }

    describe.each(WRITE_ENDPOINTS)('$name with a wrong content type or an oversized body', (ep) => {
      const plain = { 'content-type': 'text/plain' };
      const huge = JSON.stringify({ title: 'x'.repeat(1024 * 1024 + 1) });

      it('no key → 401 before 415 and 413', async () => {
        expectError(await t.request({ method: ep.method, url: t.path(ep.path(fixtureSlug)), key: null, payload: 'hello', headers: plain }), 401, 'AUTH_REQUIRED');
        expectError(await send(ep, { key: null, payload: huge }), 401, 'AUTH_REQUIRED');
      });

      it('a read-only key → 403 before 415 and 413', async () => {
        expectError(await t.request({ method: ep.method, url: t.path(ep.path(fixtureSlug)), key: readKey, payload: 'hello', headers: plain }), 403, 'INSUFFICIENT_SCOPE');
        expectError(await send(ep, { key: readKey, payload: huge }), 403, 'INSUFFICIENT_SCOPE');
      });

      it('a full key → 415 and 413', async () => {
        const before = await snapshot();
        expectError(await t.request({ method: ep.method, url: t.path(ep.path(fixtureSlug)), payload: 'hello', headers: plain }), 415, 'UNSUPPORTED_MEDIA_TYPE');
        expectError(await send(ep, { payload: huge }), 413, 'PAYLOAD_TOO_LARGE');
        expect(await snapshot()).toEqual(before);
      });
    });
  });
});

describe.each(DATABASES)('tickets of another organization on %s', (kind) => {
  let t: TestApp;
  let globexKey: string;
  let initechKey: string;
  /** globex uses prefix GLX; initech uses prefix ACME, so its slugs look like acme's. */
  const foreignSlugs = ['GLX-1', 'glx-1', 'ACME-1', 'acme-1'];

  const ticketOf = async (slug: string, key: string, org: string) => {
    const res = await t.request({ method: 'GET', url: t.path(`/tickets/${slug}`, org), key });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { ticket: Record<string, unknown> };
  };

  beforeAll(async () => {
    t = await startTestApp(kind);
    const globex = await t.createOrg('globex', 'GLX');
    const initech = await t.createOrg('initech', 'ACME');
    globexKey = (await t.issueKey(SCOPES, { org: globex })).key;
    initechKey = (await t.issueKey(SCOPES, { org: initech })).key;
    for (const [key, org, expected] of [
      [globexKey, 'globex', 'GLX-1'],
      [initechKey, 'initech', 'ACME-1'],
    ] as const) {
      const res = await t.request({
        method: 'POST',
        url: t.path('/tickets', org),
        key,
        payload: { type: 'bug', title: `${org} secret`, description: 'not for acme', labels: ['private'] },
      });
      expect(res.statusCode, res.body).toBe(201);
      expect((res.json() as { ticket: { slug: string } }).ticket.slug).toBe(expected);
    }
  });

  afterAll(async () => {
    await t?.close();
  });

  describe.each(TICKET_ENDPOINTS)("$name with acme's key on acme's path", (ep) => {
    it('→ 404 NOT_FOUND and the other org’s ticket is unchanged', async () => {
      const globexBefore = await ticketOf('GLX-1', globexKey, 'globex');
      const initechBefore = await ticketOf('ACME-1', initechKey, 'initech');
      for (const slug of foreignSlugs) {
        const res = await t.request({ method: ep.method, url: t.path(ep.path(slug)), ...(ep.body ? { payload: ep.body } : {}) });
        expectError(res, 404, 'NOT_FOUND');
        expect(res.body).not.toContain('secret');
      }
      expect(await ticketOf('GLX-1', globexKey, 'globex')).toEqual(globexBefore);
      expect(await ticketOf('ACME-1', initechKey, 'initech')).toEqual(initechBefore);
    });
  });

  it("acme's list and board do not show the other orgs' tickets", async () => {
    const list = await t.request({ method: 'GET', url: t.path('/tickets') });
    expect(list.statusCode).toBe(200);
    expect(list.json()).toMatchObject({ tickets: [], total: 0 });
    const board = await t.request({ method: 'GET', url: t.path('/tickets/board') });
    expect(board.statusCode).toBe(200);
    for (const column of (board.json() as { board: { columns: { total: number; tickets: unknown[] }[] } }).board.columns) {
      expect(column.total).toBe(0);
      expect(column.tickets).toEqual([]);
    }
  });

  it("acme's first ticket is ACME-1 in acme, independent of initech's ACME-1", async () => {
    const res = await t.request({ method: 'POST', url: t.path('/tickets'), payload: { type: 'task', title: 'acme own' } });
    expect(res.statusCode, res.body).toBe(201);
    expect((res.json() as { ticket: { slug: string } }).ticket.slug).toBe('ACME-1');
    const own = await ticketOf('ACME-1', t.key, 'acme');
    expect(own.ticket.title).toBe('acme own');
    expect((await ticketOf('ACME-1', initechKey, 'initech')).ticket.title).toBe('initech secret');
  });
});
