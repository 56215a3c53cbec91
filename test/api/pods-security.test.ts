import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { DATABASES } from '../helpers/databases.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import type { Scope } from '../../src/domain/auth/scopes.ts';

/** The scope matrix and the malformed-input sweep for every pod and runner endpoint. */

function expectError(response: LightMyRequestResponse, status: number, code: string) {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(response.json()).toMatchObject({ code, error: expect.any(String), request_id: response.headers['x-request-id'] });
}

async function insertRunner(t: TestApp, orgId: number, name: string) {
  const now = Date.now();
  return t.store.db
    .insertInto('runners')
    .values({
      org_id: orgId,
      name,
      credential_hash: `hash-${name}-${orgId}-${Math.random()}`,
      status: 'online',
      version: 'test',
      os: 'linux',
      arch: 'x64',
      labels: '[]',
      agents: '["shell"]',
      max_pods: 50,
      connection_id: null,
      last_heartbeat_at: now,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

describe.each(DATABASES)('pods and runners: security and malformed input on %s', (kind) => {
  let t: TestApp;
  let podKey: string;
  let runnerId: number;
  let otherPodKey: string;
  let otherRunnerId: number;
  let otherKey: string;

  const podCount = async () => Number((await t.store.db.selectFrom('pods').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  beforeAll(async () => {
    t = await startTestApp(kind);
    runnerId = (await insertRunner(t, t.org.id, 'r1')).id;
    const created = await t.request({ method: 'POST', url: t.path('/pods'), payload: { agent_slug: 'shell', agentfile_layer: 'PROMPT "true"' } });
    expect(created.statusCode, created.body).toBe(201);
    podKey = created.json().pod.pod_key;
    const other = await t.createOrg('other');
    otherRunnerId = (await insertRunner(t, other.id, 'r2')).id;
    otherKey = (await t.issueKey(['pods:write', 'runners:read'], { org: other })).key;
    const otherPod = await t.request({ method: 'POST', url: t.path('/pods', 'other'), key: otherKey, payload: { agent_slug: 'shell' } });
    expect(otherPod.statusCode, otherPod.body).toBe(201);
    otherPodKey = otherPod.json().pod.pod_key;
  });
  afterAll(async () => t.close());

  const endpoints = () =>
    [
      { method: 'GET', path: '/pods', scope: 'pods:read' },
      { method: 'GET', path: `/pods/${podKey}`, scope: 'pods:read' },
      { method: 'GET', path: `/pods/${podKey}/output`, scope: 'pods:read' },
      { method: 'POST', path: '/pods', scope: 'pods:write', payload: { agent_slug: 'shell' } },
      { method: 'POST', path: `/pods/${podKey}/terminate`, scope: 'pods:write' },
      { method: 'GET', path: '/runners', scope: 'runners:read' },
      { method: 'GET', path: '/runners/available', scope: 'runners:read' },
      { method: 'GET', path: `/runners/${runnerId}`, scope: 'runners:read' },
      { method: 'GET', path: `/runners/${runnerId}/pods`, scope: 'runners:read' },
    ] as const;

  it('answers no key, bad keys and revoked keys with 401 on every endpoint', async () => {
    const revoked = await t.issueKey(['pods:write', 'runners:read']);
    const revoke = await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/orgs/acme/api-keys/${revoked.id}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(revoke.statusCode).toBe(200);
    for (const e of endpoints()) {
      const base = { method: e.method, url: t.path(e.path), payload: 'payload' in e ? e.payload : undefined };
      expectError(await t.request({ ...base, key: null }), 401, 'AUTH_REQUIRED');
      expectError(await t.request({ ...base, key: 'drv_' + 'x'.repeat(40) }), 401, 'INVALID_API_KEY');
      expectError(await t.request({ ...base, key: 'nonsense' }), 401, 'INVALID_API_KEY');
      expectError(await t.request({ ...base, key: revoked.key }), 401, 'INVALID_API_KEY');
    }
    expect(await podCount()).toBe(2);
  });

  it('requires the endpoint scope (403 with required_scopes); :read keys cannot write; :write grants reads', async () => {
    const unrelated = await t.issueKey(['tickets:write']);
    const podsRead = await t.issueKey(['pods:read']);
    const podsWrite = await t.issueKey(['pods:write']);
    for (const e of endpoints()) {
      const base = { method: e.method, url: t.path(e.path), payload: 'payload' in e ? e.payload : undefined };
      const denied = await t.request({ ...base, key: unrelated.key });
      expectError(denied, 403, 'INSUFFICIENT_SCOPE');
      expect(denied.json().required_scopes).toEqual([e.scope]);
      if (e.scope === 'pods:write') {
        const readOnly = await t.request({ ...base, key: podsRead.key });
        expectError(readOnly, 403, 'INSUFFICIENT_SCOPE');
        expect(readOnly.json().required_scopes).toEqual(['pods:write']);
      }
      if (e.scope === 'pods:read') expect((await t.request({ ...base, key: podsWrite.key })).statusCode).toBe(200);
    }
    expect(await podCount()).toBe(2);
    expect((await t.request({ method: 'GET', url: t.path(`/pods/${podKey}`) })).json().pod.status).toBe('initializing');
  });

  it("hides other organizations: their key on our path, and their pods and runners through ours, are 404", async () => {
    for (const e of endpoints()) {
      const response = await t.request({ method: e.method, url: t.path(e.path), key: otherKey, payload: 'payload' in e ? e.payload : undefined });
      expectError(response, 404, 'NOT_FOUND');
    }
    for (const [method, path] of [
      ['GET', `/pods/${otherPodKey}`],
      ['GET', `/pods/${otherPodKey}/output`],
      ['POST', `/pods/${otherPodKey}/terminate`],
      ['GET', `/runners/${otherRunnerId}`],
      ['GET', `/runners/${otherRunnerId}/pods`],
    ] as const) {
      expectError(await t.request({ method, url: t.path(path) }), 404, 'NOT_FOUND');
    }
    const theirs = await t.request({ method: 'GET', url: t.path(`/pods/${otherPodKey}`, 'other'), key: otherKey });
    expect(theirs.json().pod.status).toBe('initializing');
  });

  it.each([
    [{}, '/agent_slug'],
    [{ agent_slug: 3 }, '/agent_slug'],
    [{ agent_slug: null }, '/agent_slug'],
    [{ agent_slug: ['shell'] }, '/agent_slug'],
    [{ agent_slug: '' }, '/agent_slug'],
    [{ agent_slug: 'no-such-agent' }, '/agent_slug'],
    [{ agent_slug: 'shell', runner_id: '1' }, '/runner_id'],
    [{ agent_slug: 'shell', runner_id: -1 }, '/runner_id'],
    [{ agent_slug: 'shell', runner_id: 1.5 }, '/runner_id'],
    [{ agent_slug: 'shell', runner_id: 999999 }, '/runner_id'],
    [{ agent_slug: 'shell', alias: 'a'.repeat(101) }, '/alias'],
    [{ agent_slug: 'shell', agentfile_layer: 'x'.repeat(64 * 1024 + 1) }, '/agentfile_layer'],
    [{ agent_slug: 'shell', agentfile_layer: 'BOGUS 1' }, '/agentfile_layer'],
    [{ agent_slug: 'shell', agentfile_layer: 42 }, '/agentfile_layer'],
    [{ agent_slug: 'shell', ticket_slug: 'ACME-404' }, '/ticket_slug'],
    [{ agent_slug: 'shell', colour: 'red' }, '/colour'],
  ])('POST /pods %j → 400 naming %s, nothing written', async (payload, field) => {
    const before = await podCount();
    const response = await t.request({ method: 'POST', url: t.path('/pods'), payload });
    expectError(response, 400, 'VALIDATION_FAILED');
    expect(response.json().details.map((d: { field: string }) => d.field)).toContain(field);
    expect(await podCount()).toBe(before);
  });

  it('refuses non-object JSON, broken JSON, invalid UTF-8, other content types and oversized bodies, writing nothing', async () => {
    const before = await podCount();
    const send = (payload: string | Buffer, contentType = 'application/json') =>
      t.request({ method: 'POST', url: t.path('/pods'), payload, headers: { 'content-type': contentType } });
    for (const body of ['[]', '"x"', '3', 'null', 'true']) expectError(await send(body), 400, 'VALIDATION_FAILED');
    for (const body of ['{', '{"agent_slug":}', '{"agent_slug":"shell",}']) expectError(await send(body), 400, 'INVALID_JSON');
    expectError(await send(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])), 400, 'INVALID_JSON');
    expectError(await send('agent_slug=shell', 'application/x-www-form-urlencoded'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectError(await send('shell', 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectError(await send(JSON.stringify({ agent_slug: 'shell', alias: 'x', agentfile_layer: 'y'.repeat(1024 * 1024) })), 413, 'PAYLOAD_TOO_LARGE');
    expect(await podCount()).toBe(before);
  });

  it.each([
    ['/pods?limit=0', 'limit'],
    ['/pods?limit=-1', 'limit'],
    ['/pods?limit=abc', 'limit'],
    ['/pods?offset=-1', 'offset'],
    ['/pods?status=bogus', 'status'],
    ['/pods?colour=red', 'colour'],
    ['/pods/KEY/output?tail_bytes=0', 'tail_bytes'],
    ['/pods/KEY/output?tail_bytes=abc', 'tail_bytes'],
    ['/runners/abc', 'id'],
    ['/runners/-1', 'id'],
    ['/runners/1.5', 'id'],
    ['/runners/RID/pods?limit=0', 'limit'],
    ['/runners/RID/pods?status=bogus', 'status'],
  ])('GET %s → 400 naming %s', async (path, field) => {
    const response = await t.request({ method: 'GET', url: t.path(path.replace('KEY', podKey).replace('RID', String(runnerId))) });
    expectError(response, 400, 'VALIDATION_FAILED');
    expect(response.json().details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it('clamps limits to 100 and serves /runners/available before /runners/:id', async () => {
    expect((await t.request({ method: 'GET', url: t.path('/pods?limit=1000') })).json().limit).toBe(100);
    expect((await t.request({ method: 'GET', url: t.path(`/runners/${runnerId}/pods?limit=1000`) })).json().limit).toBe(100);
    const available = await t.request({ method: 'GET', url: t.path('/runners/available') });
    expect(available.statusCode).toBe(200);
    expect(available.json().runners.map((r: { id: number }) => r.id)).toEqual([runnerId]);
  });

  it('terminates an active pod once; a second terminate is 409 POD_NOT_ACTIVE', async () => {
    const created = await t.request({ method: 'POST', url: t.path('/pods'), payload: { agent_slug: 'shell' } });
    const key = created.json().pod.pod_key;
    const first = await t.request({ method: 'POST', url: t.path(`/pods/${key}/terminate`) });
    expect(first.statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: t.path(`/pods/${key}`) })).json().pod).toMatchObject({ status: 'terminated', finished_at: expect.any(String) });
    expectError(await t.request({ method: 'POST', url: t.path(`/pods/${key}/terminate`) }), 409, 'POD_NOT_ACTIVE');
    expectError(await t.request({ method: 'POST', url: t.path('/pods/p-doesnotexist/terminate') }), 404, 'NOT_FOUND');
  });

  it('reports 409 RUNNER_UNAVAILABLE for an offline runner and 503 NO_AVAILABLE_RUNNER when none can take the pod', async () => {
    await t.store.db.updateTable('runners').set({ status: 'offline' }).where('id', '=', runnerId).execute();
    try {
      expectError(await t.request({ method: 'POST', url: t.path('/pods'), payload: { agent_slug: 'shell', runner_id: runnerId } }), 409, 'RUNNER_UNAVAILABLE');
      expectError(await t.request({ method: 'POST', url: t.path('/pods'), payload: { agent_slug: 'shell' } }), 503, 'NO_AVAILABLE_RUNNER');
    } finally {
      await t.store.db.updateTable('runners').set({ status: 'online', last_heartbeat_at: Date.now() }).where('id', '=', runnerId).execute();
    }
  });

  it.each<[Scope[], number]>([
    [['pods:read'], 200],
    [['runners:read'], 403],
  ])('a key with %j reading GET /pods gets %i', async (scopes, status) => {
    const { key } = await t.issueKey(scopes);
    expect((await t.request({ method: 'GET', url: t.path('/pods'), key })).statusCode).toBe(status);
  });
});
