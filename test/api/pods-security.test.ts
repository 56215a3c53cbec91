/**
 * The security matrix of the pod and runner endpoints (docs/api.md "Auth header", "Order of checks",
 * "Scopes", "Error body"): missing, malformed, unknown, revoked and expired keys; scopes (and that a
 * pods:read key writes nothing); other organizations' keys, pods and runners; pod tokens. Every row
 * runs against every endpoint and every database, and every refused request must leave the pod,
 * runner and idempotency tables exactly as they were.
 *
 * Malformed input on these endpoints is pods-malformed.test.ts; behaviour is pods.test.ts and
 * runners.test.ts.
 */
import crypto from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../src/protocol/scopes.ts';
import type { OrgRow } from '../../src/store/schema.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { type ErrorBodyJson, expectError } from '../helpers/errors.ts';
import { insertRunner as insertRunnerRow } from '../helpers/runners.ts';

type Method = 'GET' | 'POST';

interface Endpoint {
  name: string;
  method: Method;
  scope: Extract<Scope, 'pods:read' | 'pods:write' | 'runners:read'>;
  /** The path below /orgs/{org}, given the pod key and runner id it addresses. */
  path: (podKey: string, runnerId: number) => string;
  body?: Record<string, unknown>;
  success: number;
  /** Whether the route addresses one pod (by key) or one runner (by id). */
  addresses: 'pod' | 'runner' | null;
  /** Whether a successful call changes the addressed pod (so it needs a fresh one). */
  changes: boolean;
}

const ENDPOINTS: Endpoint[] = [
  { name: 'GET /pods', method: 'GET', scope: 'pods:read', path: () => '/pods', success: 200, addresses: null, changes: false },
  { name: 'GET /pods/:key', method: 'GET', scope: 'pods:read', path: (k) => `/pods/${k}`, success: 200, addresses: 'pod', changes: false },
  { name: 'GET /pods/:key/output', method: 'GET', scope: 'pods:read', path: (k) => `/pods/${k}/output?tail_bytes=10`, success: 200, addresses: 'pod', changes: false },
  {
    name: 'POST /pods',
    method: 'POST',
    scope: 'pods:write',
    path: () => '/pods',
    body: { agent_slug: 'shell', agentfile_layer: 'PROMPT "security matrix"', alias: 'matrix' },
    success: 201,
    addresses: null,
    changes: true,
  },
  { name: 'POST /pods/:key/terminate', method: 'POST', scope: 'pods:write', path: (k) => `/pods/${k}/terminate`, success: 200, addresses: 'pod', changes: true },
  { name: 'GET /runners', method: 'GET', scope: 'runners:read', path: () => '/runners', success: 200, addresses: null, changes: false },
  { name: 'GET /runners/available', method: 'GET', scope: 'runners:read', path: () => '/runners/available', success: 200, addresses: null, changes: false },
  { name: 'GET /runners/:id', method: 'GET', scope: 'runners:read', path: (_k, id) => `/runners/${id}`, success: 200, addresses: 'runner', changes: false },
  { name: 'GET /runners/:id/pods', method: 'GET', scope: 'runners:read', path: (_k, id) => `/runners/${id}/pods?limit=5`, success: 200, addresses: 'runner', changes: false },
];
const WRITE_ENDPOINTS = ENDPOINTS.filter((e) => e.scope === 'pods:write');

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const randomBase62 = (n: number): string => Array.from(crypto.randomBytes(n), (b) => BASE62[b % 62]).join('');

const MALFORMED_KEYS = [
  'garbage',
  'drv_',
  'drv_short',
  `DRV_${randomBase62(40)}`,
  `drv_${randomBase62(20)}-${randomBase62(19)}`,
  'drvpod_',
  `drvpod_${randomBase62(40)}`,
  `drvrun_${randomBase62(40)}`,
  `drvreg_${randomBase62(40)}`,
];

function insertRunner(t: TestApp, orgId: number, name: string): Promise<number> {
  return insertRunnerRow(t.store, orgId, { name, labels: '["secret-label"]' });
}

