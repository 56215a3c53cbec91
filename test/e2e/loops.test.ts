/**
 * Loops end to end (docs/api.md "Loops and runs") with REAL processes: a `drover serve` child
 * process (DROVER_SWEEP_INTERVAL_MS=200, DROVER_CRON_TICK_MS=200) and a `drover runner` child
 * process with the stand-in agent CLIs (test/fixtures/stand-in-agent.mjs) first on its PATH.
 * Loops use the `shell` agent (the prompt is a bash script) unless noted, and
 * `execution_mode: direct` unless the test is about autopilot (the default, autopilot, would
 * re-run a script that writes no status file up to max_iterations times).
 *
 * Most scripts are "gated" (GATED below): each records its pid (`$$`, the leader of the agent's
 * process group) and start time in the test's scratch directory, then sleeps in 50 ms steps until
 * the test creates its go-file (for at most 60 s), records its end time and exits with `{{code}}`.
 * So a test decides exactly when each run's agent finishes, and can check on the runner machine
 * that a cancelled, replaced or timed-out run's process is really gone. That needs the agents to
 * share the test's files and pids, so the loops run on a runner that runs them unsandboxed
 * (`--sandbox none`, `runner`); the tests of sandbox strategies and agent sessions, which need
 * nothing of the kind, run on a second runner with the default sandbox (`sandboxed`).
 *
 * Where the contract has a 1-minute granularity (timeout_minutes, cron) the test moves the stored
 * time (a run's `deadline_at`, a loop's `next_run_at`) through its own connection to the
 * database instead of waiting, and lets the server's sweeper / cron tick act on it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/db.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { createProcessTestDatabase, http, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { killGroup, processGone, runnerPath, standInBinDir, startRunnerProcess, tempDir, waitFor, type RunnerProcess } from '../helpers/runner-process.ts';

const ORG = '/api/v1/ext/orgs/default';
const LOOPS = `${ORG}/loops`;
const ADMIN_TOKEN = 'drvadm_e2e_loops_admin_token_0123456789abcdef';
const STAND_INS = ['claude', 'codex', 'gemini', 'aider', 'opencode'] as const;

/**
 * Records its start, then its pid (atomically: a pid file is never seen half-written, and once it is
 * there the start stamp is too), waits for its go-file (≤ 60 s), records its end, exits with {{code}}.
 */
const GATED = [
  'date +%s%3N > {{dir}}/{{tag}}.start',
  'echo $$ > {{dir}}/{{tag}}.pid.tmp && mv {{dir}}/{{tag}}.pid.tmp {{dir}}/{{tag}}.pid',
  'for i in $(seq 1 1200); do [ -e {{dir}}/{{tag}}.go ] && break; sleep 0.05; done',
  'date +%s%3N > {{dir}}/{{tag}}.end',
  'echo "run {{tag}} done"',
  'exit {{code}}',
].join('\n');

interface Run {
  id: number;
  loop_id: number;
  loop_slug: string;
  run_number: number;
  status: string;
  trigger_type: string;
  variables: Record<string, unknown>;
  resolved_prompt: string | null;
  pod_key: string | null;
  runner_id: number | null;
  scheduled_at: string | null;
  started_at: string | null;
  finished_at: string | null;
  duration_sec: number | null;
  error_message: string | null;
  created_at: string;
}

interface Loop {
  id: number;
  slug: string;
  status: string;
  next_run_at: string | null;
  last_run_at: string | null;
  total_runs: number;
  successful_runs: number;
  failed_runs: number;
  active_run_count: number;
}

interface Pod {
  key: string;
  status: string;
  runner_id: number;
  exit_code: number | null;
  error_message: string | null;
  started_at: string | null;
  finished_at: string | null;
}

interface ErrorBody {
  code: string;
  error: string;
}

interface StandInRecord {
  name: string;
  argv: string[];
  env: Record<string, string>;
  sessionId: string;
  pid: number;
}

/** Only for bounded checks that something does NOT happen in the meantime (no event to wait for). */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ms = (iso: string | null) => (iso === null ? Number.NaN : Date.parse(iso));

