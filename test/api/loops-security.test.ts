/**
 * Authentication, organization and scope checks of the eleven loop endpoints (docs/api.md "Order of
 * checks", "Scopes", "Error body"), under both prefixes they are served at. Every refused request
 * must leave the loops, runs and pods exactly as they were. Malformed input: loops-malformed.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../src/protocol/scopes.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { expectError } from '../helpers/errors.ts';

const PREFIXES = ['/api/v1/ext/orgs', '/api/v1/orgs'] as const;

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
interface Endpoint {
  name: string;
  method: Method;
  /** `:slug` and `:run` are filled in per test. */
  path: string;
  scope: 'loops:read' | 'loops:write';
  payload?: Record<string, unknown>;
  /** The status of a successful call with a full key on our loop. */
  ok: number;
}

/** All eleven, in the order of external-api "Loops" except that disable precedes enable, so that run in order they all succeed. */
const ENDPOINTS: Endpoint[] = [
  { name: 'list loops', method: 'GET', path: '/loops', scope: 'loops:read', ok: 200 },
  { name: 'create loop', method: 'POST', path: '/loops', scope: 'loops:write', payload: { name: 'Sneaky', prompt_template: 'x', agent_slug: 'shell' }, ok: 201 },
  { name: 'get loop', method: 'GET', path: '/loops/:slug', scope: 'loops:read', ok: 200 },
  { name: 'update loop', method: 'PUT', path: '/loops/:slug', scope: 'loops:write', payload: { description: 'changed' }, ok: 200 },
  { name: 'disable loop', method: 'POST', path: '/loops/:slug/disable', scope: 'loops:write', ok: 200 },
  { name: 'enable loop', method: 'POST', path: '/loops/:slug/enable', scope: 'loops:write', ok: 200 },
  { name: 'trigger', method: 'POST', path: '/loops/:slug/trigger', scope: 'loops:write', payload: { variables: { x: 'y' } }, ok: 201 },
  { name: 'list runs', method: 'GET', path: '/loops/:slug/runs', scope: 'loops:read', ok: 200 },
  { name: 'get run', method: 'GET', path: '/loops/:slug/runs/:run', scope: 'loops:read', ok: 200 },
  { name: 'cancel run', method: 'POST', path: '/loops/:slug/runs/:run/cancel', scope: 'loops:write', ok: 200 },
  { name: 'delete loop', method: 'DELETE', path: '/loops/:slug', scope: 'loops:write', ok: 200 },
];

