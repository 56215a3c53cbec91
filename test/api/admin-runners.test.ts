/**
 * The admin runner endpoints of docs/decisions.md at the API level (runner rows without processes; the
 * real link is exercised in test/e2e/runner-lifecycle.test.ts and test/e2e/replicas.test.ts):
 * list, delete (credential revoked, active pods failed saying so, the runner gone from every view)
 * and rotate-credential (needs the runner connected); their 400/401/404/409 answers, which change
 * nothing. Both databases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/protocol/scopes.ts';
import { findRunnerByCredential } from '../../src/store/runners.ts';
import type { OrgRow } from '../../src/store/schema.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { expectError } from '../helpers/errors.ts';
import { insertPodRow } from '../helpers/pods.ts';
import { insertRunner } from '../helpers/runners.ts';

describe.each(DATABASES)('admin runners on %s', (kind) => {
  let t: TestApp;
  let globex: OrgRow;

  const admin = (method: 'GET' | 'POST' | 'DELETE', url: string, headers: Record<string, string> = { authorization: `Bearer ${ADMIN_TOKEN}` }) =>
    t.request({ method, url: `/api/v1/admin${url}`, key: null, headers });
  const runnerRows = () => t.store.db.selectFrom('runners').selectAll().orderBy('id').execute();
  const podRows = () => t.store.db.selectFrom('pods').select(['key', 'status', 'error_message', 'desired_state']).orderBy('id').execute();

  beforeAll(async () => {
    t = await startTestApp(kind);
    globex = await t.createOrg('globex');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('GET /orgs/{org}/runners lists the organization’s runners, not another’s', async () => {
    const mine = await insertRunner(t.store, t.org.id, { name: 'mine' });
    const theirs = await insertRunner(t.store, globex.id, { name: 'theirs' });
    const res = await admin('GET', '/orgs/acme/runners');
    expect(res.statusCode, res.body).toBe(200);
    const ids = (res.json() as { runners: { id: number; name: string }[] }).runners.map((r) => r.id);
    expect(ids).toContain(mine);
    expect(ids).not.toContain(theirs);
  });

  it('DELETE: the credential stops matching, the runner leaves every view, its active pods fail saying so, others are untouched', async () => {
    const credentialHash = `hash-of-a-runner-credential-${kind}`;
    const runnerId = await insertRunner(t.store, t.org.id, { name: 'doomed', credential_hash: credentialHash });
    const other = await insertRunner(t.store, t.org.id, { name: 'bystander' });
    const running = await insertPodRow(t.store, t.org.id, runnerId);
    const starting = await insertPodRow(t.store, t.org.id, runnerId, { status: 'initializing', started_at: null });
    const done = await insertPodRow(t.store, t.org.id, runnerId, { status: 'completed', desired_state: 'stop', finished_at: Date.now() });
    const elsewhere = await insertPodRow(t.store, t.org.id, other);

    const res = await admin('DELETE', `/orgs/acme/runners/${runnerId}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ message: `Runner ${runnerId} deleted; its credential is revoked.` });

    expect(await findRunnerByCredential(t.store.db, credentialHash)).toBeUndefined();
    const pods = new Map((await podRows()).map((p) => [p.key, p]));
    for (const pod of [running, starting]) {
      expect(pods.get(pod.key)).toEqual({ key: pod.key, status: 'failed', desired_state: 'stop', error_message: `runner ${runnerId} (doomed) was deleted by an administrator` });
    }
    expect(pods.get(done.key)?.status).toBe('completed');
    expect(pods.get(elsewhere.key)?.status).toBe('running');

    expectError(await t.request({ method: 'GET', url: t.path(`/runners/${runnerId}`) }), 404, 'NOT_FOUND');
    const listed = (await t.request({ method: 'GET', url: t.path('/runners') })).json() as { runners: { id: number }[] };
    expect(listed.runners.map((r) => r.id)).not.toContain(runnerId);
    expect(((await admin('GET', '/orgs/acme/runners')).json() as { runners: { id: number }[] }).runners.map((r) => r.id)).not.toContain(runnerId);
    // The pods keep naming it.
    expect((await t.request({ method: 'GET', url: t.path(`/pods/${running.key}`) })).json()).toMatchObject({ pod: { runner_id: runnerId, status: 'failed' } });
    // No new pod may name it; deleting it again is 404.
    expectError(await t.request({ method: 'POST', url: t.path('/pods'), payload: { agent_slug: 'shell', runner_id: runnerId } }), 400, 'VALIDATION_FAILED');
    expectError(await admin('DELETE', `/orgs/acme/runners/${runnerId}`), 404, 'NOT_FOUND');
  });

  it('rotate-credential of a runner that is not connected → 409 RUNNER_UNAVAILABLE, its credential unchanged', async () => {
    const runnerId = await insertRunner(t.store, t.org.id, { connection_id: null });
    const before = await runnerRows();
    const body = expectError(await admin('POST', `/orgs/acme/runners/${runnerId}/rotate-credential`), 409, 'RUNNER_UNAVAILABLE');
    expect(body.error).toBe(`runner ${runnerId} is not connected: a new credential can only be handed to it over its link`);
    expect(await runnerRows()).toEqual(before);
  });

  it('malformed ids → 400; unknown org, unknown runner, another organization’s runner → 404; nothing changes', async () => {
    const theirs = await insertRunner(t.store, globex.id, { name: 'not yours' });
    const theirPod = await insertPodRow(t.store, globex.id, theirs);
    const before = { runners: await runnerRows(), pods: await podRows() };
    for (const method of ['DELETE', 'POST'] as const) {
      const suffix = method === 'POST' ? '/rotate-credential' : '';
      for (const bad of ['abc', '0', '-1', '1.5', '9007199254740993']) expectError(await admin(method, `/orgs/acme/runners/${bad}${suffix}`), 400, 'VALIDATION_FAILED');
      expectError(await admin(method, `/orgs/no-such-org/runners/1${suffix}`), 404, 'NOT_FOUND');
      expectError(await admin(method, `/orgs/acme/runners/987654${suffix}`), 404, 'NOT_FOUND');
      expectError(await admin(method, `/orgs/acme/runners/${theirs}${suffix}`), 404, 'NOT_FOUND');
    }
    expectError(await admin('GET', '/orgs/no-such-org/runners'), 404, 'NOT_FOUND');
    expect({ runners: await runnerRows(), pods: await podRows() }).toEqual(before);
    expect((await podRows()).find((p) => p.key === theirPod.key)?.status).toBe('running');
  });

  it('the admin token is required: none, a wrong one, or an API key → 401, nothing deleted', async () => {
    const runnerId = await insertRunner(t.store, t.org.id);
    const { key } = await t.issueKey(SCOPES);
    const before = await runnerRows();
    const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer nope' }, { authorization: `Bearer ${key}` }, { 'x-api-key': key }];
    for (const headers of attempts) {
      expectError(await admin('DELETE', `/orgs/acme/runners/${runnerId}`, headers), 401);
      expectError(await admin('POST', `/orgs/acme/runners/${runnerId}/rotate-credential`, headers), 401);
      expectError(await admin('GET', '/orgs/acme/runners', headers), 401);
    }
    expect(await runnerRows()).toEqual(before);
  });
});