describe.each(DATABASES)('loops end to end (%s)', (kind) => {
  let database: TestDatabase;
  let store: Store;
  let server: ServerProcess;
  let runner: RunnerProcess;
  let sandboxed: RunnerProcess;
  let apiKey: string;
  let scratch: string;
  let home: string;
  let binDir: string;
  const leftovers = new Set<number>();
  const timings: string[] = [];

  const api = (method: string, urlPath: string, body?: unknown) => http(server.url, method, urlPath, { key: apiKey, body });

  /** A scratch directory of this test, where its scripts leave pid/start/end files. */
  const dirFor = (name: string) => fs.mkdtempSync(path.join(scratch, `${name}-`));

  async function createLoop(body: Record<string, unknown>): Promise<Loop> {
    const response = await api('POST', LOOPS, { agent_slug: 'shell', execution_mode: 'direct', sandbox_strategy: 'fresh', runner_id: runner.runnerId, ...body });
    expect(response.status, response.text).toBe(201);
    return (response.body as { loop: Loop }).loop;
  }

  async function getLoop(slug: string): Promise<Loop> {
    const response = await api('GET', `${LOOPS}/${slug}`);
    expect(response.status, response.text).toBe(200);
    return (response.body as { loop: Loop }).loop;
  }

  async function trigger(slug: string, variables?: Record<string, unknown>): Promise<Run> {
    const response = await api('POST', `${LOOPS}/${slug}/trigger`, variables ? { variables } : undefined);
    expect(response.status, response.text).toBe(201);
    return (response.body as { run: Run }).run;
  }

  async function getRun(slug: string, id: number): Promise<Run> {
    const response = await api('GET', `${LOOPS}/${slug}/runs/${id}`);
    expect(response.status, response.text).toBe(200);
    return (response.body as { run: Run }).run;
  }

  async function listRuns(slug: string, query = ''): Promise<{ runs: Run[]; total: number }> {
    const response = await api('GET', `${LOOPS}/${slug}/runs${query}`);
    expect(response.status, response.text).toBe(200);
    return response.body as { runs: Run[]; total: number };
  }

  const waitRun = (slug: string, id: number, statuses: string[], timeout = 15_000) =>
    waitFor(
      async () => {
        const run = await getRun(slug, id);
        return statuses.includes(run.status) ? run : undefined;
      },
      { timeout, interval: 50, what: `run ${id} of ${slug} to be ${statuses.join('|')}` },
    );

  async function getPod(key: string): Promise<Pod> {
    const response = await api('GET', `${ORG}/pods/${key}`);
    expect(response.status, response.text).toBe(200);
    return (response.body as { pod: Pod }).pod;
  }

  async function podOutput(key: string): Promise<string> {
    const response = await api('GET', `${ORG}/pods/${key}/output`);
    expect(response.status, response.text).toBe(200);
    return (response.body as { output: string }).output;
  }

  async function podTotal(): Promise<number> {
    const response = await api('GET', `${ORG}/pods?limit=1`);
    expect(response.status, response.text).toBe(200);
    return (response.body as { total: number }).total;
  }

  /** The pid a gated script wrote (waits for it); remembered for the final clean-up. */
  async function pidOf(dir: string, tag: string, timeout = 15_000): Promise<number> {
    const file = path.join(dir, `${tag}.pid`);
    const text = await waitFor(() => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() || undefined : undefined), { timeout, what: file });
    const pid = Number(text);
    leftovers.add(pid);
    return pid;
  }

  const stamp = (dir: string, tag: string, what: 'start' | 'end') => Number(fs.readFileSync(path.join(dir, `${tag}.${what}`), 'utf8').trim());
  const started = (dir: string, tag: string) => fs.existsSync(path.join(dir, `${tag}.pid`));
  const release = (dir: string, ...tags: string[]) => {
    for (const tag of tags) fs.writeFileSync(path.join(dir, `${tag}.go`), '');
  };
  const gone = (pid: number, what: string) => waitFor(() => processGone(pid), { timeout: 12_000, interval: 100, what });

  /** Sets a stored time through the test's own connection (the contract's minute granularity is too coarse to wait for). */
  const setRunDeadline = (runId: number, at: number) => store.db.updateTable('loop_runs').set({ deadline_at: at }).where('id', '=', runId).execute();
  const setNextRunAt = (loopId: number, at: number) => store.db.updateTable('loops').set({ next_run_at: at }).where('id', '=', loopId).execute();

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    store = database.open();
    scratch = tempDir('loops');
    home = tempDir('loops-home');
    binDir = standInBinDir(STAND_INS);
    server = await startServerProcess({
      dataDir: database.dataDir,
      env: {
        ...database.env,
        DROVER_ADMIN_TOKEN: ADMIN_TOKEN,
        DROVER_SWEEP_INTERVAL_MS: '200',
        DROVER_CRON_TICK_MS: '200',
        // The cron tests fire a slot by moving next_run_at into the past; a loop whose next minute is
        // within the lead would otherwise get a run prepared for it first (test/e2e/cron-prepared.test.ts).
        DROVER_CRON_PREPARE_AHEAD_MS: '0',
        DROVER_LOG_LEVEL: 'warn',
      },
    });
    apiKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    const registrationToken = async () => {
      const token = await http(server.url, 'POST', '/api/v1/admin/orgs/default/runner-tokens', { bearer: ADMIN_TOKEN, body: {} });
      expect(token.status, token.text).toBe(201);
      return (token.body as { token: string }).token;
    };
    const env = { PATH: runnerPath(binDir), HOME: home, LANG: 'C.UTF-8' };
    runner = await startRunnerProcess({ server: server.url, token: await registrationToken(), workDir: path.join(scratch, 'runner'), name: 'loops', maxPods: 16, sandbox: 'none', env });
    sandboxed = await startRunnerProcess({ server: server.url, token: await registrationToken(), workDir: path.join(scratch, 'sandboxed'), name: 'sandboxed', maxPods: 4, env });
    for (const r of [runner, sandboxed]) {
      await waitFor(async () => ((await api('GET', `${ORG}/runners/${r.runnerId}`)).body as { runner: { status: string } }).runner.status === 'online', {
        what: 'the runner to be online',
      });
    }
  });

  afterAll(async () => {
    if (timings.length > 0) console.log(`loops e2e (${kind}) timings:\n  ${timings.join('\n  ')}`);
    await runner?.stop();
    await sandboxed?.stop();
    await server?.stop();
    for (const pid of leftovers) killGroup(pid);
    await store?.close();
    await database?.cleanup();
    for (const dir of [scratch, home, binDir]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('concurrency_policy skip', () => {
    it('max_concurrent_runs 1: triggers while a run is active are recorded as skipped, saying why; once it ended, a trigger runs again', async () => {
      const dir = dirFor('skip1');
      const loop = await createLoop({ name: 'Skip one', slug: 'skip-one', prompt_template: GATED, prompt_variables: { dir, code: 0 }, concurrency_policy: 'skip', max_concurrent_runs: 1 });
      const first = await trigger(loop.slug, { tag: 'a' });
      expect(first).toMatchObject({ status: 'pending', run_number: 1, trigger_type: 'manual', scheduled_at: null });
      await pidOf(dir, 'a');
      await waitRun(loop.slug, first.id, ['running']);

      for (const tag of ['b', 'c']) {
        const extra = await trigger(loop.slug, { tag });
        expect(extra).toMatchObject({ status: 'skipped', pod_key: null, started_at: null });
        expect(extra.finished_at).not.toBeNull();
        expect(extra.error_message).toMatch(/skip/i);
        expect(extra.error_message).toMatch(/1/);
      }
      await sleep(400);
      expect(started(dir, 'b') || started(dir, 'c')).toBe(false);
      expect((await getRun(loop.slug, first.id)).status).toBe('running');

      release(dir, 'a');
      expect(await waitRun(loop.slug, first.id, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
      const again = await trigger(loop.slug, { tag: 'd' });
      expect(again.status).toBe('pending');
      await pidOf(dir, 'd');
      release(dir, 'd');
      expect(await waitRun(loop.slug, again.id, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
      expect((await listRuns(loop.slug)).runs.map((r) => [r.run_number, r.status])).toEqual([
        [4, 'completed'],
        [3, 'skipped'],
        [2, 'skipped'],
        [1, 'completed'],
      ]);
    });

    it('max_concurrent_runs 3: three run at once (three live processes); the 4th and 5th are skipped', async () => {
      const dir = dirFor('skip3');
      const loop = await createLoop({ name: 'Skip three', slug: 'skip-three', prompt_template: GATED, prompt_variables: { dir, code: 0 }, concurrency_policy: 'skip', max_concurrent_runs: 3 });
      const runs = [];
      for (const tag of ['a', 'b', 'c']) runs.push(await trigger(loop.slug, { tag }));
      expect(runs.map((r) => r.status)).toEqual(['pending', 'pending', 'pending']);
      const pids = await Promise.all(['a', 'b', 'c'].map((tag) => pidOf(dir, tag)));
      expect(pids.map((pid) => processGone(pid))).toEqual([false, false, false]);
      for (const run of runs) await waitRun(loop.slug, run.id, ['running']);
      for (const tag of ['d', 'e']) {
        const extra = await trigger(loop.slug, { tag });
        expect(extra.status).toBe('skipped');
        expect(extra.error_message).toMatch(/3 of at most 3/);
      }
      expect((await getLoop(loop.slug)).active_run_count).toBe(3);
      release(dir, 'a', 'b', 'c');
      for (const run of runs) expect(await waitRun(loop.slug, run.id, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
      expect(started(dir, 'd') || started(dir, 'e')).toBe(false);
    });
  });

  describe('concurrency_policy queue', () => {
    it('max_concurrent_runs 1: extras wait as queued and start in order, well under 1 s after the previous run’s pod completed (no polling tick)', async () => {
      const dir = dirFor('queue1');
      const loop = await createLoop({ name: 'Queue one', slug: 'queue-one', prompt_template: GATED, prompt_variables: { dir, code: 0 }, concurrency_policy: 'queue', max_concurrent_runs: 1 });
      const a = await trigger(loop.slug, { tag: 'a' });
      await pidOf(dir, 'a');
      await waitRun(loop.slug, a.id, ['running']);
      const b = await trigger(loop.slug, { tag: 'b' });
      const c = await trigger(loop.slug, { tag: 'c' });
      for (const run of [b, c]) expect(run).toMatchObject({ status: 'queued', pod_key: null, started_at: null, error_message: null });
      await sleep(400);
      expect(started(dir, 'b')).toBe(false);
      expect((await getRun(loop.slug, b.id)).status).toBe('queued');

      release(dir, 'a');
      await pidOf(dir, 'b');
      const aDone = await waitRun(loop.slug, a.id, ['completed', 'failed']);
      expect(aDone.status).toBe('completed');
      const bRunning = await waitRun(loop.slug, b.id, ['running']);
      expect((await getRun(loop.slug, c.id)).status).toBe('queued');
      const podA = await getPod(aDone.pod_key!);
      const serverGap = ms(bRunning.started_at) - ms(podA.finished_at);
      const processGap = stamp(dir, 'b', 'start') - stamp(dir, 'a', 'end');
      timings.push(`queue: pod completed → next run started ${serverGap} ms (server clock); agent end → next agent start ${processGap} ms`);
      expect(serverGap).toBeGreaterThanOrEqual(0);
      // The promotion happens when the pod's end is recorded (server clock: milliseconds); the
      // process gap adds two runner round trips and a bash start, so it is bounded loosely (a busy
      // CI machine must not fail it), and printed above.
      expect(serverGap).toBeLessThan(1000);
      expect(processGap).toBeLessThan(5000);

      release(dir, 'b');
      await pidOf(dir, 'c');
      release(dir, 'c');
      for (const run of [b, c]) expect(await waitRun(loop.slug, run.id, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
      const final = await getRun(loop.slug, c.id);
      expect(ms(final.started_at)).toBeGreaterThanOrEqual(ms((await getRun(loop.slug, b.id)).finished_at));
    });

    it('max_concurrent_runs 3: the 4th and 5th queue; each slot that frees starts the oldest queued run (FIFO)', async () => {
      const dir = dirFor('queue3');
      const loop = await createLoop({ name: 'Queue three', slug: 'queue-three', prompt_template: GATED, prompt_variables: { dir, code: 0 }, concurrency_policy: 'queue', max_concurrent_runs: 3 });
      const runs: Record<string, Run> = {};
      for (const tag of ['a', 'b', 'c', 'd', 'e']) runs[tag] = await trigger(loop.slug, { tag });
      expect(['a', 'b', 'c', 'd', 'e'].map((t) => runs[t].status)).toEqual(['pending', 'pending', 'pending', 'queued', 'queued']);
      await Promise.all(['a', 'b', 'c'].map((tag) => pidOf(dir, tag)));
      expect((await getLoop(loop.slug)).active_run_count).toBe(5);

      release(dir, 'b'); // not the oldest: any slot that frees moves the queue
      await pidOf(dir, 'd');
      await sleep(300);
      expect(started(dir, 'e')).toBe(false);
      expect((await getRun(loop.slug, runs.e.id)).status).toBe('queued');
      release(dir, 'a');
      await pidOf(dir, 'e');
      const gap = stamp(dir, 'e', 'start') - stamp(dir, 'a', 'end');
      timings.push(`queue (max 3): agent end → queued agent start ${gap} ms`);
      expect(gap).toBeLessThan(5000);
      release(dir, 'c', 'd', 'e');
      for (const tag of ['a', 'b', 'c', 'd', 'e']) expect(await waitRun(loop.slug, runs[tag].id, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
      const d = await getRun(loop.slug, runs.d.id);
      const e = await getRun(loop.slug, runs.e.id);
      expect(ms(d.started_at)).toBeLessThan(ms(e.started_at));
    });
  });

  describe('concurrency_policy replace', () => {
    it('max_concurrent_runs 1: the active run is cancelled, its pod terminated and its process gone on the runner; the new run starts', async () => {
      const dir = dirFor('replace1');
      const loop = await createLoop({ name: 'Replace one', slug: 'replace-one', prompt_template: GATED, prompt_variables: { dir, code: 0 }, concurrency_policy: 'replace', max_concurrent_runs: 1 });
      const a = await trigger(loop.slug, { tag: 'a' });
      const pidA = await pidOf(dir, 'a');
      const aRunning = await waitRun(loop.slug, a.id, ['running']);
      expect(processGone(pidA)).toBe(false);

      const b = await trigger(loop.slug, { tag: 'b' });
      expect(b.status).toBe('pending');
      const aAfter = await getRun(loop.slug, a.id);
      expect(aAfter.status).toBe('cancelled');
      expect(aAfter.error_message).toMatch(/replaced/);
      expect(aAfter.finished_at).not.toBeNull();
      await waitFor(async () => (await getPod(aRunning.pod_key!)).status === 'terminated', { what: 'the replaced run’s pod to be terminated' });
      await gone(pidA, 'the replaced run’s agent process to be gone');

      await pidOf(dir, 'b');
      await waitRun(loop.slug, b.id, ['running']);
      expect((await getRun(loop.slug, a.id)).status).toBe('cancelled'); // the pod's end does not overwrite it
      release(dir, 'b');
      expect(await waitRun(loop.slug, b.id, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    });

    it('max_concurrent_runs 3: the oldest of three is replaced (process gone), the two others go on', async () => {
      const dir = dirFor('replace3');
      const loop = await createLoop({ name: 'Replace three', slug: 'replace-three', prompt_template: GATED, prompt_variables: { dir, code: 0 }, concurrency_policy: 'replace', max_concurrent_runs: 3 });
      const runs: Record<string, Run> = {};
      for (const tag of ['a', 'b', 'c']) runs[tag] = await trigger(loop.slug, { tag });
      const pids = Object.fromEntries(await Promise.all(['a', 'b', 'c'].map(async (tag) => [tag, await pidOf(dir, tag)] as const)));
      for (const tag of ['a', 'b', 'c']) await waitRun(loop.slug, runs[tag].id, ['running']);

      runs.d = await trigger(loop.slug, { tag: 'd' });
      expect(runs.d.status).toBe('pending');
      expect((await getRun(loop.slug, runs.a.id)).status).toBe('cancelled');
      await gone(pids.a, 'the oldest run’s process to be gone');
      await pidOf(dir, 'd');
      for (const tag of ['b', 'c', 'd']) expect((await waitRun(loop.slug, runs[tag].id, ['running'])).status).toBe('running');
      expect(processGone(pids.b) || processGone(pids.c)).toBe(false);
      expect((await getLoop(loop.slug)).active_run_count).toBe(3);
      release(dir, 'b', 'c', 'd');
      for (const tag of ['b', 'c', 'd']) expect(await waitRun(loop.slug, runs[tag].id, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    });
  });

  describe('concurrent triggers (the loop row serialises the policy decisions)', () => {
    const burst = async (slug: string, n: number) =>
      Promise.all(Array.from({ length: n }, (_, i) => trigger(slug, { tag: `t${i}` })));

    it('skip, max 1: five triggers at once → one run starts, four are skipped', async () => {
      const dir = dirFor('burst-skip');
      const loop = await createLoop({ name: 'Burst skip', slug: 'burst-skip', prompt_template: GATED, prompt_variables: { dir, code: 0 }, concurrency_policy: 'skip' });
      const runs = await burst(loop.slug, 5);
      expect(runs.filter((r) => r.status === 'pending')).toHaveLength(1);
      expect(runs.filter((r) => r.status === 'skipped')).toHaveLength(4);
      expect(new Set(runs.map((r) => r.run_number))).toEqual(new Set([1, 2, 3, 4, 5]));
      const tag = String(runs.find((r) => r.status === 'pending')!.variables.tag);
      await pidOf(dir, tag);
      release(dir, tag);
      await waitRun(loop.slug, runs.find((r) => r.status === 'pending')!.id, ['completed']);
    });

    it('replace, max 1: five triggers at once → exactly one agent process is left running, and every cancelled run’s pod is terminated', async () => {
      const dir = dirFor('burst-replace');
      const loop = await createLoop({ name: 'Burst replace', slug: 'burst-replace', prompt_template: GATED, prompt_variables: { dir, code: 0 }, concurrency_policy: 'replace' });
      const runs = await burst(loop.slug, 5);
      await sleep(1_500);
      const now = await Promise.all(runs.map((r) => getRun(loop.slug, r.id)));
      const active = now.filter((r) => ['pending', 'running'].includes(r.status));
      expect(active, JSON.stringify(now.map((r) => [r.id, r.status, r.pod_key]))).toHaveLength(1);
      const tags = runs.map((r) => String(r.variables.tag));
      const survivor = String(active[0].variables.tag);
      // Every pod of a replaced run that exists is terminated: none is left running unowned.
      const pods = await store.db.selectFrom('pods').select(['key', 'status', 'config']).execute();
      const ours = pods.filter((p) => runs.some((r) => (JSON.parse(p.config) as { loop_run_id: number | null }).loop_run_id === r.id));
      const livePods = ours.filter((p) => ['initializing', 'running'].includes(p.status)).map((p) => p.key);
      try {
        expect(livePods, JSON.stringify(ours.map((p) => [p.key, p.status]))).toEqual([active[0].pod_key]);
        // On the runner machine: the survivor's agent runs; every other agent that got started is gone.
        expect(processGone(await pidOf(dir, survivor))).toBe(false);
        for (const tag of tags.filter((t) => t !== survivor && started(dir, t))) await gone(await pidOf(dir, tag), `the agent of replaced run ${tag} to be gone`);
      } finally {
        release(dir, ...tags);
      }
      await waitRun(loop.slug, active[0].id, ['completed']);
    });
  });

  it('queue: raising max_concurrent_runs (PUT) starts queued runs that now fit', async () => {
    const dir = dirFor('raise');
    const loop = await createLoop({ name: 'Raise', slug: 'raise-max', prompt_template: GATED, prompt_variables: { dir, code: 0 }, concurrency_policy: 'queue' });
    const a = await trigger(loop.slug, { tag: 'a' });
    await waitRun(loop.slug, a.id, ['running']);
    const b = await trigger(loop.slug, { tag: 'b' });
    expect(b.status).toBe('queued');
    const put = await api('PUT', `${LOOPS}/${loop.slug}`, { max_concurrent_runs: 2 });
    expect(put.status, put.text).toBe(200);
    try {
      await pidOf(dir, 'b', 3_000);
      expect((await waitRun(loop.slug, b.id, ['running'])).status).toBe('running');
    } finally {
      release(dir, 'a', 'b');
    }
    await waitRun(loop.slug, b.id, ['completed']);
  });

  it('a run whose pod is terminated through the pods API ends as cancelled, and the queue moves on', async () => {
    const dir = dirFor('podterm');
    const loop = await createLoop({ name: 'Pod terminated', slug: 'pod-terminated', prompt_template: GATED, prompt_variables: { dir, code: 0 }, concurrency_policy: 'queue' });
    const a = await trigger(loop.slug, { tag: 'a' });
    const running = await waitRun(loop.slug, a.id, ['running']);
    const b = await trigger(loop.slug, { tag: 'b' });
    expect((await api('POST', `${ORG}/pods/${running.pod_key}/terminate`)).status).toBe(200);
    const ended = await waitRun(loop.slug, a.id, ['cancelled', 'failed', 'completed']);
    expect(ended.status).toBe('cancelled');
    expect(ended.error_message).toMatch(/terminated/);
    await pidOf(dir, 'b');
    release(dir, 'b');
    expect(await waitRun(loop.slug, b.id, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
  });

  it('cancel: 200 with the cancelled run; the pod is terminated and its process is gone; cancelling again is 409 RUN_NOT_ACTIVE; a run of another loop is 404', async () => {
    const dir = dirFor('cancel');
    const loop = await createLoop({ name: 'Cancel', slug: 'cancel-me', prompt_template: GATED, prompt_variables: { dir, code: 0 } });
    const run = await trigger(loop.slug, { tag: 'a' });
    const pid = await pidOf(dir, 'a');
    const running = await waitRun(loop.slug, run.id, ['running']);

    const cancel = await api('POST', `${LOOPS}/${loop.slug}/runs/${run.id}/cancel`);
    expect(cancel.status, cancel.text).toBe(200);
    const body = cancel.body as { message: string; run: Run };
    expect(body.message).toEqual(expect.any(String));
    expect(body.run).toMatchObject({ id: run.id, status: 'cancelled' });
    expect(body.run.finished_at).not.toBeNull();
    expect((await getPod(running.pod_key!)).status).toBe('terminated');
    await gone(pid, 'the cancelled run’s agent process to be gone');
    await sleep(300);
    expect((await getRun(loop.slug, run.id)).status).toBe('cancelled');

    const again = await api('POST', `${LOOPS}/${loop.slug}/runs/${run.id}/cancel`);
    expect(again.status).toBe(409);
    expect((again.body as ErrorBody).code).toBe('RUN_NOT_ACTIVE');
    const other = await createLoop({ name: 'Other', slug: 'cancel-other', prompt_template: 'true' });
    const wrongLoop = await api('POST', `${LOOPS}/${other.slug}/runs/${run.id}/cancel`);
    expect(wrongLoop.status).toBe(404);
  });

  it('timeout: a run past its deadline becomes timeout within 5 s (sweeper), its pod is terminated and its process gone', async () => {
    const dir = dirFor('timeout');
    const loop = await createLoop({ name: 'Timeout', slug: 'time-out', prompt_template: GATED, prompt_variables: { dir, code: 0 }, timeout_minutes: 1, concurrency_policy: 'queue' });
    const run = await trigger(loop.slug, { tag: 'a' });
    const pid = await pidOf(dir, 'a');
    const running = await waitRun(loop.slug, run.id, ['running']);
    const next = await trigger(loop.slug, { tag: 'b' });
    expect(next.status).toBe('queued');
    const row = await store.db.selectFrom('loop_runs').select(['started_at', 'deadline_at']).where('id', '=', run.id).executeTakeFirstOrThrow();
    expect(Number(row.deadline_at) - Number(row.started_at)).toBe(60_000); // timeout_minutes counts from started_at

    const deadline = Date.now();
    await setRunDeadline(run.id, deadline);
    const timedOut = await waitRun(loop.slug, run.id, ['timeout', 'cancelled', 'completed', 'failed'], 5_000);
    timings.push(`timeout: run deadline → status timeout ${Date.now() - deadline} ms (upper bound)`);
    expect(timedOut.status).toBe('timeout');
    expect(timedOut.error_message).toMatch(/timeout/);
    // Its pod is terminated right after the run's end is recorded (docs/api.md "Loops and runs"):
    // a read in between sees it still running.
    const pod = await waitFor(
      async () => {
        const current = await getPod(running.pod_key!);
        return current.status === 'running' ? undefined : current;
      },
      { timeout: 5_000, interval: 50, what: 'the timed-out run’s pod to be terminated' },
    );
    expect(pod.status).toBe('terminated');
    await gone(pid, 'the timed-out run’s agent process to be gone');
    await sleep(300);
    expect((await getRun(loop.slug, run.id)).status).toBe('timeout');
    // The slot it held is free: the queued run starts, with its own deadline counted from its start.
    await pidOf(dir, 'b');
    const b = await waitRun(loop.slug, next.id, ['running']);
    const bRow = await store.db.selectFrom('loop_runs').select(['started_at', 'deadline_at']).where('id', '=', next.id).executeTakeFirstOrThrow();
    expect(Number(bRow.started_at)).toBe(ms(b.started_at));
    expect(Number(bRow.deadline_at) - Number(bRow.started_at)).toBe(60_000);
    release(dir, 'b');
    expect(await waitRun(loop.slug, next.id, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
  });

  it('run states follow pods: exit 0 → completed, exit 3 → failed with error_message; rendered prompt, pod, runner and times recorded', async () => {
    const loop = await createLoop({
      name: 'Exit codes',
      slug: 'exit-codes',
      prompt_template: 'echo "out {{ tag }}"\nexit {{code}}',
      prompt_variables: { code: 0 },
      concurrency_policy: 'queue',
    });
    const ok = await trigger(loop.slug, { tag: 'fine' });
    const done = await waitRun(loop.slug, ok.id, ['completed', 'failed']);
    expect(done).toMatchObject({ status: 'completed', error_message: null, runner_id: runner.runnerId, resolved_prompt: 'echo "out fine"\nexit 0', variables: { tag: 'fine' } });
    expect(done.duration_sec).toEqual(expect.any(Number));
    expect(ms(done.finished_at)).toBeGreaterThanOrEqual(ms(done.started_at));
    expect(await getPod(done.pod_key!)).toMatchObject({ status: 'completed', exit_code: 0 });
    expect(await podOutput(done.pod_key!)).toBe('out fine\n');

    const bad = await trigger(loop.slug, { tag: 'bad', code: 3 });
    const failed = await waitRun(loop.slug, bad.id, ['completed', 'failed']);
    expect(failed.status).toBe('failed');
    expect(failed.error_message).toMatch(/exit code 3/);
    expect(await getPod(failed.pod_key!)).toMatchObject({ status: 'failed', exit_code: 3 });
  });

  it('stats agree with the runs (detail and list): total, successful, failed, active, last_run_at', async () => {
    const dir = dirFor('stats');
    const loop = await createLoop({ name: 'Stats', slug: 'stats', prompt_template: GATED, prompt_variables: { dir, code: 0 } });
    const r1 = await trigger(loop.slug, { tag: 'a' });
    release(dir, 'a');
    await waitRun(loop.slug, r1.id, ['completed']);
    const r2 = await trigger(loop.slug, { tag: 'b', code: 3 });
    release(dir, 'b');
    await waitRun(loop.slug, r2.id, ['failed']);
    const r3 = await trigger(loop.slug, { tag: 'c' });
    await waitRun(loop.slug, r3.id, ['running']);
    expect((await trigger(loop.slug, { tag: 'x' })).status).toBe('skipped');
    expect((await api('POST', `${LOOPS}/${loop.slug}/runs/${r3.id}/cancel`)).status).toBe(200);
    const r5 = await trigger(loop.slug, { tag: 'e' });
    const r5Running = await waitRun(loop.slug, r5.id, ['running']);

    const check = async (want: Omit<Loop, 'id' | 'slug' | 'status' | 'next_run_at' | 'last_run_at'>, lastRunAt: string | null) => {
      const detail = await getLoop(loop.slug);
      expect(detail).toMatchObject({ ...want, last_run_at: lastRunAt });
      const listed = ((await api('GET', LOOPS)).body as { loops: Loop[] }).loops.find((l) => l.slug === loop.slug);
      expect(listed).toMatchObject({ ...want, last_run_at: lastRunAt });
      const all = await listRuns(loop.slug, '?limit=100');
      const count = (...statuses: string[]) => all.runs.filter((r) => statuses.includes(r.status)).length;
      expect(all.total).toBe(want.total_runs);
      expect(count('completed')).toBe(want.successful_runs);
      expect(count('failed', 'timeout')).toBe(want.failed_runs);
      expect(count('queued', 'pending', 'running')).toBe(want.active_run_count);
      for (const status of ['completed', 'failed', 'skipped', 'cancelled', 'running']) {
        expect((await listRuns(loop.slug, `?status=${status}`)).total, status).toBe(count(status));
      }
    };
    await check({ total_runs: 5, successful_runs: 1, failed_runs: 1, active_run_count: 1 }, r5Running.started_at);
    release(dir, 'e');
    await waitRun(loop.slug, r5.id, ['completed']);
    await check({ total_runs: 5, successful_runs: 2, failed_runs: 1, active_run_count: 0 }, r5Running.started_at);
    expect(started(dir, 'x')).toBe(false);
  });

  it('disable: queued runs are cancelled, triggers get 409 LOOP_DISABLED, next_run_at is cleared, the running run goes on; enable: triggers work again', async () => {
    const dir = dirFor('disable');
    const loop = await createLoop({
      name: 'Disable',
      slug: 'disable-me',
      prompt_template: GATED,
      prompt_variables: { dir, code: 0 },
      concurrency_policy: 'queue',
      cron_expression: '0 0 1 1 *',
    });
    expect(loop.next_run_at).not.toBeNull();
    const a = await trigger(loop.slug, { tag: 'a' });
    const pidA = await pidOf(dir, 'a');
    await waitRun(loop.slug, a.id, ['running']);
    const b = await trigger(loop.slug, { tag: 'b' });
    const c = await trigger(loop.slug, { tag: 'c' });
    expect([b.status, c.status]).toEqual(['queued', 'queued']);
    const podsBefore = await podTotal();

    const disabled = await api('POST', `${LOOPS}/${loop.slug}/disable`);
    expect(disabled.status, disabled.text).toBe(200);
    expect((disabled.body as { loop: Loop }).loop).toMatchObject({ status: 'disabled', next_run_at: null });
    for (const run of [b, c]) {
      const after = await getRun(loop.slug, run.id);
      expect(after.status).toBe('cancelled');
      expect(after.error_message).toMatch(/disabled/);
      expect(after.pod_key).toBeNull();
    }
    const blocked = await api('POST', `${LOOPS}/${loop.slug}/trigger`, { variables: { tag: 'z' } });
    expect(blocked.status).toBe(409);
    expect((blocked.body as ErrorBody).code).toBe('LOOP_DISABLED');
    expect((await api('POST', `${LOOPS}/${loop.slug}/disable`)).status).toBe(200); // idempotent

    expect((await getRun(loop.slug, a.id)).status).toBe('running');
    expect(processGone(pidA)).toBe(false);
    release(dir, 'a');
    expect(await waitRun(loop.slug, a.id, ['completed', 'failed', 'cancelled'])).toMatchObject({ status: 'completed' });
    await sleep(400);
    expect(started(dir, 'b') || started(dir, 'c')).toBe(false);
    expect(await podTotal()).toBe(podsBefore);
    expect(await getLoop(loop.slug)).toMatchObject({ active_run_count: 0, total_runs: 3 });

    const enabled = await api('POST', `${LOOPS}/${loop.slug}/enable`);
    expect(enabled.status).toBe(200);
    expect((enabled.body as { loop: Loop }).loop.status).toBe('enabled');
    expect((enabled.body as { loop: Loop }).loop.next_run_at).not.toBeNull();
    const d = await trigger(loop.slug, { tag: 'd' });
    expect(d.status).toBe('pending');
    await pidOf(dir, 'd');
    release(dir, 'd');
    expect(await waitRun(loop.slug, d.id, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
  });

  it('delete: the running run’s process is stopped, the queued runs never get a pod, the loop and its runs are gone', async () => {
    const dir = dirFor('delete');
    const loop = await createLoop({ name: 'Delete', slug: 'delete-me', prompt_template: GATED, prompt_variables: { dir, code: 0 }, concurrency_policy: 'queue' });
    const a = await trigger(loop.slug, { tag: 'a' });
    const pidA = await pidOf(dir, 'a');
    const running = await waitRun(loop.slug, a.id, ['running']);
    for (const tag of ['b', 'c']) expect((await trigger(loop.slug, { tag })).status).toBe('queued');
    const podsBefore = await podTotal();

    const deleted = await api('DELETE', `${LOOPS}/${loop.slug}`);
    expect(deleted.status, deleted.text).toBe(200);
    expect((await api('GET', `${LOOPS}/${loop.slug}`)).status).toBe(404);
    expect(await getPod(running.pod_key!)).toMatchObject({ status: 'terminated' });
    await gone(pidA, 'the deleted loop’s running agent to be gone');
    await sleep(400);
    expect(started(dir, 'b') || started(dir, 'c')).toBe(false);
    expect(await podTotal()).toBe(podsBefore); // no pod was launched (and terminated) for a queued run
    const left = await store.db.selectFrom('loop_runs').select('id').where('loop_id', '=', loop.id).execute();
    expect(left).toEqual([]);
  });

  describe('sandbox_strategy', () => {
    const SCRIPT = [
      'echo "workspace=$DROVER_WORKSPACE"',
      'if [ -e "$DROVER_WORKSPACE/marker" ]; then echo "marker=$(cat "$DROVER_WORKSPACE/marker")"; else echo marker=absent; fi',
      'echo "{{tag}}" > "$DROVER_WORKSPACE/marker"',
    ].join('\n');

    async function twoRuns(slug: string): Promise<string[]> {
      const outputs: string[] = [];
      for (const tag of ['first', 'second']) {
        const run = await trigger(slug, { tag });
        const done = await waitRun(slug, run.id, ['completed', 'failed']);
        expect(done.status).toBe('completed');
        outputs.push(await podOutput(done.pod_key!));
      }
      return outputs;
    }

    it('persistent: run 2 of the loop sees the file run 1 wrote in $DROVER_WORKSPACE (one workspace on the runner)', async () => {
      const loop = await createLoop({ name: 'Persistent', slug: 'sandbox-persistent', prompt_template: SCRIPT, sandbox_strategy: 'persistent', runner_id: sandboxed.runnerId });
      const [first, second] = await twoRuns(loop.slug);
      expect(first).toContain('marker=absent\n');
      expect(second).toContain('marker=first\n');
      const workspace = /workspace=(.*)\n/.exec(first)![1];
      expect(second).toContain(`workspace=${workspace}\n`);
      expect(workspace.startsWith(sandboxed.workDir)).toBe(true);
      expect(fs.readFileSync(path.join(workspace, 'marker'), 'utf8')).toBe('second\n');
    });

    it('fresh: run 2 starts in a new, empty workspace', async () => {
      const loop = await createLoop({ name: 'Fresh', slug: 'sandbox-fresh', prompt_template: SCRIPT, sandbox_strategy: 'fresh', runner_id: sandboxed.runnerId });
      const [first, second] = await twoRuns(loop.slug);
      expect(first).toContain('marker=absent\n');
      expect(second).toContain('marker=absent\n');
      expect(/workspace=(.*)\n/.exec(first)![1]).not.toBe(/workspace=(.*)\n/.exec(second)![1]);
    });
  });

  describe('agent sessions and modes (agent claude-code: the stand-in `claude`)', () => {
    /** The stand-in's records in the loop's persistent workspace, one per agent process, oldest first. */
    const records = (loopId: number): StandInRecord[] => {
      const file = path.join(sandboxed.workDir, 'persistent', `loop-${loopId}`, 'workspace', '.stand-in-record.jsonl');
      return fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => line.length > 0)
        .map((line) => JSON.parse(line) as StandInRecord);
    };

    async function runTwice(slug: string): Promise<void> {
      for (let i = 0; i < 2; i++) {
        const run = await trigger(slug);
        expect(await waitRun(slug, run.id, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
      }
    }

    it('session_persistence true: run 2 resumes the session run 1 printed (--resume <id>)', async () => {
      const loop = await createLoop({ name: 'Sessions', slug: 'session-on', agent_slug: 'claude-code', prompt_template: 'continue the work', sandbox_strategy: 'persistent', session_persistence: true, runner_id: sandboxed.runnerId });
      await runTwice(loop.slug);
      const [one, two] = records(loop.id);
      expect(one.name).toBe('claude');
      expect(one.argv).not.toContain('--resume');
      expect(one.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      const at = two.argv.indexOf('--resume');
      expect(at, JSON.stringify(two.argv)).toBeGreaterThanOrEqual(0);
      expect(two.argv[at + 1]).toBe(one.sessionId);
      expect(two.argv.slice(-2)).toEqual(['--', 'continue the work']);
    });

    it('session_persistence true, but the persistent workspace is gone: run 2 starts without --resume (the session is not there to resume)', async () => {
      const loop = await createLoop({ name: 'Lost sandbox', slug: 'session-lost', agent_slug: 'claude-code', prompt_template: 'go on', sandbox_strategy: 'persistent', session_persistence: true, runner_id: sandboxed.runnerId });
      const first = await trigger(loop.slug);
      expect(await waitRun(loop.slug, first.id, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
      const [one] = records(loop.id);
      // The sandbox is gone on the runner (cleaned up, or a new machine under the same runner).
      fs.rmSync(path.join(sandboxed.workDir, 'persistent', `loop-${loop.id}`), { recursive: true, force: true });
      const second = await trigger(loop.slug);
      expect(await waitRun(loop.slug, second.id, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
      const [two, ...more] = records(loop.id);
      expect(more).toEqual([]);
      expect(two.argv).not.toContain('--resume');
      expect(two.sessionId).not.toBe(one.sessionId);
    });

    it('session_persistence false: run 2 starts a new session', async () => {
      const loop = await createLoop({ name: 'No sessions', slug: 'session-off', agent_slug: 'claude-code', prompt_template: 'start over', sandbox_strategy: 'persistent', session_persistence: false, runner_id: sandboxed.runnerId });
      await runTwice(loop.slug);
      const [one, two] = records(loop.id);
      expect(one.argv).not.toContain('--resume');
      expect(two.argv).not.toContain('--resume');
      expect(two.sessionId).not.toBe(one.sessionId);
    });

    it('execution_mode autopilot: the agent reports done in iteration 2 (STAND_IN_DONE_AT=2) → the run completes after two agent runs', async () => {
      const loop = await createLoop({
        name: 'Autopilot',
        slug: 'autopilot',
        agent_slug: 'claude-code',
        execution_mode: 'autopilot',
        prompt_template: 'iterate until done STAND_IN_DONE_AT=2',
        sandbox_strategy: 'persistent',
        runner_id: sandboxed.runnerId,
        autopilot_config: { max_iterations: 5, iteration_timeout_sec: 60 },
      });
      const run = await trigger(loop.slug);
      const done = await waitRun(loop.slug, run.id, ['completed', 'failed'], 20_000);
      expect(done).toMatchObject({ status: 'completed', error_message: null });
      expect(await getPod(done.pod_key!)).toMatchObject({ status: 'completed', error_message: null });
      const [one, two] = records(loop.id);
      expect([one.env.DROVER_ITERATION, two.env.DROVER_ITERATION]).toEqual(['1', '2']);
      // Iteration 1: the task, then how to report; iteration 2 continues the agent's own session
      // (the id iteration 1 printed) with a short continuation prompt instead of the task again.
      expect(one.argv).not.toContain('--resume');
      expect(one.argv.at(-1)).toMatch(/^iterate until done STAND_IN_DONE_AT=2\n\n---\nDrover runs this task unattended, in autopilot: this is iteration 1 of at most 5/);
      expect(one.argv.at(-1)).toContain('DROVER_STATUS_FILE');
      expect(two.argv[two.argv.indexOf('--resume') + 1]).toBe(one.sessionId);
      expect(two.argv.at(-1)).toMatch(/^Continue the task \(Drover autopilot, iteration 2 of at most 5\)\. Your last report was "continue"/);
      expect(two.argv.at(-1)).not.toContain('iterate until done');
    });
  });

  describe('cron through the real server (DROVER_CRON_TICK_MS=200)', () => {
    /** Waits until the wall clock is at least `margin` ms before the next minute, and returns the current minute's slot. */
    async function currentSlotWithMargin(margin = 8_000): Promise<number> {
      const into = Date.now() % 60_000;
      if (into > 60_000 - margin) await sleep(60_000 - into + 100);
      return Math.floor(Date.now() / 60_000) * 60_000;
    }

    it('a due slot fires exactly once: trigger_type cron, scheduled_at = the slot, next_run_at moves to the future', async () => {
      const loop = await createLoop({ name: 'Cron', slug: 'cron-every-minute', prompt_template: 'echo "cron {{what}}"', prompt_variables: { what: 'fired' }, cron_expression: '* * * * *' });
      expect(ms(loop.next_run_at)).toBeGreaterThan(Date.now());
      const slot = await currentSlotWithMargin();
      const set = Date.now();
      await setNextRunAt(loop.id, slot);
      const run = await waitFor(async () => (await listRuns(loop.slug)).runs[0], { timeout: 5_000, interval: 50, what: 'the cron run' });
      timings.push(`cron: next_run_at set in the past → run recorded ${ms(run.created_at) - set} ms`);
      expect(run).toMatchObject({ trigger_type: 'cron', scheduled_at: new Date(slot).toISOString(), run_number: 1 });
      const done = await waitRun(loop.slug, run.id, ['completed', 'failed']);
      expect(done.status).toBe('completed');
      expect(await podOutput(done.pod_key!)).toBe('cron fired\n');
      await sleep(600); // three more ticks
      const after = await getLoop(loop.slug);
      expect(ms(after.next_run_at)).toBe(slot + 60_000);
      expect(ms(after.next_run_at)).toBeGreaterThan(Date.now());
      const all = await listRuns(loop.slug);
      expect(all.total).toBe(1);
      expect((await api('DELETE', `${LOOPS}/${loop.slug}`)).status).toBe(200);
    });

    it('a cron firing with a template value missing records a failed run saying which, and starts no pod', async () => {
      const loop = await createLoop({ name: 'Cron missing', slug: 'cron-missing', prompt_template: 'echo "hello {{ who }} and {{what}}"', prompt_variables: { what: 'x' }, cron_expression: '* * * * *' });
      const podsBefore = await podTotal();
      const slot = await currentSlotWithMargin();
      await setNextRunAt(loop.id, slot);
      const run = await waitFor(async () => (await listRuns(loop.slug)).runs[0], { timeout: 5_000, interval: 50, what: 'the cron run' });
      expect(run).toMatchObject({ status: 'failed', trigger_type: 'cron', scheduled_at: new Date(slot).toISOString(), pod_key: null, resolved_prompt: null });
      expect(run.error_message).toMatch(/missing/);
      expect(run.error_message).toMatch(/\bwho\b/);
      expect(run.error_message).not.toMatch(/\bwhat\b/);
      expect(run.finished_at).not.toBeNull();
      await sleep(400);
      expect(await podTotal()).toBe(podsBefore);
      expect(await getLoop(loop.slug)).toMatchObject({ total_runs: 1, failed_runs: 1, active_run_count: 0 });
      expect(ms((await getLoop(loop.slug)).next_run_at)).toBeGreaterThan(Date.now());
      expect((await api('DELETE', `${LOOPS}/${loop.slug}`)).status).toBe(200);
    });
  });
});

describe.skipIf(!process.env.DATABASE_URL)('loops under database faults (postgres)', () => {
  // A pg client checked out of the pool (a query or a transaction in progress) emits 'error' on
  // itself when its connection drops, and an unhandled 'error' event would end the process: the
  // store gives every client a listener (src/store/db.ts).
  it('a database connection dropped while loop triggers run does not crash drover serve', async () => {
    const database = await createProcessTestDatabase('postgres');
    const dbName = new URL(database.env.DATABASE_URL).pathname.slice(1);
    const admin = new (await import('pg')).default.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    let stop = false;
    try {
      const server = await startServerProcess({ dataDir: database.dataDir, env: { ...database.env, DROVER_LOG_LEVEL: 'fatal' } });
      const key = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
      const created = await http(server.url, 'POST', LOOPS, { key, body: { name: 'Faults', slug: 'faults', agent_slug: 'shell', execution_mode: 'direct', prompt_template: 'true', concurrency_policy: 'queue' } });
      expect(created.status, created.text).toBe(201);
      let exitCode: number | null | undefined;
      void server.exited.then((code) => (exitCode = code));
      const load = async () => {
        while (!stop && exitCode === undefined) await http(server.url, 'POST', `${LOOPS}/faults/trigger`, { key }).catch(() => undefined);
      };
      const clients = Array.from({ length: 8 }, load);
      for (let i = 0; i < 40 && exitCode === undefined; i++) {
        await sleep(100);
        await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [dbName]);
      }
      await sleep(500);
      stop = true;
      await Promise.all(clients);
      expect(exitCode, `drover serve exited:\n${server.stderr.slice(-600)}`).toBeUndefined();
      await waitFor(async () => (await http(server.url, 'GET', '/readyz')).status === 200, { what: 'the server to be ready again' });
      await server.stop();
    } finally {
      stop = true;
      await admin.end();
      await database.cleanup();
    }
  });
});
