/**
 * Pods wait for a runner (docs/decisions.md "Runners and pods") with REAL processes: `drover serve`
 * and `drover runner` children on each database, `shell` pods.
 *
 * The main server sweeps only every ten minutes (DROVER_SWEEP_INTERVAL_MS), so every queued pod
 * that starts here was started by a wake-up (a pod on the runner ended, the runner connected), not
 * by the sweeper's backstop. Pods that must hold a slot wait for a file `go` that the test creates
 * in their workspace (bound into their sandbox), so the order in which slots free is the test's.
 *
 * With DATABASE_URL, two `drover serve` replicas on one PostgreSQL database, each holding one
 * runner's link and sweeping every 100 ms (so their promotions race), place 40 pods submitted to
 * both at once: each starts exactly once, no runner ever runs more than its max_pods, all complete.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { ORG, podClient, shellLayer, type PodDetail } from '../helpers/pod-client.ts';
import { createProcessTestDatabase, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { runnerPath, startRunnerProcess, tempDir, waitFor, type RunnerProcess } from '../helpers/runner-process.ts';

const ADMIN_TOKEN = 'drvadm_e2e_queue_admin_token_0123456789abcdef';
const SECRET_KEY = Buffer.alloc(32, 7).toString('base64');
/** A script that holds its slot until the test creates `go` in its workspace. */
const GATED = 'while [ ! -e "$DROVER_WORKSPACE/go" ]; do sleep 0.05; done; echo released';

interface ErrorBody {
  code: string;
  error: string;
}

const ms = (iso: string | null) => (iso === null ? Number.NaN : Date.parse(iso));

