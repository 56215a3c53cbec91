/**
 * Loops and what their runs' pods get (docs/agents.md "Sessions"; docs/decisions.md "Loops and runs",
 * "Runners and pods"; docs/api.md "Loops and runs"): `agentfile_layer` on create and PUT (shown on the record, given to every run's
 * pod, its errors 400 naming the field and line), `branch_name` checked like a BRANCH, the session
 * a run resumes (only a completed run's, only in the persistent sandbox), and runs whose pod waits
 * in the pod queue (`pending`, terminated on cancel, failed by the queue timeout).
 *
 * No runner process runs here: runner rows stand in for connected runners, and what a runner would
 * report goes through src/domain/pods/lifecycle.ts with the app's own context. The clock is the
 * test's.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/protocol/scopes.ts';
import type { DomainContext } from '../../src/domain/context.ts';
import { sweepRuns } from '../../src/domain/loops/run-follow.ts';
import { podFinished, podStarted } from '../../src/domain/pods/lifecycle.ts';
import type { PodConfig } from '../../src/domain/pods/model.ts';
import { expireQueuedPods } from '../../src/domain/pods/queue.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { type ErrorBodyJson, expectError } from '../helpers/errors.ts';
import { waitFor } from '../helpers/runner-process.ts';
import { insertRunner } from '../helpers/runners.ts';

const START = Date.parse('2026-11-24T08:00:00.000Z');
const LAYER = ['# what every run gets', 'CREDENTIAL MY_MODEL_KEY', 'ENV MODEL_BASE_URL "http://127.0.0.1:9/v1"', 'CONFIG model = sonnet', 'CONFIG permission_mode = acceptEdits', 'CONFIG pod_timeout_minutes = 30'].join('\n');

interface LoopJson {
  slug: string;
  agentfile_layer: string | null;
  branch_name: string | null;
}
interface RunJson {
  id: number;
  status: string;
  pod_key: string | null;
  runner_id: number | null;
  error_message: string | null;
  session_id: string | null;
}

function expectInvalid(res: LightMyRequestResponse, field: string, message?: RegExp): ErrorBodyJson {
  const body = expectError(res, 400, 'VALIDATION_FAILED');
  expect(body.details!.map((d) => d.field), res.body).toContain(field);
  if (message) expect(body.error).toMatch(message);
  return body;
}

describe.each(DATABASES)('loops: agentfile_layer, branch_name, sessions and queued runs (%s)', (kind) => {
  let t: TestApp;
  let ctx: DomainContext;
  let clock = START;
  let runnerId: number;
  let seq = 0;

  const call = (method: 'GET' | 'POST' | 'PUT', path: string, payload?: unknown, key?: string, org = 'acme') =>
    t.request({ method, url: `/api/v1/ext/orgs/${org}${path}`, key, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  const createLoop = async (body: Record<string, unknown>, key?: string, org?: string): Promise<LoopJson> => {
    seq += 1;
    const res = await call('POST', '/loops', { name: `Loop ${seq}`, slug: `a-${seq}`, agent_slug: 'claude-code', prompt_template: 'do the work', execution_mode: 'direct', ...body }, key, org);
    expect(res.statusCode, res.body).toBe(201);
    return (res.json() as { loop: LoopJson }).loop;
  };
  const trigger = async (slug: string, key?: string, org?: string): Promise<RunJson> => {
    const res = await call('POST', `/loops/${slug}/trigger`, undefined, key, org);
    expect(res.statusCode, res.body).toBe(201);
    return (res.json() as { run: RunJson }).run;
  };
  const getRun = async (slug: string, id: number, key?: string, org?: string): Promise<RunJson> => {
    const res = await call('GET', `/loops/${slug}/runs/${id}`, undefined, key, org);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { run: RunJson }).run;
  };
  const podRow = (key: string) => t.store.db.selectFrom('pods').selectAll().where('key', '=', key).executeTakeFirstOrThrow();
  const podConfig = async (key: string) => JSON.parse((await podRow(key)).config) as PodConfig;
  const counts = async () => {
    const n = async (table: 'loops' | 'loop_runs' | 'pods') => Number((await t.store.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    return { loops: await n('loops'), runs: await n('loop_runs'), pods: await n('pods') };
  };
  /** What the runner reports when a run's agent ends. */
  const finish = async (podKey: string, outcome: 'completed' | 'failed', sessionId: string | null) => {
    const pod = await podRow(podKey);
    await podStarted(ctx, pod.runner_id!, podKey);
    await podFinished(ctx, pod.runner_id!, { key: podKey, outcome, exit_code: outcome === 'completed' ? 0 : 1, error_message: outcome === 'failed' ? 'boom' : null, session_id: sessionId });
  };

  beforeAll(async () => {
    t = await startTestApp(kind, { now: () => clock });
    ctx = t.app.drover.ctx;
    runnerId = await insertRunner(t.store, t.org.id, { agents: '["shell","claude-code","codex"]' }, clock);
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(async () => {
    clock += 1000;
    await t.store.db.updateTable('runners').set({ last_heartbeat_at: clock }).execute();
  });

  describe('agentfile_layer', () => {
    it('create: shown on the record as given; every run’s pod gets its credentials, ENV and CONFIG (the loop’s prompt, mode and limits kept)', async () => {
      const loop = await createLoop({ agentfile_layer: LAYER, execution_mode: 'autopilot', autopilot_config: { max_iterations: 3, iteration_timeout_sec: 90 } });
      expect(loop.agentfile_layer).toBe(LAYER);
      const got = await call('GET', `/loops/${loop.slug}`);
      expect((got.json() as { loop: LoopJson }).loop.agentfile_layer).toBe(LAYER);

      const run = await trigger(loop.slug);
      expect(run.status).toBe('pending');
      const pod = await podRow(run.pod_key!);
      expect(JSON.parse(pod.credentials)).toEqual(['MY_MODEL_KEY']);
      expect(pod).toMatchObject({ prompt: 'do the work', mode: 'autopilot', agent_slug: 'claude-code', runner_id: runnerId });
      expect(await podConfig(run.pod_key!)).toMatchObject({
        model: 'sonnet',
        permission_mode: 'acceptEdits',
        pod_timeout_minutes: 30,
        max_iterations: 3,
        iteration_timeout_sec: 90,
        env: { MODEL_BASE_URL: 'http://127.0.0.1:9/v1' },
      });
      const detail = await call('GET', `/pods/${run.pod_key}`);
      expect((detail.json() as { pod: { env: Record<string, string> } }).pod.env).toEqual({ MODEL_BASE_URL: 'http://127.0.0.1:9/v1' });
    });

    it('PUT replaces it (the next run gets the new one), null or "" clears it; other PUTs keep it', async () => {
      const loop = await createLoop({ agentfile_layer: 'CREDENTIAL FIRST_KEY' });
      const renamed = await call('PUT', `/loops/${loop.slug}`, { name: 'Renamed' });
      expect((renamed.json() as { loop: LoopJson }).loop.agentfile_layer).toBe('CREDENTIAL FIRST_KEY');

      const put = await call('PUT', `/loops/${loop.slug}`, { agentfile_layer: 'CREDENTIAL SECOND_KEY\nENV MODE_X "y"' });
      expect(put.statusCode, put.body).toBe(200);
      expect((put.json() as { loop: LoopJson }).loop.agentfile_layer).toBe('CREDENTIAL SECOND_KEY\nENV MODE_X "y"');
      const run = await trigger(loop.slug);
      expect(JSON.parse((await podRow(run.pod_key!)).credentials)).toEqual(['SECOND_KEY']);
      await finish(run.pod_key!, 'completed', null);

      for (const cleared of [null, '']) {
        const res = await call('PUT', `/loops/${loop.slug}`, { agentfile_layer: cleared });
        expect(res.statusCode, res.body).toBe(200);
        expect((res.json() as { loop: LoopJson }).loop.agentfile_layer).toBeNull();
      }
      const bare = await trigger(loop.slug);
      expect(JSON.parse((await podRow(bare.pod_key!)).credentials)).toEqual([]);
      expect((await podConfig(bare.pod_key!)).env).toEqual({});
      await finish(bare.pod_key!, 'completed', null);
    });

    it.each([
      ['PROMPT "x"', 1, /PROMPT has no place in a loop's agentfile_layer: use the loop's prompt_template/],
      ['CREDENTIAL A_KEY\nPROMPT <<END\nhello\nEND', 2, /line 2: PROMPT/],
      ['MODE autopilot', 1, /use the loop's execution_mode/],
      ['REPO 1', 1, /use the loop's repository_id/],
      ['BRANCH main', 1, /use the loop's branch_name/],
      ['CONFIG max_iterations = 3', 1, /use the loop's autopilot_config.max_iterations/],
      ['CONFIG iteration_timeout_sec = 3', 1, /use the loop's autopilot_config.iteration_timeout_sec/],
      ['FROM base', 1, /unknown directive/],
      ['CONFIG permission_mode = workspace-write', 1, /permission_mode of claude-code must be one of default, acceptEdits, bypassPermissions, dontAsk, plan/],
      ['CONFIG colour = red', 1, /unknown CONFIG key/],
      ['ENV DROVER_API_URL "x"', 1, /reserved/],
      ['ENV LD_PRELOAD "/w/evil.so"', 1, /ENV LD_PRELOAD is not allowed/],
      ['CONFIG model = m\nENV GLIBC_TUNABLES "x"', 2, /ENV GLIBC_TUNABLES is not allowed/],
      ['CREDENTIAL LD_AUDIT', 1, /CREDENTIAL LD_AUDIT is not allowed/],
      ['CREDENTIAL X_KEY\nENV X_KEY "v"', 2, /both as CREDENTIAL/],
    ])('%j → 400 naming agentfile_layer and line %i; nothing written', async (text, line, message) => {
      const before = await counts();
      seq += 1;
      const res = await call('POST', '/loops', { name: 'Bad', slug: `bad-${seq}`, agent_slug: 'claude-code', prompt_template: 'x', agentfile_layer: text });
      const body = expectInvalid(res, '/agentfile_layer', message);
      expect(body.error).toContain(`line ${line}:`);
      expect(await counts()).toEqual(before);
    });

    it('a layer over 64 KiB, or not a string → 400 naming agentfile_layer', async () => {
      expectInvalid(await call('POST', '/loops', { name: 'Big', prompt_template: 'x', agentfile_layer: `# ${'x'.repeat(64 * 1024)}` }), '/agentfile_layer');
      expectInvalid(await call('POST', '/loops', { name: 'Num', prompt_template: 'x', agentfile_layer: 42 }), '/agentfile_layer');
    });

    it('PUT with a bad layer → 400, the loop unchanged; changing the agent to one that does not take its permission_mode → 400', async () => {
      const loop = await createLoop({ agentfile_layer: 'CONFIG permission_mode = plan' });
      const before = (await call('GET', `/loops/${loop.slug}`)).json() as { loop: LoopJson };
      expectInvalid(await call('PUT', `/loops/${loop.slug}`, { agentfile_layer: 'PROMPT "no"' }), '/agentfile_layer', /line 1: PROMPT/);
      expectInvalid(await call('PUT', `/loops/${loop.slug}`, { agent_slug: 'codex' }), '/agentfile_layer', /permission_mode of codex must be one of read-only, workspace-write, danger-full-access/);
      expect((await call('GET', `/loops/${loop.slug}`)).json()).toEqual(before);
    });

    it('CONFIG channel_id must be a channel of this organization: another org’s channel reads like none at all', async () => {
      const other = await t.createOrg(`chan-${++seq}`);
      const foreign = await t.store.db
        .insertInto('channels')
        .values({ org_id: other.id, name: `foreign-${seq}`, name_key: `foreign-${seq}`, description: null, document: null, repository_id: null, ticket_slug: null, archived: 0, created_at: clock, updated_at: clock })
        .returning('id')
        .executeTakeFirstOrThrow();
      const mine = await call('POST', '/channels', { name: `mine-${seq}` });
      expect(mine.statusCode, mine.body).toBe(201);
      const mineId = (mine.json() as { channel: { id: number } }).channel.id;
      const foreignError = expectInvalid(await call('POST', '/loops', { name: 'C', prompt_template: 'x', agentfile_layer: `CONFIG channel_id = ${foreign.id}` }), '/agentfile_layer');
      const noneError = expectInvalid(await call('POST', '/loops', { name: 'C', prompt_template: 'x', agentfile_layer: 'CONFIG channel_id = 999999' }), '/agentfile_layer');
      expect(foreignError.error.replace(/channel_id \d+/, 'channel_id N')).toBe(noneError.error.replace(/channel_id \d+/, 'channel_id N'));
      const loop = await createLoop({ agentfile_layer: `CONFIG channel_id = ${mineId}` });
      const run = await trigger(loop.slug);
      expect((await podRow(run.pod_key!)).channel_id).toBe(mineId);
    });

    it('security: credential values never travel (only names); a loops:read key reads the layer but cannot write it; another org sees nothing', async () => {
      const loop = await createLoop({ agentfile_layer: 'CREDENTIAL MY_MODEL_KEY' });
      const run = await trigger(loop.slug);
      const row = await podRow(run.pod_key!);
      expect(row.credentials).toBe('["MY_MODEL_KEY"]');
      const reader = (await t.issueKey(['loops:read'])).key;
      const read = await call('GET', `/loops/${loop.slug}`, undefined, reader);
      expect((read.json() as { loop: LoopJson }).loop.agentfile_layer).toBe('CREDENTIAL MY_MODEL_KEY');
      const denied = expectError(await call('PUT', `/loops/${loop.slug}`, { agentfile_layer: 'CREDENTIAL OTHER' }, reader), 403, 'INSUFFICIENT_SCOPE');
      expect(denied.required_scopes).toEqual(['loops:write']);
      const other = await t.createOrg(`spy-${++seq}`);
      const spy = (await t.issueKey(SCOPES, { org: other })).key;
      expectError(await call('GET', `/loops/${loop.slug}`, undefined, spy, other.slug), 404, 'NOT_FOUND');
      expectError(await call('PUT', `/loops/${loop.slug}`, { agentfile_layer: 'CREDENTIAL X' }, spy, other.slug), 404, 'NOT_FOUND');
      expect((await call('GET', `/loops/${loop.slug}`)).json()).toMatchObject({ loop: { agentfile_layer: 'CREDENTIAL MY_MODEL_KEY' } });
    });
  });

  describe('branch_name is checked like an agentfile BRANCH', () => {
    it.each(['main', 'feature/x-1', 'release/2026.11', 'a_b'])('%j is accepted', async (name) => {
      const loop = await createLoop({ branch_name: name });
      expect(loop.branch_name).toBe(name);
    });

    it.each([
      ['a..b', /must not contain \.\./],
      ['-x', /must not start with -/],
      ['has space', /whitespace/],
      ['x.lock', /\.lock/],
      ['/x', /must not start or end with \//],
      ['x/', /must not start or end with \//],
      ['a~b', /must not contain any of/],
      ['x/.hidden', /starting with \./],
      ['@', /@/],
    ])('%j → 400 naming branch_name (create and PUT), nothing written', async (name, message) => {
      const before = await counts();
      expectInvalid(await call('POST', '/loops', { name: 'B', prompt_template: 'x', branch_name: name }), '/branch_name', message);
      expect(await counts()).toEqual(before);
      const loop = await createLoop({ branch_name: 'main' });
      expectInvalid(await call('PUT', `/loops/${loop.slug}`, { branch_name: name }), '/branch_name', message);
      expect(((await call('GET', `/loops/${loop.slug}`)).json() as { loop: LoopJson }).loop.branch_name).toBe('main');
    });
  });

  describe('sessions: only a completed run’s session is resumed', () => {
    it('completed → resumed; failed, cancelled or timed out → never; the latest completed one wins', async () => {
      const loop = await createLoop({ sandbox_strategy: 'persistent', session_persistence: true, timeout_minutes: 5 });
      const resumes = async () => {
        const run = await trigger(loop.slug);
        expect(run.pod_key, JSON.stringify(run)).not.toBeNull();
        return { run, resume: (await podConfig(run.pod_key!)).resume_session_id };
      };

      const first = await resumes();
      expect(first.resume).toBeNull();
      await finish(first.run.pod_key!, 'completed', 'session-1');

      const second = await resumes();
      expect(second.resume).toBe('session-1');
      await finish(second.run.pod_key!, 'failed', 'session-2-failed');
      expect((await getRun(loop.slug, second.run.id)).status).toBe('failed');

      const third = await resumes();
      expect(third.resume).toBe('session-1');
      // Cancelled while its agent ran; the runner reports the session after the stop.
      await podStarted(ctx, runnerId, third.run.pod_key!);
      expect((await call('POST', `/loops/${loop.slug}/runs/${third.run.id}/cancel`)).statusCode).toBe(200);
      await podFinished(ctx, runnerId, { key: third.run.pod_key!, outcome: 'terminated', exit_code: null, error_message: 'terminated', session_id: 'session-3-cancelled' });
      expect((await getRun(loop.slug, third.run.id)).session_id).toBe('session-3-cancelled');

      const fourth = await resumes();
      expect(fourth.resume).toBe('session-1');
      // Timed out.
      await podStarted(ctx, runnerId, fourth.run.pod_key!);
      clock += 6 * 60_000;
      await sweepRuns(ctx);
      expect((await getRun(loop.slug, fourth.run.id)).status).toBe('timeout');
      await t.store.db.updateTable('runners').set({ last_heartbeat_at: clock }).execute();
      await podFinished(ctx, runnerId, { key: fourth.run.pod_key!, outcome: 'terminated', exit_code: null, error_message: 'terminated', session_id: 'session-4-timeout' });

      const fifth = await resumes();
      expect(fifth.resume).toBe('session-1');
      await finish(fifth.run.pod_key!, 'completed', 'session-5');
      const sixth = await resumes();
      expect(sixth.resume).toBe('session-5');
      await finish(sixth.run.pod_key!, 'completed', null);
      // A completed run that reported no session leaves the last one in place.
      expect((await resumes()).resume).toBe('session-5');
    });

    it('a fresh sandbox, or session_persistence false, resumes nothing', async () => {
      for (const body of [{ sandbox_strategy: 'fresh', session_persistence: true }, { sandbox_strategy: 'persistent', session_persistence: false }]) {
        const loop = await createLoop(body);
        const one = await trigger(loop.slug);
        await finish(one.pod_key!, 'completed', 'session-x');
        const two = await trigger(loop.slug);
        expect((await podConfig(two.pod_key!)).resume_session_id).toBeNull();
        await finish(two.pod_key!, 'completed', null);
      }
    });
  });

  describe('runs whose pod waits in the pod queue', () => {
    /** An org of its own with one runner of one slot, held by a pod. */
    async function fullOrg() {
      const org = await t.createOrg(`queue-${++seq}`);
      const { key } = await t.issueKey(SCOPES, { org });
      const runner = await insertRunner(t.store, org.id, { max_pods: 1 }, clock);
      const holder = await call('POST', '/pods', { agent_slug: 'shell' }, key, org.slug);
      expect(holder.statusCode, holder.body).toBe(201);
      return { org: org.slug, key, runner, holder: (holder.json() as { pod: { pod_key: string } }).pod.pod_key };
    }

    it('a run whose pod is queued is pending with that pod; when a slot frees the pod gets the runner, and the run runs when it starts', async () => {
      const o = await fullOrg();
      const loop = await createLoop({ agent_slug: 'shell', sandbox_strategy: 'fresh' }, o.key, o.org);
      const run = await trigger(loop.slug, o.key, o.org);
      expect(run).toMatchObject({ status: 'pending', runner_id: null, error_message: `waiting for a runner: its pod ${run.pod_key} is queued` });
      const pod = await call('GET', `/pods/${run.pod_key}`, undefined, o.key, o.org);
      expect(pod.json()).toMatchObject({ pod: { status: 'queued', runner_id: null, queue_position: 1 } });

      expect((await call('POST', `/pods/${o.holder}/terminate`, undefined, o.key, o.org)).statusCode).toBe(200);
      await waitFor(async () => (await podRow(run.pod_key!)).status === 'initializing');
      expect((await getRun(loop.slug, run.id, o.key, o.org)).status).toBe('pending');
      await podStarted(ctx, o.runner, run.pod_key!);
      expect(await getRun(loop.slug, run.id, o.key, o.org)).toMatchObject({ status: 'running', runner_id: o.runner });
      await podFinished(ctx, o.runner, { key: run.pod_key!, outcome: 'completed', exit_code: 0, error_message: null, session_id: null });
      expect(await getRun(loop.slug, run.id, o.key, o.org)).toMatchObject({ status: 'completed', error_message: null });
    });

    it('cancel of a run whose pod is queued: the run is cancelled and its pod terminated, never started', async () => {
      const o = await fullOrg();
      const loop = await createLoop({ agent_slug: 'shell', sandbox_strategy: 'fresh' }, o.key, o.org);
      const run = await trigger(loop.slug, o.key, o.org);
      const res = await call('POST', `/loops/${loop.slug}/runs/${run.id}/cancel`, undefined, o.key, o.org);
      expect(res.statusCode, res.body).toBe(200);
      expect((await podRow(run.pod_key!)).status).toBe('terminated');
      expect((await podRow(run.pod_key!)).runner_id).toBeNull();
      expect((await call('POST', `/pods/${o.holder}/terminate`, undefined, o.key, o.org)).statusCode).toBe(200);
      expect((await podRow(run.pod_key!)).status).toBe('terminated');
    });

    it('a queued pod past the queue timeout fails saying so, and its run fails with it', async () => {
      const o = await fullOrg();
      const loop = await createLoop({ agent_slug: 'shell', sandbox_strategy: 'fresh' }, o.key, o.org);
      const run = await trigger(loop.slug, o.key, o.org);
      expect(await expireQueuedPods(ctx, 60 * 60_000)).toBe(0);
      clock += 60 * 60_000 + 1;
      expect(await expireQueuedPods(ctx, 60 * 60_000)).toBeGreaterThanOrEqual(1);
      const pod = await podRow(run.pod_key!);
      expect(pod.status).toBe('failed');
      expect(pod.error_message).toMatch(/DROVER_POD_QUEUE_TIMEOUT_MINUTES = 60.*waited in the queue for 60 minutes/);
      const ended = await getRun(loop.slug, run.id, o.key, o.org);
      expect(ended.status).toBe('failed');
      expect(ended.error_message).toBe(pod.error_message);
      // The holder was never queued: it is untouched.
      expect((await podRow(o.holder)).status).toBe('initializing');
    });
  });
});
