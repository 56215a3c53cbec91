/**
 * GET /usage?group_by=user (docs/agents.md "Budgets"): the pods' usage per person who created
 * them (through a key of theirs, or a loop run they started), one group per person however often
 * they were renamed, under their current name; pods of no person in the `null` group.
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordModelCall } from '../../src/domain/usage/service.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { insertRunner } from '../helpers/runners.ts';

interface Report {
  group_by: string;
  groups: { key: string | null; cost_usd: number | null; input_tokens: number | null; pods: number }[];
  total: { cost_usd: number | null; input_tokens: number | null; pods: number };
}

describe.each(DATABASES)('GET /usage?group_by=user on %s', (kind) => {
  let t: TestApp;
  let runnerId: number;

  const admin = (method: 'POST' | 'PATCH', url: string, payload: object) =>
    t.app.inject({ method, url: `/api/v1/admin${url}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload });
  const call = (method: 'GET' | 'POST', url: string, key: string, payload?: object) => t.request({ method, url: t.path(url), key, ...(payload ? { payload } : {}) });
  const person = async (name: string) => {
    const user = await admin('POST', '/orgs/acme/users', { name, email: `${name.toLowerCase()}@acme.test` });
    expect(user.statusCode, user.body).toBe(201);
    const id = user.json().user.id as number;
    const key = await admin('POST', '/orgs/acme/api-keys', { name: `key of ${name}`, scopes: ['pods:read', 'pods:write'], user_id: id });
    expect(key.statusCode, key.body).toBe(201);
    return { id, key: key.json().key as string };
  };
  /** A pod created with `key`, and a model call of `cost` dollars (and 1000 × cost input tokens) reported for it. */
  const podCosting = async (key: string, cost: number): Promise<string> => {
    const pod = await call('POST', '/pods', key, { agent_slug: 'shell', runner_id: runnerId, agentfile_layer: 'PROMPT "work"' });
    expect(pod.statusCode, pod.body).toBe(201);
    const podKey = pod.json().pod.pod_key as string;
    await recordModelCall(t.ctx, runnerId, {
      id: crypto.randomUUID(),
      pod_key: podKey,
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      input_tokens: cost * 1000,
      output_tokens: 1,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      cost_usd: cost,
      at: Date.now(),
    });
    return podKey;
  };

  beforeAll(async () => {
    t = await startTestApp(kind);
    runnerId = await insertRunner(t.store, t.org.id);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('one group per person under their current name, the pods of no one last; the groups add up to the total', async () => {
    const alice = await person('Alice');
    const bob = await person('Bob');
    await podCosting(alice.key, 1);
    // Renamed: her next pod records the new name; both pods are still hers.
    expect((await admin('PATCH', `/orgs/acme/users/${alice.id}`, { name: 'Alicia' })).statusCode).toBe(200);
    const aliceSecond = await podCosting(alice.key, 2);
    await podCosting(bob.key, 4);
    await podCosting(t.key, 8); // a key of no one
    // A pod spawned by Alice's pod is the pod's doing, not hers.
    const row = await t.store.db.selectFrom('pods').select('token_encrypted').where('key', '=', aliceSecond).executeTakeFirstOrThrow();
    await podCosting(t.secrets.decrypt(row.token_encrypted), 16);

    const response = await call('GET', '/usage?group_by=user', t.key);
    expect(response.statusCode, response.body).toBe(200);
    const report = response.json() as Report;
    expect(report.group_by).toBe('user');
    expect(report.groups.map((g) => [g.key, g.pods, g.cost_usd, g.input_tokens])).toEqual([
      ['Alicia', 2, 3, 3000],
      ['Bob', 1, 4, 4000],
      [null, 2, 24, 24000],
    ]);
    expect(report.total).toMatchObject({ pods: 5, cost_usd: 31, input_tokens: 31000 });
    const byAgent = (await call('GET', '/usage?group_by=agent', t.key)).json() as Report;
    expect(byAgent.total).toEqual(report.total);
  });

  it('a loop run a person started counts as theirs', async () => {
    const carol = await person('Carol');
    const loop = await call('POST', '/loops', t.key, { name: 'Sweep', agent_slug: 'shell', execution_mode: 'direct', prompt_template: 'true', runner_id: runnerId });
    expect(loop.statusCode, loop.body).toBe(201);
    const loopKey = await admin('POST', '/orgs/acme/api-keys', { name: 'carol loops', scopes: ['loops:write', 'loops:read'], user_id: carol.id });
    const run = await call('POST', `/loops/${loop.json().loop.slug}/trigger`, loopKey.json().key, {});
    expect(run.statusCode, run.body).toBeLessThan(300);
    const podKey = (await call('GET', `/loops/${loop.json().loop.slug}/runs/${run.json().run.id}`, t.key)).json().run.pod_key as string;
    expect(podKey).toEqual(expect.any(String));
    await recordModelCall(t.ctx, runnerId, {
      id: crypto.randomUUID(),
      pod_key: podKey,
      provider: 'openai',
      model: null,
      input_tokens: 10,
      output_tokens: 1,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      cost_usd: 0.5,
      at: Date.now(),
    });
    const report = (await call('GET', '/usage?group_by=user', t.key)).json() as Report;
    expect(report.groups.find((g) => g.key === 'Carol')).toMatchObject({ pods: 1, cost_usd: 0.5 });
  });

  it('another organization sees none of it; group_by of no grouping is 400; without pods:read 403', async () => {
    const other = await t.createOrg('globex');
    const { key: otherKey } = await t.issueKey(['pods:read'], { org: other });
    const theirs = await t.request({ method: 'GET', url: t.path('/usage?group_by=user', 'globex'), key: otherKey });
    expect(theirs.statusCode, theirs.body).toBe(200);
    expect((theirs.json() as Report).groups).toEqual([]);
    // Their key on our organization's path is refused, not answered with our usage.
    expect((await t.request({ method: 'GET', url: t.path('/usage?group_by=user'), key: otherKey })).statusCode).toBeGreaterThanOrEqual(400);

    const bad = await call('GET', '/usage?group_by=person', t.key);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('VALIDATION_FAILED');
    const { key: ticketsOnly } = await t.issueKey(['tickets:read']);
    const refused = await call('GET', '/usage?group_by=user', ticketsOnly);
    expect(refused.statusCode).toBe(403);
  });
});
