/**
 * Authentication, organization and scope checks of the eleven loop endpoints (docs/api.md
 * "Authentication", "Errors"), under both prefixes they are served at. Every refused request
 * must leave the loops, runs and pods exactly as they were. Malformed input: loops-malformed.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/protocol/scopes.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { expectError } from '../helpers/errors.ts';
import { securityMatrix } from '../helpers/security-matrix.ts';

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

/** All eleven loop endpoints (docs/api.md "Loops and runs"), disable before enable, so that run in order they all succeed. */
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
    const clock = Date.parse('2026-11-22T10:00:00.000Z');
    let mainRunId: number;
    let theirRunId: number;
    let otherKey: string;
    const keys: Record<'readOnly' | 'writeOnly' | 'unrelated', string> = { readOnly: '', writeOnly: '', unrelated: '' };

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

    let made = 0;
    /** A loop of our own with one run, for a call that changes what it addresses. */
    const freshLoop = async (): Promise<{ slug: string; run: number }> => {
      const slug = `fresh-${++made}`;
      const created = await t.request({ method: 'POST', url: `${prefix}/acme/loops`, payload: { name: slug, slug, agent_slug: 'shell', prompt_template: 'x', concurrency_policy: 'queue' } });
      expect(created.statusCode, created.body).toBe(201);
      const run = await t.request({ method: 'POST', url: `${prefix}/acme/loops/${slug}/trigger` });
      expect(run.statusCode, run.body).toBe(201);
      return { slug, run: (run.json() as { run: { id: number } }).run.id };
    };

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
    });
    afterAll(async () => {
      await t?.close();
    });

    securityMatrix<{ slug: string; run: number }>(
      ENDPOINTS.map((e) => ({
        ...e,
        path: ({ slug, run }) => fill(e, slug, run),
        // Names must not repeat: each successful create gets its own.
        payload: e.name === 'create loop' ? (n: number) => ({ ...e.payload, name: `${String(e.payload!.name)} ${n}` }) : e.payload,
        success: e.ok,
        addresses: e.path.includes(':slug'),
        changes: e.scope === 'loops:write',
      })),
      {
        app: () => t,
        url: (path, org) => `${prefix}/${org}${path}`,
        now: () => clock,
        foreign: () => ({ org: 'other', key: otherKey, target: { slug: 'theirs', run: theirRunId } }),
        target: (route, fresh) => (route.addresses && fresh ? freshLoop() : { slug: 'main', run: mainRunId }),
        missing: { slug: 'no-such-loop', run: 987_654 },
        probe: () => '/loops',
        snapshot,
      },
    );

    it.each(ENDPOINTS.filter((e) => e.method !== 'GET' && e.method !== 'DELETE').map((e) => [e.name, e] as const))(
      '%s: a key without loops scopes → 403 before 400 (the scope is checked before the body)',
      async (_name, e) => {
        const before = await snapshot();
        const res = await t.request({ method: e.method, url: `${prefix}/acme${fill(e)}`, key: keys.unrelated, payload: { name: 3, bogus: true, variables: [] } });
        expectError(res, 403, 'INSUFFICIENT_SCOPE');
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