describe.each(DATABASES)('pod and runner endpoints security on %s', (kind) => {
  let t: TestApp;
  let globex: OrgRow;
  let globexKey: string;
  let runnerId: number;
  let fixturePod: string;
  let globexRunnerId: number;
  let globexPod: string;
  /** Keys of acme, by what they hold. */
  const keys = {} as Record<'podsRead' | 'podsWrite' | 'runnersRead' | 'noPodsNoRunners' | 'unrelated', string>;

  type Send = { podKey?: string; runner?: number; org?: string; key?: string | null; headers?: Record<string, string>; payload?: unknown };
  const send = (ep: Endpoint, options: Send = {}): Promise<LightMyRequestResponse> => {
    const { podKey = fixturePod, runner = runnerId, org, key, headers, payload } = options;
    const body = payload !== undefined ? payload : ep.body;
    return t.request({
      method: ep.method,
      url: t.path(ep.path(podKey, runner), org),
      key,
      ...(body === undefined
        ? { headers }
        : typeof body === 'string'
          ? { payload: body, headers: { 'content-type': 'application/json', ...headers } }
          : { payload: body as object, headers }),
    });
  };

  const createPod = async (key = t.key, org?: string): Promise<string> => {
    const res = await t.request({ method: 'POST', url: t.path('/pods', org), key, payload: { agent_slug: 'shell', agentfile_layer: 'PROMPT "fixture"' } });
    expect(res.statusCode, res.body).toBe(201);
    return (res.json() as { pod: { pod_key: string } }).pod.pod_key;
  };

  /** Every row a pod or runner request could touch, in a stable order. */
  const snapshot = async () => {
    const db = t.store.db;
    const [pods, runners, output, idempotency, tokens] = await Promise.all([
      db.selectFrom('pods').selectAll().orderBy('id').execute(),
      db.selectFrom('runners').selectAll().orderBy('id').execute(),
      db.selectFrom('pod_output_chunks').selectAll().orderBy('pod_id').orderBy('start_offset').execute(),
      db.selectFrom('idempotency_keys').select(['api_key_id', 'key', 'state']).orderBy('api_key_id').orderBy('key').execute(),
      db.selectFrom('runner_tokens').selectAll().orderBy('id').execute(),
    ]);
    return { pods, runners, output, idempotency, tokens };
  };

  /** The addressed pod for a call: a fresh one when the call may change it. */
  const target = async (ep: Endpoint, mayChange: boolean): Promise<string> => (ep.addresses === 'pod' && ep.changes && mayChange ? createPod() : fixturePod);

  beforeAll(async () => {
    t = await startTestApp(kind);
    runnerId = await insertRunner(t, t.org.id, 'acme-runner');
    fixturePod = await createPod();
    const pod = await t.store.db.selectFrom('pods').select('id').where('key', '=', fixturePod).executeTakeFirstOrThrow();
    await t.store.db.insertInto('pod_output_chunks').values({ pod_id: pod.id, start_offset: 0, end_offset: 18, data: 'secret acme output' }).execute();
    globex = await t.createOrg('globex');
    globexKey = (await t.issueKey(SCOPES, { org: globex })).key;
    globexRunnerId = await insertRunner(t, globex.id, 'globex-runner');
    globexPod = await createPod(globexKey, 'globex');
    keys.podsRead = (await t.issueKey(['pods:read'])).key;
    keys.podsWrite = (await t.issueKey(['pods:write'])).key;
    keys.runnersRead = (await t.issueKey(['runners:read'])).key;
    keys.noPodsNoRunners = (await t.issueKey(SCOPES.filter((s) => !s.startsWith('pods:') && s !== 'runners:read'))).key;
    keys.unrelated = (await t.issueKey(['tickets:write'])).key;
  });

  afterAll(async () => {
    await t?.close();
  });

  // No runner process beats here: keep the runners' heartbeats fresh so a slow database cannot make them stale.
  beforeEach(async () => {
    await t.store.db.updateTable('runners').set({ last_heartbeat_at: Date.now() }).execute();
  });

  describe.each(ENDPOINTS)('$name', (ep) => {
    it('without a key → 401 AUTH_REQUIRED, nothing written', async () => {
      const before = await snapshot();
      expectError(await send(ep, { key: null }), 401, 'AUTH_REQUIRED');
      expectError(await send(ep, { key: null, headers: { authorization: 'Bearer' } }), 401, 'AUTH_REQUIRED');
      expectError(await send(ep, { key: null, headers: { authorization: 'Bearer    ' } }), 401, 'AUTH_REQUIRED');
      expectError(await send(ep, { key: null, headers: { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` } }), 401, 'AUTH_REQUIRED');
      expectError(await send(ep, { key: null, headers: { authorization: t.key } }), 401, 'AUTH_REQUIRED');
      expect(await snapshot()).toEqual(before);
    });

    it('with a malformed or unknown key → 401 INVALID_API_KEY, nothing written', async () => {
      const before = await snapshot();
      for (const key of MALFORMED_KEYS) {
        expectError(await send(ep, { key }), 401, 'INVALID_API_KEY');
        expectError(await send(ep, { key: null, headers: { authorization: `Bearer ${key}` } }), 401, 'INVALID_API_KEY');
      }
      expectError(await send(ep, { key: `drv_${randomBase62(40)}` }), 401, 'INVALID_API_KEY');
      // Same prefix as a real key, different secret.
      expectError(await send(ep, { key: t.key.slice(0, -1) + (t.key.endsWith('a') ? 'b' : 'a') }), 401, 'INVALID_API_KEY');
      expectError(await send(ep, { key: `${t.key}x` }), 401, 'INVALID_API_KEY');
      expect(await snapshot()).toEqual(before);
    });

    it('with a key revoked through DELETE /api/v1/admin/orgs/acme/api-keys/:id → 401 INVALID_API_KEY, nothing written', async () => {
      const { id, key } = await t.issueKey([ep.scope]);
      const podKey = await target(ep, true);
      // The key works before it is revoked (checked on a read, so nothing changes).
      expect((await t.request({ method: 'GET', url: t.path(ep.scope === 'runners:read' ? '/runners' : '/pods'), key })).statusCode).toBe(200);
      const revoke = await t.request({ method: 'DELETE', url: `/api/v1/admin/orgs/acme/api-keys/${id}`, key: null, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(revoke.statusCode, revoke.body).toBe(200);
      const before = await snapshot();
      expectError(await send(ep, { key, podKey }), 401, 'INVALID_API_KEY');
      expectError(await send(ep, { key: null, podKey, headers: { authorization: `Bearer ${key}` } }), 401, 'INVALID_API_KEY');
      expect(await snapshot()).toEqual(before);
    });

    it('with an expired key → 401 INVALID_API_KEY, nothing written', async () => {
      const { id, key } = await t.issueKey(SCOPES);
      await t.store.db.updateTable('api_keys').set({ expires_at: Date.now() - 1000 }).where('id', '=', id).execute();
      const podKey = await target(ep, true);
      const before = await snapshot();
      expectError(await send(ep, { key, podKey }), 401, 'INVALID_API_KEY');
      expect(await snapshot()).toEqual(before);
    });

    it(`with a key lacking ${ep.scope} → 403 INSUFFICIENT_SCOPE with required_scopes, nothing written`, async () => {
      const podKey = await target(ep, true);
      const before = await snapshot();
      for (const key of [keys.noPodsNoRunners, keys.unrelated]) {
        const body = expectError(await send(ep, { key, podKey, headers: { 'idempotency-key': 'scope-check' } }), 403, 'INSUFFICIENT_SCOPE');
        expect(body.required_scopes).toEqual([ep.scope]);
        expect(body.error).toContain(ep.scope);
      }
      // pods:* does not grant runners:read, and runners:read does not grant pods:*.
      const crossKey = ep.scope === 'runners:read' ? keys.podsWrite : keys.runnersRead;
      expect(expectError(await send(ep, { key: crossKey, podKey }), 403, 'INSUFFICIENT_SCOPE').required_scopes).toEqual([ep.scope]);
      expect(await snapshot()).toEqual(before);
    });

    if (ep.scope === 'pods:write') {
      it('a pods:read key → 403 with required_scopes [pods:write], and nothing is written', async () => {
        const podKey = await target(ep, true);
        const before = await snapshot();
        const body = expectError(await send(ep, { key: keys.podsRead, podKey, headers: { 'idempotency-key': 'read-only' } }), 403, 'INSUFFICIENT_SCOPE');
        expect(body.required_scopes).toEqual(['pods:write']);
        expect(await snapshot()).toEqual(before);
        const pod = await t.request({ method: 'GET', url: t.path(`/pods/${podKey}`) });
        expect((pod.json() as { pod: { status: string } }).pod.status).toBe('initializing');
      });

      it('a pods:write key alone grants it', async () => {
        const res = await send(ep, { key: keys.podsWrite, podKey: await target(ep, true) });
        expect(res.statusCode, res.body).toBe(ep.success);
      });
    } else {
      it(`a ${ep.scope} key grants it`, async () => {
        const res = await send(ep, { key: ep.scope === 'pods:read' ? keys.podsRead : keys.runnersRead });
        expect(res.statusCode, res.body).toBe(200);
        if (ep.scope === 'pods:read') {
          // pods:write implies pods:read.
          const write = await send(ep, { key: keys.podsWrite });
          expect(write.statusCode, write.body).toBe(200);
        }
      });
    }

    it("a key of another org on acme's path → 404 NOT_FOUND, the same body as an unknown org, nothing written", async () => {
      const podKey = await target(ep, true);
      const before = await snapshot();
      const foreign = expectError(await send(ep, { key: globexKey, podKey }), 404, 'NOT_FOUND');
      const unknown = expectError(await send(ep, { org: 'no-such-org', podKey }), 404, 'NOT_FOUND');
      const { request_id: _a, ...foreignRest } = foreign;
      const { request_id: _b, ...unknownRest } = unknown;
      expect(foreignRest).toEqual(unknownRest);
      // 404 comes before 403: an acme key without the scope on globex's path.
      expectError(await send(ep, { key: keys.unrelated, org: 'globex', podKey }), 404, 'NOT_FOUND');
      expectError(await send(ep, { key: keys.podsRead, org: 'globex', podKey }), 404, 'NOT_FOUND');
      for (const org of ['ACME', 'acme-', 'acm']) expectError(await send(ep, { org, podKey }), 404, 'NOT_FOUND');
      expect(await snapshot()).toEqual(before);
    });

    if (ep.addresses !== null) {
      it(`another org's ${ep.addresses} through acme's path with acme's key → 404 NOT_FOUND, and it is unchanged`, async () => {
        const theirsBefore = await t.request({ method: 'GET', url: t.path(ep.addresses === 'pod' ? `/pods/${globexPod}` : `/runners/${globexRunnerId}`, 'globex'), key: globexKey });
        expect(theirsBefore.statusCode).toBe(200);
        const before = await snapshot();
        const res = await send(ep, { podKey: globexPod, runner: globexRunnerId });
        expectError(res, 404, 'NOT_FOUND');
        expect(res.body).not.toContain('globex');
        expect(res.body).not.toContain('secret');
        // The same answer as for a pod or runner that does not exist at all.
        const missing = await send(ep, { podKey: 'p-doesnotexist00', runner: 999_999 });
        expectError(missing, 404, 'NOT_FOUND');
        expect((res.json() as ErrorBodyJson).error).toBe((missing.json() as ErrorBodyJson).error);
        expect(await snapshot()).toEqual(before);
        const theirsAfter = await t.request({ method: 'GET', url: t.path(ep.addresses === 'pod' ? `/pods/${globexPod}` : `/runners/${globexRunnerId}`, 'globex'), key: globexKey });
        expect(theirsAfter.json()).toEqual(theirsBefore.json());
      });
    }

    it("a pod token of another org's pod → 404 on acme's path", async () => {
      const row = await t.store.db.selectFrom('pods').select('token_encrypted').where('key', '=', globexPod).executeTakeFirstOrThrow();
      const before = await snapshot();
      expectError(await send(ep, { key: t.secrets.decrypt(row.token_encrypted) }), 404, 'NOT_FOUND');
      expect(await snapshot()).toEqual(before);
    });

    it('X-API-Key wins over Authorization: an invalid X-API-Key with a valid Bearer → 401', async () => {
      const before = await snapshot();
      expectError(await send(ep, { key: `drv_${randomBase62(40)}`, headers: { authorization: `Bearer ${t.key}` } }), 401, 'INVALID_API_KEY');
      if (ep.scope === 'pods:write') expectError(await send(ep, { key: keys.podsRead, headers: { authorization: `Bearer ${t.key}` } }), 403, 'INSUFFICIENT_SCOPE');
      expect(await snapshot()).toEqual(before);
    });
  });

  it('lists never show other orgs: acme sees none of globex’s pods or runners and vice versa', async () => {
    const acmePods = (await t.request({ method: 'GET', url: t.path('/pods?limit=100') })).json() as { pods: { key: string }[] };
    expect(acmePods.pods.map((p) => p.key)).not.toContain(globexPod);
    const acmeRunners = (await t.request({ method: 'GET', url: t.path('/runners') })).json() as { runners: { id: number }[] };
    expect(acmeRunners.runners.map((r) => r.id)).toEqual([runnerId]);
    const available = (await t.request({ method: 'GET', url: t.path('/runners/available') })).json() as { runners: { id: number }[] };
    expect(available.runners.map((r) => r.id)).toEqual([runnerId]);
    const globexPods = (await t.request({ method: 'GET', url: t.path('/pods?limit=100', 'globex'), key: globexKey })).json() as { pods: { key: string }[] };
    expect(globexPods.pods.map((p) => p.key)).toEqual([globexPod]);
  });

  it('POST /pods with runner_id of another org → 400 (not placed there), their runner unchanged', async () => {
    const before = await snapshot();
    const res = await t.request({ method: 'POST', url: t.path('/pods'), payload: { agent_slug: 'shell', runner_id: globexRunnerId } });
    expectError(res, 400, 'VALIDATION_FAILED');
    expect(res.body).not.toContain('globex');
    expect(await snapshot()).toEqual(before);
  });

  describe('order of checks with a malformed body', () => {
    const BAD_BODIES = [
      { name: 'invalid JSON', payload: '{"agent_slug": "shell",', status: 400, code: 'INVALID_JSON' },
      { name: 'a JSON array', payload: '[]', status: 400, code: 'VALIDATION_FAILED' },
      { name: 'wrong types and an unknown field', payload: '{"agent_slug": 3, "runner_id": "1", "bogus": true}', status: 400, code: 'VALIDATION_FAILED' },
    ];
    const postPods = ENDPOINTS.find((e) => e.name === 'POST /pods')!;

    describe.each(BAD_BODIES)('POST /pods with $name', (bad) => {
      it('no key → 401, an invalid key → 401, not 400', async () => {
        expectError(await send(postPods, { key: null, payload: bad.payload }), 401, 'AUTH_REQUIRED');
        expectError(await send(postPods, { key: 'garbage', payload: bad.payload }), 401, 'INVALID_API_KEY');
      });

      it("another org's key or an unknown org → 404, not 400", async () => {
        expectError(await send(postPods, { key: globexKey, payload: bad.payload }), 404, 'NOT_FOUND');
        expectError(await send(postPods, { org: 'no-such-org', payload: bad.payload }), 404, 'NOT_FOUND');
      });

      it('a pods:read key → 403, not 400', async () => {
        expect(expectError(await send(postPods, { key: keys.podsRead, payload: bad.payload }), 403, 'INSUFFICIENT_SCOPE').required_scopes).toEqual(['pods:write']);
      });

      it(`a full key → ${bad.status} ${bad.code}, nothing written`, async () => {
        const before = await snapshot();
        expectError(await send(postPods, { payload: bad.payload }), bad.status, bad.code);
        expect(await snapshot()).toEqual(before);
      });
    });

    describe.each(WRITE_ENDPOINTS)('$name with a wrong content type or an oversized body', (ep) => {
      const plain = { 'content-type': 'text/plain' };
      const huge = JSON.stringify({ agent_slug: 'shell', agentfile_layer: 'x'.repeat(1024 * 1024 + 1) });

      it('no key → 401 and a read-only key → 403, before 415 and 413', async () => {
        expectError(await t.request({ method: 'POST', url: t.path(ep.path(fixturePod, runnerId)), key: null, payload: 'hello', headers: plain }), 401, 'AUTH_REQUIRED');
        expectError(await send(ep, { key: null, payload: huge }), 401, 'AUTH_REQUIRED');
        expectError(await t.request({ method: 'POST', url: t.path(ep.path(fixturePod, runnerId)), key: keys.podsRead, payload: 'hello', headers: plain }), 403, 'INSUFFICIENT_SCOPE');
        expectError(await send(ep, { key: keys.podsRead, payload: huge }), 403, 'INSUFFICIENT_SCOPE');
      });

      it('a full key → 415 and 413, nothing written', async () => {
        const before = await snapshot();
        expectError(await t.request({ method: 'POST', url: t.path(ep.path(fixturePod, runnerId)), payload: 'hello', headers: plain }), 415, 'UNSUPPORTED_MEDIA_TYPE');
        expectError(await send(ep, { payload: huge }), 413, 'PAYLOAD_TOO_LARGE');
        expect(await snapshot()).toEqual(before);
      });
    });
  });
});