describe.each(DATABASES)('loops security on %s', (kind) => {
  describe.each(PREFIXES)('under %s/{org}', (prefix) => {
    let t: TestApp;
    let clock = Date.parse('2026-11-22T10:00:00.000Z');
    let mainRunId: number;
    let theirRunId: number;
    let otherKey: string;
    const keys: Record<'readOnly' | 'writeOnly' | 'unrelated' | 'almost' | 'revoked' | 'expired', string> = {
      readOnly: '',
      writeOnly: '',
      unrelated: '',
      almost: '',
      revoked: '',
      expired: '',
    };

    const fill = (e: Endpoint, slug = 'main', run = mainRunId) => e.path.replace(':slug', slug).replace(':run', String(run));
    const send = (e: Endpoint, options: { key?: string | null; org?: string; slug?: string; run?: number; headers?: Record<string, string> } = {}) =>
      t.request({
        method: e.method,
        url: `${prefix}/${options.org ?? 'acme'}${fill(e, options.slug, options.run)}`,
        key: options.key,
        headers: options.headers,
        ...(e.payload ? { payload: e.payload } : {}),
      });

    /** Everything a loop request could change. */
    const snapshot = async () => ({
      loops: await t.store.db.selectFrom('loops').selectAll().orderBy('id').execute(),
      runs: await t.store.db.selectFrom('loop_runs').selectAll().orderBy('id').execute(),
      pods: await t.store.db.selectFrom('pods').select(['key', 'status', 'desired_state']).orderBy('id').execute(),
      outbox: await t.store.db.selectFrom('webhook_deliveries').select('id').execute(),
    });

    beforeAll(async () => {
      t = await startTestApp(kind, { now: () => clock });
      const created = await t.request({
        method: 'POST',
        url: `${prefix}/acme/loops`,
        payload: { name: 'Main', slug: 'main', agent_slug: 'shell', prompt_template: 'echo {{ x }}', prompt_variables: { x: 1 }, concurrency_policy: 'queue', callback_url: 'https://hooks.example.com/x' },
      });
      expect(created.statusCode, created.body).toBe(201);
      const run = await t.request({ method: 'POST', url: `${prefix}/acme/loops/main/trigger` });
      expect(run.statusCode, run.body).toBe(201);
      mainRunId = (run.json() as { run: { id: number } }).run.id;

      const other = await t.createOrg('other');
      otherKey = (await t.issueKey(SCOPES, { org: other })).key;
      const theirs = await t.request({ method: 'POST', url: `${prefix}/other/loops`, key: otherKey, payload: { name: 'Theirs', slug: 'theirs', agent_slug: 'shell', prompt_template: 'x', concurrency_policy: 'queue' } });
      expect(theirs.statusCode, theirs.body).toBe(201);
      const theirRun = await t.request({ method: 'POST', url: `${prefix}/other/loops/theirs/trigger`, key: otherKey });
      expect(theirRun.statusCode, theirRun.body).toBe(201);
      theirRunId = (theirRun.json() as { run: { id: number } }).run.id;

      keys.readOnly = (await t.issueKey(['loops:read'])).key;
      keys.writeOnly = (await t.issueKey(['loops:write'])).key;
      keys.unrelated = (await t.issueKey(['pods:write', 'tickets:write', 'channels:write', 'runners:read', 'repos:read'])).key;
      keys.almost = (await t.issueKey(SCOPES.filter((s) => s !== 'loops:write' && s !== 'loops:read') as Scope[])).key;
      const revoked = await t.issueKey(['loops:write']);
      const revoke = await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/orgs/acme/api-keys/${revoked.id}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(revoke.statusCode, revoke.body).toBe(200);
      keys.revoked = revoked.key;
      keys.expired = (await t.issueKey(['loops:write'], { expiresAt: new Date(clock + 60_000).toISOString() })).key;
      clock += 120_000;
    });
    afterAll(async () => {
      await t?.close();
    });

    it.each(ENDPOINTS.map((e) => [e.name, e] as const))('%s: no key → 401 AUTH_REQUIRED, also for an unknown org', async (_name, e) => {
      const before = await snapshot();
      expectError(await send(e, { key: null }), 401, 'AUTH_REQUIRED');
      expectError(await send(e, { key: null, org: 'no-such-org' }), 401, 'AUTH_REQUIRED');
      expectError(await send(e, { key: null, headers: { authorization: 'Bearer' } }), 401, 'AUTH_REQUIRED');
      expect(await snapshot()).toEqual(before);
    });

    it.each(ENDPOINTS.map((e) => [e.name, e] as const))('%s: unknown, malformed, revoked or expired key → 401 INVALID_API_KEY', async (_name, e) => {
      const before = await snapshot();
      const bad = [`drv_${'x'.repeat(40)}`, 'not-a-key', `${t.key}x`, t.key.slice(0, -1), keys.revoked, keys.expired];
      for (const key of bad) expectError(await send(e, { key }), 401, 'INVALID_API_KEY');
      expectError(await send(e, { key: null, headers: { authorization: `Bearer ${keys.revoked}` } }), 401, 'INVALID_API_KEY');
      // X-API-Key wins over Authorization: a bad X-API-Key is refused even beside a good bearer token.
      expectError(await send(e, { key: keys.revoked, headers: { authorization: `Bearer ${t.key}` } }), 401, 'INVALID_API_KEY');
      // 401 comes before 404: a bad key on an unknown org is still 401.
      expectError(await send(e, { key: keys.expired, org: 'no-such-org' }), 401, 'INVALID_API_KEY');
      expect(await snapshot()).toEqual(before);
    });

    it.each(ENDPOINTS.map((e) => [e.name, e] as const))('%s: a key of another org, or an unknown org → 404 NOT_FOUND (before the scope check)', async (_name, e) => {
      const before = await snapshot();
      expectError(await send(e, { key: otherKey }), 404, 'NOT_FOUND');
      expectError(await send(e, { org: 'no-such-org' }), 404, 'NOT_FOUND');
      // A key of ours without the scope, on another org: 404, not 403 (never reveal the org exists).
      expectError(await send(e, { key: keys.unrelated, org: 'other' }), 404, 'NOT_FOUND');
      expectError(await send(e, { key: keys.readOnly, org: 'other', slug: 'theirs', run: theirRunId }), 404, 'NOT_FOUND');
      expect(await snapshot()).toEqual(before);
    });

    it.each(ENDPOINTS.map((e) => [e.name, e] as const))('%s: a key without loops scopes → 403 INSUFFICIENT_SCOPE naming the scope', async (_name, e) => {
      const before = await snapshot();
      for (const key of [keys.unrelated, keys.almost]) {
        const body = expectError(await send(e, { key }), 403, 'INSUFFICIENT_SCOPE');
        expect(body.required_scopes).toEqual([e.scope]);
      }
      // 403 comes before 400 and 404: the scope is checked before the body and the loop.
      const missing = expectError(await send(e, { key: keys.unrelated, slug: 'no-such-loop', run: 987_654 }), 403, 'INSUFFICIENT_SCOPE');
      expect(missing.required_scopes).toEqual([e.scope]);
      if (e.method !== 'GET' && e.method !== 'DELETE') {
        const res = await t.request({ method: e.method, url: `${prefix}/acme${fill(e)}`, key: keys.unrelated, payload: { name: 3, bogus: true, variables: [] } });
        expectError(res, 403, 'INSUFFICIENT_SCOPE');
      }
      expect(await snapshot()).toEqual(before);
    });

    it.each(ENDPOINTS.filter((e) => e.scope === 'loops:write').map((e) => [e.name, e] as const))(
      '%s: a loops:read key → 403 with required_scopes [loops:write], nothing written',
      async (_name, e) => {
        const before = await snapshot();
        const body = expectError(await send(e, { key: keys.readOnly }), 403, 'INSUFFICIENT_SCOPE');
        expect(body.required_scopes).toEqual(['loops:write']);
        expect(body.error).toContain('loops:write');
        expectError(await send(e, { key: null, headers: { authorization: `bearer ${keys.readOnly}` } }), 403, 'INSUFFICIENT_SCOPE');
        expect(await snapshot()).toEqual(before);
      },
    );

    it.each(ENDPOINTS.filter((e) => e.scope === 'loops:read').map((e) => [e.name, e] as const))(
      '%s: loops:read and loops:write (which implies read) keys may read; Bearer works',
      async (_name, e) => {
        const before = await snapshot();
        for (const key of [keys.readOnly, keys.writeOnly, t.key]) expect((await send(e, { key })).statusCode).toBe(200);
        expect((await send(e, { key: null, headers: { authorization: `Bearer ${keys.readOnly}` } })).statusCode).toBe(200);
        expect((await send(e, { key: null, headers: { authorization: `BEARER   ${keys.writeOnly}` } })).statusCode).toBe(200);
        // A good X-API-Key wins over a bad bearer token.
        expect((await send(e, { key: keys.readOnly, headers: { authorization: 'Bearer drv_nonsense' } })).statusCode).toBe(200);
        expect(await snapshot()).toEqual(before);
      },
    );

    it('a loops:read key never sees callback_secret; a loops:write key does', async () => {
      const read = (await send(ENDPOINTS[2], { key: keys.readOnly })).json() as { loop: Record<string, unknown> };
      expect(read.loop).not.toHaveProperty('callback_secret');
      const list = (await send(ENDPOINTS[0], { key: keys.readOnly })).json() as { loops: Record<string, unknown>[] };
      for (const l of list.loops) expect(l).not.toHaveProperty('callback_secret');
      const write = (await send(ENDPOINTS[2], { key: keys.writeOnly })).json() as { loop: Record<string, unknown> };
      expect(write.loop.callback_secret).toMatch(/^whsec_/);
    });

    it("another org's loop slug and run ids, addressed through our org → 404, their loop unchanged", async () => {
      const theirs = () => t.store.db.selectFrom('loops').selectAll().where('slug', '=', 'theirs').executeTakeFirstOrThrow();
      const before = await snapshot();
      const row = await theirs();
      for (const e of ENDPOINTS.filter((x) => x.path.includes(':slug'))) {
        expectError(await send(e, { slug: 'theirs', run: theirRunId }), 404, 'NOT_FOUND');
        // Their run id under our loop: 404 as well.
        if (e.path.includes(':run')) expectError(await send(e, { slug: 'main', run: theirRunId }), 404, 'NOT_FOUND');
      }
      expect(await snapshot()).toEqual(before);
      expect(await theirs()).toEqual(row);
      const theirRun = await t.request({ method: 'GET', url: `${prefix}/other/loops/theirs/runs/${theirRunId}`, key: otherKey });
      expect((theirRun.json() as { run: { status: string } }).run.status).toBe('pending');
      // Our list does not show it; theirs does not show ours.
      const ours = (await send(ENDPOINTS[0])).json() as { loops: { slug: string }[] };
      expect(ours.loops.map((l) => l.slug)).not.toContain('theirs');
      const list = (await t.request({ method: 'GET', url: `${prefix}/other/loops`, key: otherKey })).json() as { loops: { slug: string }[] };
      expect(list.loops.map((l) => l.slug)).toEqual(['theirs']);
    });

    it('with the right key, each endpoint answers as documented (the matrix above is not vacuous)', async () => {
      for (const e of ENDPOINTS) {
        const res = await send(e, { key: keys.writeOnly });
        expect(res.statusCode, `${e.name}: ${res.body}`).toBe(e.ok);
      }
      expectError(await send(ENDPOINTS[2], { key: keys.writeOnly }), 404, 'NOT_FOUND');
    });
  });
});
