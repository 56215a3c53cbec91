/**
 * People, presets and placement (issue 25; docs/api.md "Actors and activity", "Presets",
 * docs/runners.md "Placement by labels"): keys of users and who did what, GET /users, GET /activity,
 * presets on pods and loops, runner labels, pod list filters. Security of the new endpoints is
 * people-security.test.ts; hygiene (repository paths, callback URLs) people-hygiene.test.ts.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/protocol/scopes.ts';
import { CronScheduler } from '../../src/scheduler/cron.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { insertRunner } from '../helpers/runners.ts';

describe.each(DATABASES)('people, presets and placement on %s', (kind) => {
  let t: TestApp;
  const clock = { now: Date.UTC(2026, 10, 27, 8, 0, 30) };
  let alice: { id: number; name: string };
  let bob: { id: number; name: string };
  let aliceKey: string;
  let bobKey: string;

  const admin = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
    t.app.inject({ method, url: `/api/v1/admin${url}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
  const call = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, key: string, payload?: unknown) =>
    t.request({ method, url: t.path(url), key, ...(payload === undefined ? {} : { payload: payload as object }) });
  const userKey = async (userId: number, scopes: Scope[] = ['tickets:read', 'tickets:write', 'channels:read', 'channels:write', 'pods:read', 'pods:write', 'loops:read', 'loops:write']) => {
    const response = await admin('POST', '/orgs/acme/api-keys', { name: `key of ${userId}`, scopes, user_id: userId });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json().api_key.user_id).toBe(userId);
    return response.json().key as string;
  };

  beforeAll(async () => {
    t = await startTestApp(kind, { now: () => clock.now });
    const made = async (name: string) => {
      const response = await admin('POST', '/orgs/acme/users', { name, email: `${name.toLowerCase()}@acme.test` });
      expect(response.statusCode, response.body).toBe(201);
      return { id: response.json().user.id as number, name };
    };
    alice = await made('Alice');
    bob = await made('Bob');
    aliceKey = await userKey(alice.id);
    bobKey = await userKey(bob.id);
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('keys belong to people', () => {
    it('whoami names the user of the key; a key of no one has none', async () => {
      const mine = await call('GET', '/auth/whoami', aliceKey);
      expect(mine.statusCode).toBe(200);
      expect(mine.json().principal).toMatchObject({ type: 'api_key', user: { id: alice.id, name: 'Alice' } });
      expect((await call('GET', '/auth/whoami', t.key)).json().principal.user).toBeNull();
    });

    it('GET /users lists id and name (no email) to any key of the org', async () => {
      const { key } = await t.issueKey(['runners:read']);
      const response = await call('GET', '/users', key);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ users: [{ id: alice.id, name: 'Alice' }, { id: bob.id, name: 'Bob' }] });
    });

    it('a user_id of no user of the org is 400 and creates no key', async () => {
      const other = await t.createOrg('globex');
      const stranger = await admin('POST', '/orgs/globex/users', { name: 'Eve', email: 'eve@globex.test' });
      const before = await t.store.db.selectFrom('api_keys').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      for (const userId of [999_999, stranger.json().user.id]) {
        const response = await admin('POST', '/orgs/acme/api-keys', { name: 'x', scopes: ['tickets:read'], user_id: userId });
        expect(response.statusCode).toBe(400);
        expect(response.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
      }
      for (const userId of ['1', 0, -1, 1.5, null]) {
        expect((await admin('POST', '/orgs/acme/api-keys', { name: 'x', scopes: ['tickets:read'], user_id: userId })).statusCode).toBe(400);
      }
      const after = await t.store.db.selectFrom('api_keys').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      expect(Number(after.n)).toBe(Number(before.n));
      expect(other.slug).toBe('globex');
    });

    it('deleting a user revokes their keys', async () => {
      const response = await admin('POST', '/orgs/acme/users', { name: 'Carol', email: 'carol@acme.test' });
      const carol = response.json().user.id as number;
      const key = await userKey(carol, ['tickets:read']);
      expect((await call('GET', '/tickets', key)).statusCode).toBe(200);
      expect((await admin('DELETE', `/orgs/acme/users/${carol}`)).statusCode).toBe(200);
      expect((await call('GET', '/tickets', key)).statusCode).toBe(401);
    });
  });

  describe('actors', () => {
    it("records the user on a ticket, another key's update, a channel message and the activity log", async () => {
      const created = await call('POST', '/tickets', aliceKey, { type: 'task', title: 'Who did this' });
      expect(created.statusCode, created.body).toBe(201);
      const slug = created.json().ticket.slug as string;
      expect(created.json().ticket.created_by).toEqual({ type: 'user', id: alice.id, name: 'Alice' });
      const updated = await call('PUT', `/tickets/${slug}`, bobKey, { status: 'in_progress' });
      expect(updated.statusCode, updated.body).toBe(200);
      expect(updated.json().ticket).toMatchObject({ created_by: { type: 'user', id: alice.id }, updated_by: { type: 'user', id: bob.id, name: 'Bob' } });
      const anonymous = await call('PUT', `/tickets/${slug}`, t.key, { priority: 'high' });
      expect(anonymous.json().ticket.updated_by).toEqual({ type: 'api_key', id: expect.any(Number), name: 'test' });

      const channel = await call('POST', '/channels', aliceKey, { name: 'people' });
      const message = await call('POST', `/channels/${channel.json().channel.id}/messages`, aliceKey, { content: 'hi' });
      expect(message.statusCode, message.body).toBe(201);
      expect(message.json().message).toMatchObject({ sender_type: 'user', sender: { type: 'user', id: alice.id, name: 'Alice' } });
      const fromKey = await call('POST', `/channels/${channel.json().channel.id}/messages`, t.key, { content: 'hello' });
      expect(fromKey.json().message).toMatchObject({ sender_type: 'api', sender: { type: 'api_key', name: 'test' } });

      const activity = await call('GET', `/activity?types=ticket.*`, t.key);
      expect(activity.statusCode).toBe(200);
      const events = activity.json().events as { type: string; actor: unknown; data: { ticket: { slug: string } } }[];
      const mine = events.filter((e) => e.data.ticket.slug === slug);
      expect(mine.map((e) => e.type)).toEqual(['ticket.updated', 'ticket.updated', 'ticket.created']);
      expect(mine[2].actor).toEqual({ type: 'user', id: alice.id, name: 'Alice' });
      expect(mine[1].actor).toEqual({ type: 'user', id: bob.id, name: 'Bob' });
      const byUsers = (await call('GET', '/activity?actor_type=user&types=ticket.created', t.key)).json().events as { actor: { type: string } }[];
      expect(byUsers.length).toBeGreaterThan(0);
      expect(byUsers.every((e) => e.actor.type === 'user')).toBe(true);
    });

    it("a pod records its creator; a pod it spawns records the pod", async () => {
      const runnerId = await insertRunner(t.store, t.org.id, { labels: '[]' }, clock.now);
      const parent = await call('POST', '/pods', aliceKey, { agent_slug: 'shell', runner_id: runnerId, agentfile_layer: 'PROMPT "parent"' });
      expect(parent.statusCode, parent.body).toBe(201);
      const parentKey = parent.json().pod.pod_key as string;
      expect((await call('GET', `/pods/${parentKey}`, t.key)).json().pod.created_by).toEqual({ type: 'user', id: alice.id, name: 'Alice' });
      const row = await t.store.db.selectFrom('pods').select('token_encrypted').where('key', '=', parentKey).executeTakeFirstOrThrow();
      const token = t.secrets.decrypt(row.token_encrypted);
      const child = await call('POST', '/pods', token, { agent_slug: 'shell', agentfile_layer: 'PROMPT "child"' });
      expect(child.statusCode, child.body).toBe(201);
      const shown = (await call('GET', `/pods/${child.json().pod.pod_key}`, t.key)).json().pod;
      expect(shown.created_by).toEqual({ type: 'pod', id: parentKey, name: parentKey });
      const created = (await call('GET', '/activity?types=pod.created&actor_type=pod', t.key)).json().events as { data: { pod: { key: string } } }[];
      expect(created.map((e) => e.data.pod.key)).toContain(child.json().pod.pod_key);
    });

    it("a cron-fired run is triggered by the loop's schedule; a manual one by the person", async () => {
      await insertRunner(t.store, t.org.id, {}, clock.now);
      const loop = await call('POST', '/loops', aliceKey, { name: 'Nightly', slug: 'nightly', agent_slug: 'shell', execution_mode: 'direct', prompt_template: 'true', cron_expression: '* * * * *' });
      expect(loop.statusCode, loop.body).toBe(201);
      clock.now += 60_000;
      const cron = new CronScheduler(t.ctx, { intervalMs: 1_000_000, catchupMs: 3_600_000 }, pino({ level: 'silent' }));
      expect(await cron.tick()).toBe(1);
      await cron.stop();
      const manual = await call('POST', '/loops/nightly/trigger', bobKey, {});
      expect(manual.statusCode, manual.body).toBeLessThan(300);
      const runs = (await call('GET', '/loops/nightly/runs', t.key)).json().runs as { trigger_type: string; triggered_by: unknown; pod_key: string | null }[];
      const cronRun = runs.find((r) => r.trigger_type === 'cron')!;
      expect(cronRun.triggered_by).toEqual({ type: 'loop', id: 'nightly', name: 'Nightly (cron * * * * *)' });
      expect(runs.find((r) => r.trigger_type === 'manual')!.triggered_by).toEqual({ type: 'user', id: bob.id, name: 'Bob' });
      if (cronRun.pod_key) {
        expect((await call('GET', `/pods/${cronRun.pod_key}`, t.key)).json().pod.created_by).toMatchObject({ type: 'loop', id: 'nightly' });
      }
      const runEvents = (await call('GET', '/activity?types=run.created&actor_type=loop', t.key)).json().events;
      expect(runEvents.length).toBeGreaterThan(0);
    });
  });

  describe('GET /activity', () => {
    it('pages newest first with a stable cursor, filters by time, and shows only the types the key may read', async () => {
      for (let i = 0; i < 5; i++) await call('POST', '/tickets', aliceKey, { type: 'task', title: `page ${i}` });
      const all: number[] = [];
      let cursor: string | null = null;
      do {
        const response = await call('GET', `/activity?limit=3${cursor ? `&cursor=${cursor}` : ''}`, t.key);
        expect(response.statusCode).toBe(200);
        const page = response.json() as { events: { id: number }[]; next_cursor: string | null };
        expect(page.events.length).toBeLessThanOrEqual(3);
        all.push(...page.events.map((e) => e.id));
        cursor = page.next_cursor;
      } while (cursor);
      const stored = await t.store.db.selectFrom('events').select('id').where('org_id', '=', t.org.id).orderBy('id', 'desc').execute();
      expect(all).toEqual(stored.map((r) => Number(r.id)));

      const future = new Date(clock.now + 3_600_000).toISOString();
      expect((await call('GET', `/activity?from=${encodeURIComponent(future)}`, t.key)).json().events).toEqual([]);
      const past = new Date(clock.now - 3_600_000 * 24).toISOString();
      expect((await call('GET', `/activity?to=${encodeURIComponent(past)}`, t.key)).json().events).toEqual([]);

      const { key: ticketsOnly } = await t.issueKey(['tickets:read']);
      const seen = (await call('GET', '/activity?limit=500', ticketsOnly)).json().events as { type: string }[];
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.every((e) => e.type.startsWith('ticket.'))).toBe(true);
      expect((await call('GET', '/activity?types=pod.*', ticketsOnly)).statusCode).toBe(403);
    });

    it('bad queries are 400', async () => {
      for (const query of ['limit=0', 'limit=501', 'cursor=abc', 'cursor=-1', 'types=nope', 'actor_type=robot', 'from=yesterday', 'extra=1', `from=${encodeURIComponent('2026-01-02T00:00:00Z')}&to=${encodeURIComponent('2026-01-01T00:00:00Z')}`]) {
        const response = await call('GET', `/activity?${query}`, t.key);
        expect(response.statusCode, query).toBe(400);
        expect(response.json().code, query).toBe('VALIDATION_FAILED');
      }
    });
  });

  describe('presets', () => {
    it('CRUD under the admin API; GET /presets for the org', async () => {
      const created = await admin('POST', '/orgs/acme/presets', {
        name: 'team-shell',
        description: 'our setup',
        agent_slug: 'shell',
        agentfile_layer: 'ENV TEAM "drover"\nENV LEVEL "preset"\nCONFIG max_turns = 7\nCONFIG pod_timeout_minutes = 30',
      });
      expect(created.statusCode, created.body).toBe(201);
      expect(created.json().preset).toMatchObject({ name: 'team-shell', agent_slug: 'shell' });
      expect((await admin('POST', '/orgs/acme/presets', { name: 'team-shell', agent_slug: 'shell' })).statusCode).toBe(409);
      const { key } = await t.issueKey(['tickets:read']);
      const listed = await call('GET', '/presets', key);
      expect(listed.statusCode).toBe(200);
      expect(listed.json().presets.map((p: { name: string }) => p.name)).toEqual(['team-shell']);
      const changed = await admin('PUT', '/orgs/acme/presets/team-shell', { description: 'shared' });
      expect(changed.json().preset.description).toBe('shared');
      expect((await admin('GET', '/orgs/acme/presets/team-shell')).json().preset.description).toBe('shared');
      expect((await admin('GET', '/orgs/acme/presets/nope')).statusCode).toBe(404);
    });

    it('refuses what a preset may not hold, and unknown agents, with 400', async () => {
      for (const [layer, agent] of [
        ['PROMPT "x"', 'shell'],
        ['MODE autopilot', 'shell'],
        ['REPO 1', 'shell'],
        ['BRANCH main', 'shell'],
        ['CONFIG nope = 1', 'shell'],
        ['ENV A "1"', 'no-such-agent'],
      ]) {
        const response = await admin('POST', '/orgs/acme/presets', { name: 'bad', agent_slug: agent, agentfile_layer: layer });
        expect(response.statusCode, layer).toBe(400);
      }
      for (const name of ['Bad', '-x', '', 'a'.repeat(64), 'a b']) {
        expect((await admin('POST', '/orgs/acme/presets', { name, agent_slug: 'shell' })).statusCode, name).toBe(400);
      }
      expect((await admin('GET', '/orgs/acme/presets')).json().presets.map((p: { name: string }) => p.name)).toEqual(['team-shell']);
    });

    it("a pod naming a preset gets its agent and lines, its own on top; naming both or an unknown preset is 400", async () => {
      await insertRunner(t.store, t.org.id, {}, clock.now);
      const pod = await call('POST', '/pods', aliceKey, { preset: 'team-shell', agentfile_layer: 'PROMPT "x"\nENV LEVEL "pod"\nCONFIG max_turns = 3' });
      expect(pod.statusCode, pod.body).toBe(201);
      const shown = (await call('GET', `/pods/${pod.json().pod.pod_key}`, t.key)).json().pod;
      expect(shown).toMatchObject({ agent_slug: 'shell', preset: 'team-shell', env: { TEAM: 'drover', LEVEL: 'pod' }, max_turns: 3, pod_timeout_minutes: 30 });
      expect((await call('POST', '/pods', aliceKey, { preset: 'team-shell', agent_slug: 'shell' })).statusCode).toBe(400);
      expect((await call('POST', '/pods', aliceKey, { preset: 'nope' })).statusCode).toBe(400);
      expect((await call('POST', '/pods', aliceKey, { agentfile_layer: 'PROMPT "x"' })).statusCode).toBe(400);
    });

    it("a loop naming a preset runs with its lines under the loop's own; the preset cannot be deleted while the loop uses it", async () => {
      await insertRunner(t.store, t.org.id, {}, clock.now);
      const loop = await call('POST', '/loops', aliceKey, { name: 'Preset loop', slug: 'preset-loop', preset: 'team-shell', execution_mode: 'direct', prompt_template: 'true', agentfile_layer: 'ENV LEVEL "loop"' });
      expect(loop.statusCode, loop.body).toBe(201);
      expect(loop.json().loop).toMatchObject({ preset: 'team-shell', agent_slug: 'shell' });
      const run = await call('POST', '/loops/preset-loop/trigger', aliceKey, {});
      expect(run.statusCode, run.body).toBeLessThan(300);
      const runs = (await call('GET', '/loops/preset-loop/runs', t.key)).json().runs as { pod_key: string | null }[];
      expect(runs[0].pod_key).not.toBeNull();
      const pod = (await call('GET', `/pods/${runs[0].pod_key}`, t.key)).json().pod;
      expect(pod).toMatchObject({ agent_slug: 'shell', preset: 'team-shell', env: { TEAM: 'drover', LEVEL: 'loop' }, max_turns: 7 });
      const refused = await admin('DELETE', '/orgs/acme/presets/team-shell');
      expect(refused.statusCode).toBe(409);
      expect(refused.json().error).toContain('preset-loop');
      expect((await call('POST', '/loops', aliceKey, { name: 'x', preset: 'team-shell', agent_slug: 'shell', prompt_template: 'x' })).statusCode).toBe(400);
    });
  });

  describe('placement by labels', () => {
    it('runs on the runner carrying the labels; 503 when none does; queues when that runner is full', async () => {
      const org = await t.createOrg('labs');
      const { key } = await t.issueKey(['pods:read', 'pods:write'], { org });
      const gpu = await insertRunner(t.store, org.id, { labels: '["gpu","x86"]', max_pods: 1 }, clock.now);
      const arm = await insertRunner(t.store, org.id, { labels: '["arm"]', max_pods: 10 }, clock.now);
      const post = (body: object) => t.request({ method: 'POST', url: t.path('/pods', 'labs'), key, payload: body });
      const first = await post({ agent_slug: 'shell', runner_labels: ['gpu'], agentfile_layer: 'PROMPT "a"' });
      expect(first.statusCode, first.body).toBe(201);
      const firstPod = (await t.request({ method: 'GET', url: t.path(`/pods/${first.json().pod.pod_key}`, 'labs'), key })).json().pod;
      expect(firstPod).toMatchObject({ runner_id: gpu, runner_labels: ['gpu'] });
      const none = await post({ agent_slug: 'shell', runner_labels: ['tpu'], agentfile_layer: 'PROMPT "b"' });
      expect(none.statusCode).toBe(503);
      expect(none.json().error).toContain('tpu');
      const both = await post({ agent_slug: 'shell', runner_labels: ['gpu', 'arm'], agentfile_layer: 'PROMPT "b"' });
      expect(both.statusCode).toBe(503);
      const queued = await post({ agent_slug: 'shell', runner_labels: ['gpu'], agentfile_layer: 'PROMPT "c"' });
      expect(queued.statusCode, queued.body).toBe(201);
      expect(queued.json().pod.status).toBe('queued');
      const onArm = await post({ agent_slug: 'shell', runner_labels: ['arm'], agentfile_layer: 'PROMPT "d"' });
      expect((await t.request({ method: 'GET', url: t.path(`/pods/${onArm.json().pod.pod_key}`, 'labs'), key })).json().pod.runner_id).toBe(arm);
      expect((await post({ agent_slug: 'shell', runner_id: arm, runner_labels: ['gpu'], agentfile_layer: 'PROMPT "e"' })).statusCode).toBe(409);
      for (const labels of ['gpu', [''], [1], Array.from({ length: 21 }, (_, i) => `l${i}`), ['a', 'a']]) {
        expect((await post({ agent_slug: 'shell', runner_labels: labels, agentfile_layer: 'PROMPT "f"' })).statusCode).toBe(400);
      }
      // The arm runner has room, but the queued pod wants gpu: ending the gpu pod places it there.
      const terminated = await t.request({ method: 'POST', url: t.path(`/pods/${first.json().pod.pod_key}/terminate`, 'labs'), key });
      expect(terminated.statusCode).toBe(200);
      const deadline = Date.now() + 20_000;
      let placed: { status: string; runner_id: number | null } | undefined;
      while (Date.now() < deadline) {
        placed = (await t.request({ method: 'GET', url: t.path(`/pods/${queued.json().pod.pod_key}`, 'labs'), key })).json().pod;
        if (placed?.status !== 'queued') break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(placed).toMatchObject({ runner_id: gpu });
    });
  });

  describe('GET /pods filters', () => {
    it('by ticket_slug, repository_id, agent_slug, runner_id and created_after; runner pod lists carry runner_id', async () => {
      const org = await t.createOrg('filters', 'FLT');
      const { key } = await t.issueKey(['pods:read', 'pods:write', 'tickets:write', 'runners:read'], { org });
      const r1 = await insertRunner(t.store, org.id, {}, clock.now);
      const get = async (query: string) => {
        const response = await t.request({ method: 'GET', url: t.path(`/pods?${query}`, 'filters'), key });
        expect(response.statusCode, response.body).toBe(200);
        return (response.json().pods as { key: string }[]).map((p) => p.key).sort();
      };
      const ticket = (await t.request({ method: 'POST', url: t.path('/tickets', 'filters'), key, payload: { type: 'task', title: 't' } })).json().ticket.slug as string;
      const post = async (body: object) => {
        const response = await t.request({ method: 'POST', url: t.path('/pods', 'filters'), key, payload: { agentfile_layer: 'PROMPT "x"', ...body } });
        expect(response.statusCode, response.body).toBe(201);
        return response.json().pod.pod_key as string;
      };
      const onTicket = await post({ agent_slug: 'shell', ticket_slug: ticket });
      const early = clock.now;
      clock.now += 1_000;
      const claude = await post({ agent_slug: 'claude-code' });
      expect(await get(`ticket_slug=${ticket.toLowerCase()}`)).toEqual([onTicket]);
      expect(await get('ticket_slug=FLT-999')).toEqual([]);
      expect(await get('agent_slug=claude-code')).toEqual([claude]);
      expect(await get(`runner_id=${r1}`)).toEqual([onTicket, claude].sort());
      expect(await get(`created_after=${encodeURIComponent(new Date(early).toISOString())}`)).toEqual([claude]);
      expect(await get('repository_id=999')).toEqual([]);
      for (const query of ['repository_id=x', 'runner_id=0', 'created_after=soon', 'ticket_slug=', 'owner=me']) {
        expect((await t.request({ method: 'GET', url: t.path(`/pods?${query}`, 'filters'), key })).statusCode, query).toBe(400);
      }
      const onRunner = (await t.request({ method: 'GET', url: t.path(`/runners/${r1}/pods`, 'filters'), key })).json().pods as { runner_id: number }[];
      expect(onRunner.length).toBe(2);
      expect(onRunner.every((p) => p.runner_id === r1)).toBe(true);
    });
  });
});
