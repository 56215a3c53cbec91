/**
 * Autopilot (`MODE autopilot`, docs/agents.md "Autopilot") and runner draining (docs/runners.md) with real processes:
 * a `drover serve` and `drover runner` per database, `shell` pods whose scripts write
 * `$DROVER_STATUS_FILE` as an agent would.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { createProcessTestDatabase, http, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { runnerPath, startRunnerProcess, tempDir, waitFor, type RunnerProcess } from '../helpers/runner-process.ts';

const ORG = '/api/v1/ext/orgs/default';
const ADMIN_TOKEN = 'drvadm_e2e_modes_admin_token_0123456789abcdef';

interface PodDetail {
  key: string;
  status: string;
  mode: string;
  exit_code: number | null;
  error_message: string | null;
}

describe.each(DATABASES)('autopilot and draining end to end (%s)', (kind) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let apiKey: string;
  let runner: RunnerProcess;
  let scratch: string;

  const api = (method: string, urlPath: string, body?: unknown) => http(server.url, method, urlPath, { key: apiKey, body });
  const token = async () => {
    const response = await http(server.url, 'POST', '/api/v1/admin/orgs/default/runner-tokens', { bearer: ADMIN_TOKEN, body: {} });
    return (response.body as { token: string }).token;
  };
  const createPod = async (agentfile: string, runnerId?: number) => {
    const response = await api('POST', `${ORG}/pods`, { agent_slug: 'shell', agentfile_layer: agentfile, ...(runnerId ? { runner_id: runnerId } : {}) });
    expect(response.status, response.text).toBe(201);
    return (response.body as { pod: { pod_key: string } }).pod.pod_key;
  };
  const getPod = async (key: string) => ((await api('GET', `${ORG}/pods/${key}`)).body as { pod: PodDetail }).pod;
  const waitEnded = (key: string, timeout = 20_000) =>
    waitFor(
      async () => {
        const pod = await getPod(key);
        return ['completed', 'failed', 'terminated'].includes(pod.status) ? pod : undefined;
      },
      { timeout, what: `pod ${key} to end` },
    );
  const output = async (key: string) => ((await api('GET', `${ORG}/pods/${key}/output`)).body as { output: string }).output;
  const autopilot = (script: string, ...config: string[]) => ['MODE autopilot', ...config, 'PROMPT <<END', script, 'END'].join('\n');

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    scratch = tempDir('modes');
    server = await startServerProcess({
      dataDir: database.dataDir,
      env: { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_SWEEP_INTERVAL_MS: '200', DROVER_LOG_LEVEL: 'warn' },
    });
    apiKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    runner = await startRunnerProcess({
      server: server.url,
      token: await token(),
      workDir: path.join(scratch, 'runner'),
      name: 'main',
      maxPods: 4,
      env: { PATH: runnerPath(), HOME: scratch, LANG: 'C.UTF-8' },
    });
    await waitFor(async () => ((await api('GET', `${ORG}/runners/${runner.runnerId}`)).body as { runner: { status: string } }).runner.status === 'online', {
      what: 'the runner to be online',
    });
  });
  afterAll(async () => {
    await runner?.stop();
    await server?.stop();
    await database?.cleanup();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('iterates in one workspace until the agent reports done', async () => {
    const key = await createPod(
      autopilot(
        [
          'echo "iteration $DROVER_ITERATION"',
          'echo "$DROVER_ITERATION" >> "$DROVER_WORKSPACE/iterations"',
          'if [ "$DROVER_ITERATION" = 3 ]; then echo \'{"status":"done","summary":"all green"}\' > "$DROVER_STATUS_FILE";',
          'else echo \'{"status":"continue"}\' > "$DROVER_STATUS_FILE"; fi',
          'wc -l < "$DROVER_WORKSPACE/iterations"',
        ].join('\n'),
        'CONFIG max_iterations = 5',
      ),
    );
    const pod = await waitEnded(key);
    expect(pod).toMatchObject({ status: 'completed', mode: 'autopilot' });
    const text = await output(key);
    expect(text).toContain('iteration 1');
    expect(text).toContain('iteration 3');
    expect(text).not.toContain('iteration 4');
    // The workspace is shared by the iterations: the third one saw the two lines before it.
    expect(text.trim().split('\n').at(-1)?.trim()).toBe('3');
  });

  it('fails with the summary when the agent reports failed', async () => {
    const key = await createPod(autopilot('echo \'{"status":"failed","summary":"tests are red"}\' > "$DROVER_STATUS_FILE"'));
    const pod = await waitEnded(key);
    expect(pod.status).toBe('failed');
    expect(pod.error_message).toBe('tests are red');
  });

  it('completes after max_iterations without "done", saying so', async () => {
    const key = await createPod(autopilot('echo "pass $DROVER_ITERATION"; echo \'{"status":"continue"}\' > "$DROVER_STATUS_FILE"', 'CONFIG max_iterations = 2'));
    const pod = await waitEnded(key);
    expect(pod.status).toBe('completed');
    expect(pod.error_message).toContain('max_iterations (2)');
    expect(await output(key)).not.toContain('pass 3');
  });

  it('fails when an iteration exceeds iteration_timeout_sec', async () => {
    const key = await createPod(autopilot('sleep 30', 'CONFIG iteration_timeout_sec = 1'));
    const pod = await waitEnded(key, 25_000);
    expect(pod.status).toBe('failed');
    expect(pod.error_message).toContain('iteration_timeout_sec');
  });

  it('drains on SIGTERM: no new pods, running ones get the grace period, then are stopped and reported', async () => {
    const draining = await startRunnerProcess({
      server: server.url,
      token: await token(),
      workDir: path.join(scratch, 'draining'),
      name: 'draining',
      maxPods: 2,
      drainSeconds: 3,
      env: { PATH: runnerPath(), HOME: scratch, LANG: 'C.UTF-8' },
    });
    const runnerUrl = `${ORG}/runners/${draining.runnerId}`;
    await waitFor(async () => ((await api('GET', runnerUrl)).body as { runner: { status: string } }).runner.status === 'online', { what: 'online' });
    const key = await createPod('PROMPT "sleep 60"', draining.runnerId);
    await waitFor(async () => (await getPod(key)).status === 'running' || undefined, { what: 'running' });
    const exited = draining.stop('SIGTERM', 30_000);
    await waitFor(async () => ((await api('GET', runnerUrl)).body as { runner: { status: string } }).runner.status === 'draining' || undefined, {
      what: 'the runner to be draining',
    });
    const refused = await api('POST', `${ORG}/pods`, { agent_slug: 'shell', runner_id: draining.runnerId });
    expect(refused.status).toBe(409);
    expect((refused.body as { code: string }).code).toBe('RUNNER_UNAVAILABLE');
    expect(await exited).toBe(0);
    const pod = await waitEnded(key);
    expect(pod.status).toBe('terminated');
  });
});

describe('the runner enforces pod_timeout_minutes by itself', () => {
  it('terminates the pod as "timeout" after one minute, with the server sweeper out of the picture', async () => {
    const database = await createProcessTestDatabase('sqlite');
    const scratch = tempDir('timeout');
    // A sweeper interval of ten minutes: only the runner's own timer can end this pod in time.
    const server = await startServerProcess({
      dataDir: database.dataDir,
      env: { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_SWEEP_INTERVAL_MS: '600000', DROVER_LOG_LEVEL: 'warn' },
    });
    try {
      const apiKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
      const registration = await http(server.url, 'POST', '/api/v1/admin/orgs/default/runner-tokens', { bearer: ADMIN_TOKEN, body: {} });
      const runner = await startRunnerProcess({
        server: server.url,
        token: (registration.body as { token: string }).token,
        workDir: path.join(scratch, 'runner'),
        env: { PATH: runnerPath(), HOME: scratch, LANG: 'C.UTF-8' },
      });
      const api = (method: string, urlPath: string, body?: unknown) => http(server.url, method, urlPath, { key: apiKey, body });
      await waitFor(async () => ((await api('GET', `${ORG}/runners/${runner.runnerId}`)).body as { runner: { status: string } }).runner.status === 'online', { what: 'online' });
      const created = await api('POST', `${ORG}/pods`, { agent_slug: 'shell', agentfile_layer: 'CONFIG pod_timeout_minutes = 1\nPROMPT "sleep 300"' });
      expect(created.status, created.text).toBe(201);
      const key = (created.body as { pod: { pod_key: string } }).pod.pod_key;
      const started = Date.now();
      const pod = await waitFor(
        async () => {
          const detail = ((await api('GET', `${ORG}/pods/${key}`)).body as { pod: PodDetail }).pod;
          return detail.status === 'terminated' ? detail : undefined;
        },
        { timeout: 90_000, what: 'the pod to time out' },
      );
      expect(pod.error_message).toBe('timeout');
      expect(Date.now() - started).toBeGreaterThan(55_000);
      await runner.stop();
    } finally {
      await server.stop();
      await database.cleanup();
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  }, 120_000);
});
