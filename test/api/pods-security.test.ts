/**
 * The security matrix of the pod and runner endpoints (docs/api.md "Authentication",
 * "Errors"): missing, malformed, unknown, revoked and expired keys; scopes (and that a
 * pods:read key writes nothing); other organizations' keys, pods and runners; pod tokens. Every row
 * runs against every endpoint and every database, and every refused request must leave the pod,
 * runner and idempotency tables exactly as they were.
 *
 * Malformed input on these endpoints is pods-malformed.test.ts; behaviour is pods.test.ts and
 * runners.test.ts.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../src/protocol/scopes.ts';
import type { OrgRow } from '../../src/store/schema.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { expectError } from '../helpers/errors.ts';
import { insertRunner as insertRunnerRow } from '../helpers/runners.ts';
import { securityMatrix } from '../helpers/security-matrix.ts';

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

/** What a route addresses: a pod by key, a runner by id. */
type Target = { podKey: string; runner: number };

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
  const keys = {} as Record<'podsRead', string>;

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
  });

  afterAll(async () => {
    await t?.close();
  });

  // No runner process beats here: keep the runners' heartbeats fresh so a slow database cannot make them stale.
  beforeEach(async () => {
    await t.store.db.updateTable('runners').set({ last_heartbeat_at: Date.now() }).execute();
  });

  securityMatrix<Target>(
    ENDPOINTS.map((ep) => ({ ...ep, path: ({ podKey, runner }) => ep.path(podKey, runner), payload: ep.body, addresses: ep.addresses !== null })),
    {
      app: () => t,
      foreign: () => ({ org: 'globex', key: globexKey, target: { podKey: globexPod, runner: globexRunnerId } }),
      target: async (route, fresh) => ({ podKey: route.addresses && route.changes && fresh ? await createPod() : fixturePod, runner: runnerId }),
      missing: { podKey: 'p-doesnotexist00', runner: 999_999 },
      probe: (scope) => (scope === 'runners:read' ? '/runners' : '/pods'),
      snapshot,
      hidden: ['globex', 'secret'],
    },
  );

  describe.each(WRITE_ENDPOINTS.filter((ep) => ep.addresses === 'pod'))('$name', (ep) => {
    it('a pods:read key → 403, and the pod is untouched', async () => {
      const podKey = await target(ep, true);
      expectError(await send(ep, { key: keys.podsRead, podKey, headers: { 'idempotency-key': 'read-only' } }), 403, 'INSUFFICIENT_SCOPE');
      const pod = await t.request({ method: 'GET', url: t.path(`/pods/${podKey}`) });
      expect((pod.json() as { pod: { status: string } }).pod.status).toBe('initializing');
    });
  });

  describe.each(ENDPOINTS)('$name', (ep) => {
    it("a pod token of another org's pod → 404 on acme's path", async () => {
      const row = await t.store.db.selectFrom('pods').select('token_encrypted').where('key', '=', globexPod).executeTakeFirstOrThrow();
      const before = await snapshot();
      expectError(await send(ep, { key: t.secrets.decrypt(row.token_encrypted) }), 404, 'NOT_FOUND');
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
