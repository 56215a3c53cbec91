/**
 * Security of the endpoints of issue 25: GET /activity, GET /users, GET /presets (org keys) and the
 * admin preset endpoints (admin token). Missing, malformed, revoked and expired keys are 401; keys of
 * another organization get 404; a key without a read scope gets 403 from /activity; refused
 * requests leave the presets table as it was; answers carry no email and only this org's data.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { securityMatrix } from '../helpers/security-matrix.ts';

const ORG_ENDPOINTS = ['/activity', '/users', '/presets'];

describe.each(DATABASES)('people endpoints security on %s', (kind) => {
  let t: TestApp;
  let foreignKey: string;
  const presetsRows = async () => JSON.stringify(await t.store.db.selectFrom('presets').selectAll().orderBy('id').execute());

  beforeAll(async () => {
    t = await startTestApp(kind);
    const globex = await t.createOrg('globex');
    foreignKey = (await t.issueKey(['tickets:read', 'pods:read', 'channels:read', 'loops:read', 'runners:read'], { org: globex })).key;
    await t.app.inject({ method: 'POST', url: '/api/v1/admin/orgs/acme/users', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name: 'Alice', email: 'alice@acme.test' } });
    await t.app.inject({ method: 'POST', url: '/api/v1/admin/orgs/globex/presets', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name: 'secret', agent_slug: 'shell', agentfile_layer: 'ENV SECRET_HINT "globex"' } });
    await t.request({ method: 'POST', url: t.path('/tickets', 'globex'), key: (await t.issueKey(['tickets:write'], { org: globex })).key, payload: { type: 'task', title: 'globex only' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  securityMatrix<null>(
    ORG_ENDPOINTS.map((endpoint) => ({ name: `GET ${endpoint}`, method: 'GET', path: () => endpoint, success: 200, addresses: false, changes: false })),
    {
      app: () => t,
      foreign: () => ({ org: 'globex', key: foreignKey, target: null }),
      target: () => null,
      missing: null,
      probe: () => '/users',
      snapshot: presetsRows,
      anyKey: ['tickets:read'],
    },
  );

  for (const endpoint of ORG_ENDPOINTS) {
    it(`GET ${endpoint}: another organization's own org shows none of this org's data`, async () => {
      const own = await t.request({ method: 'GET', url: t.path(endpoint, 'globex'), key: foreignKey });
      expect(own.statusCode).toBe(200);
      expect(own.body).not.toContain('Alice');
      expect(own.body).not.toContain('acme');
    });
  }

  it('GET /activity needs a read scope; GET /users never shows emails', async () => {
    const writer = await t.issueKey(['repos:read']);
    const refused = await t.request({ method: 'GET', url: t.path('/activity'), key: writer.key });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe('INSUFFICIENT_SCOPE');
    const users = await t.request({ method: 'GET', url: t.path('/users'), key: writer.key });
    expect(users.statusCode).toBe(200);
    expect(users.body).not.toContain('@');
  });

  describe('admin preset endpoints', () => {
    const calls: [string, string, object | undefined][] = [
      ['POST', '/orgs/acme/presets', { name: 'p', agent_slug: 'shell' }],
      ['GET', '/orgs/acme/presets', undefined],
      ['GET', '/orgs/acme/presets/p', undefined],
      ['PUT', '/orgs/acme/presets/p', { description: 'x' }],
      ['DELETE', '/orgs/acme/presets/p', undefined],
    ];
    it('no admin token, a wrong one, or an org key → 401, nothing written', async () => {
      const before = await presetsRows();
      for (const [method, url, payload] of calls) {
        for (const headers of [{}, { authorization: 'Bearer wrong-token' }, { authorization: `Bearer ${t.key}` }, { 'x-api-key': ADMIN_TOKEN }]) {
          const response = await t.app.inject({ method: method as 'GET', url: `/api/v1/admin${url}`, headers, ...(payload ? { payload } : {}) });
          expect(response.statusCode, `${method} ${url} ${JSON.stringify(headers)}`).toBe(401);
        }
      }
      expect(await presetsRows()).toBe(before);
    });

    it('an unknown organization → 404; malformed bodies → 400, nothing written', async () => {
      const before = await presetsRows();
      const post = (url: string, payload: unknown) => t.app.inject({ method: 'POST', url: `/api/v1/admin${url}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: payload as object });
      expect((await post('/orgs/nope/presets', { name: 'p', agent_slug: 'shell' })).statusCode).toBe(404);
      for (const body of [{}, { name: 'p' }, { agent_slug: 'shell' }, { name: 'p', agent_slug: 'shell', extra: 1 }, { name: 'p', agent_slug: 7 }, { name: 'p', agent_slug: 'shell', agentfile_layer: 'x'.repeat(33 * 1024) }, { name: 'p', agent_slug: 'shell', agentfile_layer: 'ENV A "\u0000"' }]) {
        const response = await post('/orgs/acme/presets', body);
        expect(response.statusCode, JSON.stringify(body).slice(0, 80)).toBe(400);
      }
      expect(await presetsRows()).toBe(before);
    });
  });
});
