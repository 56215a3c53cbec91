/**
 * Runner lifecycle (issue 15; docs/decisions.md "Operations") with REAL processes: `drover serve` and `drover runner`.
 *
 * - DELETE /admin/orgs/{org}/runners/{id}: the runner's link is closed at once, the runner logs
 *   why and exits (78) instead of reconnecting, a restart of it is refused (401 on the upgrade),
 *   and its active pods fail saying so.
 * - POST …/rotate-credential: the connected runner gets a new credential over its link, stores it
 *   in runner.json (0600), the old one is refused, and after a restart it connects with the new one.
 * - Runners log connect and reconnect, and a restarted runner keeps its max_pods and labels
 *   unless told otherwise (it used to fall back to 4 without --max-pods).
 * - `drover admin runners list|delete|rotate` (and their --help).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { unusedPort } from '../helpers/ports.ts';
import { upgradeStatus } from '../helpers/runners.ts';
import { podProcesses, processGone, runnerPath, startRunnerProcess, tempDir, waitFor, type RunnerProcess } from '../helpers/runner-process.ts';
import { createProcessTestDatabase, http, runDrover, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

const ORG = '/api/v1/ext/orgs/default';
const ADMIN_TOKEN = 'drvadm_e2e_lifecycle_admin_token_0123456789';

interface RunnerRecord {
  id: number;
  status: string;
  max_pods: number;
  labels: string[];
}

describe.each(DATABASES)('runner lifecycle (%s)', (kind) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let port: number;
  let apiKey: string;
  let scratch: string;
  let runnerEnv: Record<string, string>;
  let runnerSeq = 0;

  const serverEnv = () => ({ ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_SWEEP_INTERVAL_MS: '200', DROVER_LOG_LEVEL: 'warn' });
  const startServer = () => startServerProcess({ dataDir: database.dataDir, env: serverEnv(), args: ['--port', String(port)] });
  const api = (method: string, urlPath: string, body?: unknown) => http(server.url, method, urlPath, { key: apiKey, body });
  const admin = (method: string, urlPath: string, body?: unknown) => http(server.url, method, `/api/v1/admin${urlPath}`, { bearer: ADMIN_TOKEN, body });
  const cli = (...args: string[]) => runDrover(['admin', ...args, '--server', server.url, '--json'], { env: { DROVER_ADMIN_TOKEN: ADMIN_TOKEN } });

  async function registrationToken(): Promise<string> {
    const response = await admin('POST', '/orgs/default/runner-tokens', {});
    expect(response.status).toBe(201);
    return (response.body as { token: string }).token;
  }

  async function newRunner(options: { maxPods?: number; labels?: string } = {}): Promise<RunnerProcess> {
    runnerSeq += 1;
    const runner = await startRunnerProcess({
      server: server.url,
      token: await registrationToken(),
      workDir: path.join(scratch, `runner-${runnerSeq}`),
      name: `lifecycle-${runnerSeq}`,
      env: runnerEnv,
      ...options,
    });
    await waitStatus(runner.runnerId, 'online');
    return runner;
  }

  const runnerRecord = async (id: number) => {
    const response = await api('GET', `${ORG}/runners/${id}`);
    return response.status === 200 ? (response.body as { runner: RunnerRecord }).runner : null;
  };
  const waitStatus = (id: number, status: string) => waitFor(async () => (await runnerRecord(id))?.status === status, { timeout: 20_000, what: `runner ${id} ${status}` });

  async function createPod(runnerId: number, script: string): Promise<string> {
    const response = await api('POST', `${ORG}/pods`, { agent_slug: 'shell', runner_id: runnerId, agentfile_layer: `PROMPT <<END\n${script}\nEND` });
    expect(response.status, response.text).toBe(201);
    return (response.body as { pod: { pod_key: string } }).pod.pod_key;
  }
  const pod = async (key: string) => ((await api('GET', `${ORG}/pods/${key}`)).body as { pod: { status: string; error_message: string | null } }).pod;
  const waitPod = (key: string, statuses: string[]) =>
    waitFor(async () => {
      const p = await pod(key);
      return statuses.includes(p.status) ? p : undefined;
    }, { timeout: 20_000, what: `pod ${key} ${statuses.join('|')}` });

  const identity = (runner: RunnerProcess) =>
    JSON.parse(fs.readFileSync(path.join(runner.workDir, 'runner.json'), 'utf8')) as { credential: string; runner_id: number; settings?: { max_pods: number; labels: string[] } };

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    scratch = tempDir('lifecycle');
    port = await unusedPort();
    server = await startServer();
    apiKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    runnerEnv = { PATH: runnerPath(), HOME: tempDir('home'), LANG: 'C.UTF-8', DROVER_RUNNER_HEARTBEAT_MS: '500' };
  });

  afterAll(async () => {
    await server?.stop();
    await database?.cleanup();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
    if (runnerEnv?.HOME) fs.rmSync(runnerEnv.HOME, { recursive: true, force: true });
  });

  it('a deleted runner: its link is closed at once, it stops (78) instead of reconnecting, a restart is refused, its pods fail saying so', async () => {
    const runner = await newRunner();
    // The agent runs in the sandbox, which sees none of this test's directories: it is found by its pod key.
    const key = await createPod(runner.runnerId, 'exec sleep 300');
    await waitPod(key, ['running']);
    const agentPids = await waitFor(() => (podProcesses(key).length > 0 ? podProcesses(key) : undefined), { what: 'the agent process' });

    const deleted = await admin('DELETE', `/orgs/default/runners/${runner.runnerId}`);
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ message: `Runner ${runner.runnerId} deleted; its credential is revoked.` });

    const exitCode = await Promise.race([runner.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 15_000))]);
    expect(exitCode, runner.stderr).toBe(78);
    expect(runner.stderr).toMatch(/the server closed the link: this runner was deleted and its credential revoked; not reconnecting/);
    expect(runner.stderr).not.toMatch(/reconnecting in/);
    const failed = await pod(key);
    expect(failed.status).toBe('failed');
    expect(failed.error_message).toBe(`runner ${runner.runnerId} (lifecycle-${runnerSeq}) was deleted by an administrator`);
    await waitFor(() => agentPids.every((pid) => processGone(pid)) || undefined, { what: 'the agent to be stopped' });

    // Gone from every view; the id names no runner any more.
    expect(await runnerRecord(runner.runnerId)).toBeNull();
    expect(((await api('GET', `${ORG}/runners`)).body as { runners: { id: number }[] }).runners.map((r) => r.id)).not.toContain(runner.runnerId);
    expect((await admin('DELETE', `/orgs/default/runners/${runner.runnerId}`)).status).toBe(404);
    expect((await api('POST', `${ORG}/pods`, { agent_slug: 'shell', runner_id: runner.runnerId, agentfile_layer: 'PROMPT "true"' })).status).toBe(400);

    // Its credential is refused: a raw upgrade gets 401, and the runner started again stops at once.
    expect(await upgradeStatus(server.url, identity(runner).credential)).toBe(401);
    const again = await runDrover(['runner', '--server', server.url, '--work-dir', runner.workDir], { env: runnerEnv, timeoutMs: 20_000 });
    expect(again.code, again.stderr).toBe(78);
    expect(again.stderr).toMatch(/the server refused this runner's credential \(HTTP 401: the runner credential is not valid\); not reconnecting/);
  });

  it('a rotated runner stores the new credential (0600) and uses it after a restart; the old one is refused', async () => {
    const runner = await newRunner();
    const before = identity(runner).credential;

    const rotated = await admin('POST', `/orgs/default/runners/${runner.runnerId}/rotate-credential`);
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body).toMatchObject({ runner: { id: runner.runnerId, status: 'online' } });
    expect(rotated.text).not.toContain('drvrun_');
    const after = identity(runner).credential;
    expect(after).toMatch(/^drvrun_[A-Za-z0-9]{40}$/);
    expect(after).not.toBe(before);
    expect(fs.statSync(path.join(runner.workDir, 'runner.json')).mode & 0o777).toBe(0o600);
    expect(runner.stderr).toContain('received a new credential from the server');
    expect(runner.stderr).not.toContain(after);
    expect(await upgradeStatus(server.url, before)).toBe(401);

    // The link it has goes on working.
    const key = await createPod(runner.runnerId, 'echo still-linked');
    expect(await waitPod(key, ['completed', 'failed'])).toMatchObject({ status: 'completed' });

    await runner.stop();
    await waitStatus(runner.runnerId, 'offline');
    expect(expectConflict(await admin('POST', `/orgs/default/runners/${runner.runnerId}/rotate-credential`))).toContain('not connected');

    const restarted = await startRunnerProcess({ server: server.url, workDir: runner.workDir, env: runnerEnv });
    await waitStatus(runner.runnerId, 'online');
    await waitFor(() => restarted.stderr.includes(`connected to ${server.url} as runner ${runner.runnerId}`), { what: 'the restarted runner to log its connection' });
    const next = await createPod(runner.runnerId, 'echo with-the-new-credential');
    expect(await waitPod(next, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    await restarted.stop();
  });

  it('drover admin runners list|rotate|delete, each with --help', async () => {
    for (const args of [['runners', '--help'], ['runners', 'delete', '--help'], ['runners', 'rotate', '--help'], ['runners', 'list', '--help']]) {
      const result = await runDrover(['admin', ...args]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(`drover admin ${args.length === 2 ? 'runners' : args.slice(0, 2).join(' ')}`);
    }
    const help = await runDrover(['admin', 'runners', 'delete', '--help']);
    expect(help.stdout).toContain('drover admin runners delete --org <org> --id <id>');
    expect(help.stdout).not.toContain('runners rotate');

    const runner = await newRunner();
    const listed = await cli('runners', 'list', '--org', 'default');
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { runners: { id: number }[] }).runners.map((r) => r.id)).toContain(runner.runnerId);
    const rotated = await cli('runners', 'rotate', '--org', 'default', '--id', String(runner.runnerId));
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(JSON.parse(rotated.stdout)).toMatchObject({ runner: { id: runner.runnerId } });
    const missing = await cli('runners', 'delete', '--org', 'default');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('missing --id');
    const deleted = await cli('runners', 'delete', '--org', 'default', '--id', String(runner.runnerId));
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(await runner.exited).toBe(78);
    const again = await cli('runners', 'delete', '--org', 'default', '--id', String(runner.runnerId));
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('NOT_FOUND');
  });

  // Last: it restarts the server, and a server started inside a test is stopped with that test.
  it('runners log connect and reconnect; a restarted runner keeps its max_pods and labels unless a flag says otherwise', async () => {
    const runner = await newRunner({ maxPods: 8, labels: 'gpu,eu' });
    await waitFor(() => runner.stderr.includes(`connected to ${server.url} as runner ${runner.runnerId}`), { what: 'the runner to log its connection' });
    expect(await runnerRecord(runner.runnerId)).toMatchObject({ max_pods: 8, labels: ['gpu', 'eu'] });
    expect(identity(runner).settings).toMatchObject({ max_pods: 8, labels: ['gpu', 'eu'] });

    // The server goes away and comes back on the same address: the runner says so both times.
    await server.kill9();
    await waitFor(() => /connection to \S+ lost \([^)]*\), reconnecting in \d+\.\d s/.test(runner.stderr), { what: 'the runner to log the lost connection' });
    server = await startServer();
    await waitFor(() => runner.stderr.includes(`reconnected to ${server.url} as runner ${runner.runnerId} after `), { timeout: 40_000, what: 'the runner to log its reconnect' });
    await waitStatus(runner.runnerId, 'online');

    // Restarted without --max-pods and --labels: it keeps 8 and its labels (it used to become 4).
    await runner.stop();
    const kept = await startRunnerProcess({ server: server.url, workDir: runner.workDir, env: runnerEnv });
    await waitFor(async () => (await runnerRecord(runner.runnerId))?.status === 'online');
    expect(await runnerRecord(runner.runnerId)).toMatchObject({ max_pods: 8, labels: ['gpu', 'eu'] });
    expect(kept.stderr).toContain('max_pods 8 (kept from');
    await kept.stop();

    // An explicit flag wins, is reported to the server and remembered.
    const changed = await startRunnerProcess({ server: server.url, workDir: runner.workDir, env: runnerEnv, maxPods: 6 });
    await waitFor(async () => (await runnerRecord(runner.runnerId))?.max_pods === 6, { what: 'max_pods 6 on the server' });
    expect(changed.stderr).toContain('max_pods 8 → 6 (from --max-pods)');
    expect(identity(runner).settings).toMatchObject({ max_pods: 6, labels: ['gpu', 'eu'] });
    expect(fs.statSync(path.join(runner.workDir, 'runner.json')).mode & 0o777).toBe(0o600);
    await changed.stop();
  });
});

function expectConflict(response: { status: number; body: unknown }): string {
  expect(response.status).toBe(409);
  const body = response.body as { code: string; error: string };
  expect(body.code).toBe('RUNNER_UNAVAILABLE');
  return body.error;
}

describe('the local runner of drover serve, deleted (SQLite, where it runs by default)', () => {
  it('is disconnected, stops, and is not started again', async () => {
    const database = await createProcessTestDatabase('sqlite');
    try {
      const server = await startServerProcess({ dataDir: database.dataDir, env: { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN }, localRunner: true });
      const id = await server.localRunnerConnected(30_000);
      const deleted = await http(server.url, 'DELETE', `/api/v1/admin/orgs/default/runners/${id}`, { bearer: ADMIN_TOKEN });
      expect(deleted.status, deleted.text).toBe(200);
      const record = await waitFor(() => server.logRecords().find((r) => String(r.msg).includes("the local runner's credential was revoked")), {
        timeout: 20_000,
        what: 'the server to log that the local runner is not restarted',
      });
      expect(String(record.msg)).toContain('it is not restarted');
      await new Promise((resolve) => setTimeout(resolve, 1_500)); // a restart would come after 1 s
      expect(server.stdout).not.toContain('starting it again');
      await server.stop();
    } finally {
      await database.cleanup();
    }
  });
});