describe.each(DATABASES)('the pod queue end to end (%s)', (kind) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let apiKey: string;
  let runner: RunnerProcess;
  let scratch: string;
  const c = podClient(
    () => server.url,
    () => apiKey,
    ADMIN_TOKEN,
  );
  const runnerEnv = () => ({ PATH: runnerPath(), HOME: scratch, LANG: 'C.UTF-8' });

  /** Lets a gated pod finish: `go` in its workspace on the runner machine. */
  async function release(key: string, of: RunnerProcess = runner): Promise<void> {
    const workspace = path.join(of.workDir, 'pods', key, 'workspace');
    await waitFor(() => fs.existsSync(workspace), { what: `the workspace of ${key}` });
    fs.writeFileSync(path.join(workspace, 'go'), '');
  }

  async function create(script: string, extra: Record<string, unknown> = {}): Promise<{ pod_key: string; status: string }> {
    const response = await c.api('POST', `${ORG}/pods`, { agent_slug: 'shell', agentfile_layer: shellLayer(script), ...extra });
    expect(response.status, response.text).toBe(201);
    return (response.body as { pod: { pod_key: string; status: string } }).pod;
  }

  const runnerOnline = (r: RunnerProcess) => waitFor(async () => (await c.runnerStatus(r.runnerId)) === 'online', { what: 'the runner to be online' });

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    scratch = tempDir('queue');
    server = await startServerProcess({
      dataDir: database.dataDir,
      env: { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_SWEEP_INTERVAL_MS: '600000', DROVER_LOG_LEVEL: 'warn' },
    });
    apiKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    runner = await startRunnerProcess({ server: server.url, token: await c.registrationToken(), workDir: path.join(scratch, 'runner'), name: 'two-slots', maxPods: 2, env: runnerEnv() });
    await runnerOnline(runner);
  });
  afterAll(async () => {
    await runner?.stop();
    await server?.stop();
    await database?.cleanup();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('one runner of max_pods 2: six pods are accepted (four queued, positions 1–4), start in submission order and all complete', async () => {
    const a = await create(GATED);
    expect(a.status).toBe('initializing');
    await c.waitStatus(a.pod_key, ['running']);
    const b = await create(GATED);
    await c.waitStatus(b.pod_key, ['running']);
    const queued = [];
    for (let i = 0; i < 4; i++) queued.push(await create(`echo queued-${i}`));
    expect(queued.map((p) => p.status)).toEqual(['queued', 'queued', 'queued', 'queued']);
    const details = await Promise.all(queued.map((p) => c.getPod(p.pod_key)));
    expect(details.map((p) => [p.status, p.queue_position, p.runner_id])).toEqual([
      ['queued', 1, null],
      ['queued', 2, null],
      ['queued', 3, null],
      ['queued', 4, null],
    ]);
    const listed = (await c.api('GET', `${ORG}/pods?status=queued`)).body as { pods: { key: string; queue_position: number }[] };
    expect(listed.pods.map((p) => [p.key, p.queue_position])).toEqual(queued.map((p, i) => [p.pod_key, i + 1]).reverse());
    expect(((await c.api('GET', `${ORG}/runners/${runner.runnerId}`)).body as { runner: { pod_count: number } }).runner.pod_count).toBe(2);

    // One slot frees (b): the queue goes through it one pod after another, oldest first, while a holds the other.
    await release(b.pod_key);
    const ended: PodDetail[] = [];
    for (const pod of queued) ended.push(await c.waitStatus(pod.pod_key, ['completed', 'failed', 'terminated'], 30_000));
    expect(ended.map((p) => p.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
    expect((await c.getPod(a.pod_key)).status).toBe('running');
    await release(a.pod_key);
    const all = [await c.waitStatus(a.pod_key, ['completed']), await c.waitStatus(b.pod_key, ['completed']), ...ended];
    expect(all.every((p) => p.runner_id === runner.runnerId && p.queue_position === null)).toBe(true);
    const starts = all.map((p) => ms(p.started_at));
    expect(starts.every(Number.isFinite)).toBe(true);
    expect([...starts].sort((x, y) => x - y)).toEqual(starts);
    // Each queued pod started after the one before it had ended: one slot, first in first out.
    for (let i = 1; i < ended.length; i++) expect(ms(ended[i].started_at)).toBeGreaterThanOrEqual(ms(ended[i - 1].finished_at));
    expect(await c.output(queued[3].pod_key)).toContain('queued-3');
  });

  it('terminate of a queued pod: 200, terminated, never started; the queue closes up; again → 409 POD_NOT_ACTIVE', async () => {
    const holders = [await create(GATED), await create(GATED)];
    for (const h of holders) await c.waitStatus(h.pod_key, ['running']);
    const first = await create('echo never');
    const second = await create('echo second');
    expect((await c.getPod(second.pod_key)).queue_position).toBe(2);

    const response = await c.api('POST', `${ORG}/pods/${first.pod_key}/terminate`);
    expect(response.status, response.text).toBe(200);
    const terminated = await c.getPod(first.pod_key);
    expect(terminated).toMatchObject({ status: 'terminated', runner_id: null, queue_position: null, started_at: null });
    expect(terminated.error_message).toBe('terminated through the API');
    expect((await c.getPod(second.pod_key)).queue_position).toBe(1);
    const again = await c.api('POST', `${ORG}/pods/${first.pod_key}/terminate`);
    expect(again.status).toBe(409);
    expect((again.body as ErrorBody).code).toBe('POD_NOT_ACTIVE');

    for (const h of holders) await release(h.pod_key);
    expect((await c.waitStatus(second.pod_key, ['completed', 'failed'], 30_000)).status).toBe('completed');
    expect((await c.getPod(first.pod_key)).status).toBe('terminated');
    expect(fs.existsSync(path.join(runner.workDir, 'pods', first.pod_key))).toBe(false);
    expect(await c.output(first.pod_key)).toBe('');
  });

  it('503 NO_AVAILABLE_RUNNER only for an agent no runner has; a named runner lacking the agent is 409; a named full runner queues', async () => {
    const holders = [await create(GATED), await create(GATED)];
    for (const h of holders) await c.waitStatus(h.pod_key, ['running']);
    const before = ((await c.api('GET', `${ORG}/pods`)).body as { total: number }).total;
    // The runner's PATH holds no agent CLI: only shell is advertised.
    const none = await c.api('POST', `${ORG}/pods`, { agent_slug: 'codex', agentfile_layer: 'PROMPT "x"' });
    expect(none.status, none.text).toBe(503);
    expect((none.body as ErrorBody)).toMatchObject({ code: 'NO_AVAILABLE_RUNNER', error: expect.stringContaining('"codex"') });
    const named = await c.api('POST', `${ORG}/pods`, { agent_slug: 'codex', agentfile_layer: 'PROMPT "x"', runner_id: runner.runnerId });
    expect(named.status).toBe(409);
    expect((named.body as ErrorBody).code).toBe('RUNNER_UNAVAILABLE');
    expect(((await c.api('GET', `${ORG}/pods`)).body as { total: number }).total).toBe(before);

    const pinned = await create('echo pinned', { runner_id: runner.runnerId });
    expect(pinned.status).toBe('queued');
    for (const h of holders) await release(h.pod_key);
    expect(await c.waitStatus(pinned.pod_key, ['completed'], 30_000)).toMatchObject({ runner_id: runner.runnerId });
  });

  it('a runner that connects takes the queued pods at once (its hello wakes the queue)', async () => {
    const workDir = path.join(scratch, 'second');
    const second = await startRunnerProcess({ server: server.url, token: await c.registrationToken(), workDir, name: 'comes-back', maxPods: 1, env: runnerEnv() });
    await runnerOnline(second);
    await second.stop();
    await waitFor(async () => (await c.runnerStatus(second.runnerId)) === 'offline', { what: 'the runner to be offline' });
    const holders = [await create(GATED), await create(GATED)];
    for (const h of holders) await c.waitStatus(h.pod_key, ['running']);
    const queued = await create('echo waited-for-a-runner');
    expect(queued.status).toBe('queued');

    const back = await startRunnerProcess({ server: server.url, workDir, maxPods: 1, env: runnerEnv() });
    expect(back.runnerId).toBe(second.runnerId);
    const done = await c.waitStatus(queued.pod_key, ['completed', 'failed'], 30_000);
    expect(done).toMatchObject({ status: 'completed', runner_id: second.runnerId });
    for (const h of holders) await release(h.pod_key);
    for (const h of holders) await c.waitStatus(h.pod_key, ['completed']);
    await back.stop();
  });
});

describe.each(DATABASES)('the queue timeout end to end (%s)', (kind) => {
  it('a queued pod fails after DROVER_POD_QUEUE_TIMEOUT_MINUTES, saying so; the pod on the runner is untouched', async () => {
    const database = await createProcessTestDatabase(kind);
    const scratch = tempDir('queue-timeout');
    try {
      // 0.03 minutes: 1.8 s.
      const server = await startServerProcess({
        dataDir: database.dataDir,
        env: { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_SWEEP_INTERVAL_MS: '200', DROVER_POD_QUEUE_TIMEOUT_MINUTES: '0.03', DROVER_LOG_LEVEL: 'warn' },
      });
      const key = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
      const c = podClient(() => server.url, () => key, ADMIN_TOKEN);
      const runner = await startRunnerProcess({ server: server.url, token: await c.registrationToken(), workDir: path.join(scratch, 'runner'), maxPods: 1, env: { PATH: runnerPath(), HOME: scratch, LANG: 'C.UTF-8' } });
      await waitFor(async () => (await c.runnerStatus(runner.runnerId)) === 'online', { what: 'online' });
      const holder = await c.createPod(GATED);
      await c.waitStatus(holder, ['running']);
      const submitted = Date.now();
      const waiting = await c.createPod('echo too-late');
      expect((await c.getPod(waiting)).status).toBe('queued');
      const failed = await c.waitStatus(waiting, ['failed', 'completed', 'terminated'], 30_000);
      expect(failed.status).toBe('failed');
      expect(failed.error_message).toMatch(/^no runner slot freed up within the queue timeout \(DROVER_POD_QUEUE_TIMEOUT_MINUTES = 0\.03\)/);
      expect(failed).toMatchObject({ runner_id: null, started_at: null, queue_position: null });
      expect(ms(failed.finished_at) - submitted).toBeGreaterThanOrEqual(1_800 - 50);
      expect((await c.getPod(holder)).status).toBe('running');
      fs.writeFileSync(path.join(runner.workDir, 'pods', holder, 'workspace', 'go'), '');
      expect((await c.waitStatus(holder, ['completed'])).status).toBe('completed');
      await runner.stop();
      await server.stop();
    } finally {
      await database.cleanup();
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  }, 90_000);
});

const describePg = process.env.DATABASE_URL ? describe : describe.skip;

describePg('queued pods are placed exactly once by two replicas (PostgreSQL: two drover serve processes)', () => {
  it('40 pods submitted to both replicas at once: each starts exactly once, no runner over max_pods, all complete', async () => {
    const database = await createProcessTestDatabase('postgres');
    const scratch = tempDir('queue-replicas');
    try {
      const env = { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_SECRET_KEY: SECRET_KEY, DROVER_SWEEP_INTERVAL_MS: '100', DROVER_LOG_LEVEL: 'warn' };
      const a = await startServerProcess({ dataDir: database.dataDir, env });
      const b = await startServerProcess({ dataDir: path.join(scratch, 'replica-b'), env });
      const key = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
      const viaA = podClient(() => a.url, () => key, ADMIN_TOKEN);
      const viaB = podClient(() => b.url, () => key, ADMIN_TOKEN);
      // Unsandboxed, so every pod can append to one log on this machine.
      const runnerEnv = { PATH: runnerPath(), HOME: scratch, LANG: 'C.UTF-8' };
      const runners = [
        await startRunnerProcess({ server: a.url, token: await viaA.registrationToken(), workDir: path.join(scratch, 'r1'), name: 'r1', maxPods: 2, sandbox: 'none', env: runnerEnv }),
        await startRunnerProcess({ server: b.url, token: await viaB.registrationToken(), workDir: path.join(scratch, 'r2'), name: 'r2', maxPods: 2, sandbox: 'none', env: runnerEnv }),
      ];
      for (const r of runners) await waitFor(async () => (await viaA.runnerStatus(r.runnerId)) === 'online', { what: 'online' });

      const log = path.join(scratch, 'starts.log');
      const script = `echo "$DROVER_POD_KEY start $(date +%s%N)" >> ${log}; sleep 0.2; echo "$DROVER_POD_KEY end $(date +%s%N)" >> ${log}`;
      const created = await Promise.all(
        Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? viaA : viaB).api('POST', `${ORG}/pods`, { agent_slug: 'shell', agentfile_layer: shellLayer(script) })),
      );
      expect(created.map((r) => r.status)).toEqual(Array(40).fill(201));
      const keys = created.map((r) => (r.body as { pod: { pod_key: string } }).pod.pod_key);
      expect(created.filter((r) => (r.body as { pod: { status: string } }).pod.status === 'queued').length).toBeGreaterThanOrEqual(36);

      const ended = [];
      for (const k of keys) ended.push(await viaA.waitStatus(k, ['completed', 'failed', 'terminated'], 120_000));
      expect(ended.map((p) => p.status)).toEqual(Array(40).fill('completed'));

      const lines = fs.readFileSync(log, 'utf8').trim().split('\n').map((line) => line.split(' '));
      for (const k of keys) {
        expect(lines.filter(([pod, what]) => pod === k && what === 'start'), k).toHaveLength(1);
        expect(lines.filter(([pod, what]) => pod === k && what === 'end'), k).toHaveLength(1);
      }
      const runnerOf = new Map(ended.map((p) => [p.key, p.runner_id]));
      expect(new Set(runnerOf.values())).toEqual(new Set(runners.map((r) => r.runnerId)));
      for (const r of runners) {
        let running = 0;
        let most = 0;
        const events = lines.filter(([pod]) => runnerOf.get(pod) === r.runnerId).sort((x, y) => Number(BigInt(x[2]) - BigInt(y[2])) || (x[1] === 'end' ? -1 : 1));
        for (const [, what] of events) {
          running += what === 'start' ? 1 : -1;
          most = Math.max(most, running);
        }
        expect(most, `runner ${r.runnerId}`).toBeLessThanOrEqual(2);
      }
      for (const r of runners) await r.stop();
      await a.stop();
      await b.stop();
    } finally {
      await database.cleanup();
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  }, 240_000);
});
