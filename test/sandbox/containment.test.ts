/**
 * Nothing a pod starts outlives it (docs/runners.md "Processes"), with REAL processes: a
 * `drover serve` and external `drover runner`s with the default sandbox (bwrap), on every database.
 *
 * Each pod starts children the way agent CLIs' shell tools do: `setsid sleep &` (a session of its
 * own, out of reach of a process-group kill) and `nohup sleep &` (deaf to SIGHUP). After the pod
 * ends, however it ends, no process carrying the pod's `DROVER_POD_KEY` may exist on the machine
 * (found by scanning /proc) within 5 s.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { podClient } from '../helpers/pod-client.ts';
import { podProcesses, runnerPath, startRunnerProcess, tempDir, waitFor, type RunnerProcess } from '../helpers/runner-process.ts';
import { createProcessTestDatabase, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

const ADMIN_TOKEN = 'drvadm_sandbox_containment_admin_token_0123456789';
/** The children an agent leaves behind, then a marker; the agent itself goes on with `rest`. */
const ESCAPERS = 'setsid sleep 600 &\nnohup sleep 601 >/dev/null 2>&1 &\n(trap "" HUP TERM; sleep 602) &\necho children-started';
const GONE_WITHIN_MS = 5_000;

describe.each(DATABASES)('process containment in the sandbox (%s)', (kind) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let runner: RunnerProcess;
  let scratch: string;
  let apiKey: string;
  const c = podClient(
    () => server.url,
    () => apiKey,
    ADMIN_TOKEN,
  );

  async function startRunner(name: string): Promise<RunnerProcess> {
    const started = await startRunnerProcess({
      server: server.url,
      token: await c.registrationToken(),
      workDir: path.join(scratch, name),
      name,
      env: { PATH: runnerPath(), HOME: scratch, LANG: 'C.UTF-8', DROVER_RUNNER_HEARTBEAT_MS: '500' },
    });
    await waitFor(async () => (await c.runnerStatus(started.runnerId)) === 'online', { what: `runner ${name} online` });
    return started;
  }

  /** A pod whose agent starts the escapers, and has them all running. */
  async function podWithEscapers(rest: string, runnerId = runner.runnerId, ...directives: string[]): Promise<string> {
    const key = await c.createPod(`${ESCAPERS}\n${rest}`, runnerId, ...directives);
    await waitFor(async () => (await c.output(key)).includes('children-started'), { what: 'the children started' });
    // The agent's shell and the three sleeps (and the subshell): bwrap and its init run with the
    // runner's own environment (docs/runners.md "The walls"), so they do not carry the pod's key.
    await waitFor(() => podProcesses(key).length >= 4, { what: 'every process of the pod to be there' });
    return key;
  }

  const allGone = (key: string) => waitFor(() => podProcesses(key).length === 0, { timeout: GONE_WITHIN_MS, what: `no process of pod ${key} left` });

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    scratch = tempDir('containment');
    server = await startServerProcess({
      dataDir: database.dataDir,
      env: { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_SWEEP_INTERVAL_MS: '200', DROVER_LOG_LEVEL: 'warn' },
    });
    apiKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    runner = await startRunner('runner');
  });

  afterAll(async () => {
    await runner?.stop();
    await server?.stop();
    await database?.cleanup();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('after terminate', async () => {
    const key = await podWithEscapers('sleep 300');
    expect((await c.api('POST', `/api/v1/ext/orgs/default/pods/${key}/terminate`)).status).toBe(200);
    await allGone(key);
    expect((await c.getPod(key)).status).toBe('terminated');
  });

  it('after a pod timeout', async () => {
    const key = await podWithEscapers('sleep 300', runner.runnerId, 'CONFIG pod_timeout_minutes = 1');
    await c.waitStatus(key, ['running']);
    // pod_timeout_minutes has a 1-minute minimum: the stored deadline moves into the past instead.
    const store = database.open();
    try {
      await store.db.updateTable('pods').set({ deadline_at: Date.now() - 1_000 }).where('key', '=', key).execute();
    } finally {
      await store.close();
    }
    expect(await c.waitStatus(key, ['terminated', 'failed', 'completed'])).toMatchObject({ status: 'terminated', error_message: 'timeout' });
    await allGone(key);
  });

  it('after completion with auto_close (the agent exits, its children do not)', async () => {
    const key = await podWithEscapers('while [ ! -e finish ]; do sleep 0.1; done\necho agent-done');
    fs.writeFileSync(path.join(runner.workDir, 'pods', key, 'workspace', 'finish'), '');
    expect(await c.waitStatus(key, ['completed', 'failed'])).toMatchObject({ status: 'completed', exit_code: 0 });
    await allGone(key);
    expect(await c.output(key)).toContain('agent-done');
  });

  it('after kill -9 of the runner, at once (not when it comes back)', async () => {
    const victim = await startRunner('victim');
    const keys = [await podWithEscapers('sleep 300', victim.runnerId), await podWithEscapers('sleep 300', victim.runnerId)];
    await victim.kill9();
    for (const key of keys) await allGone(key);
  });
});
