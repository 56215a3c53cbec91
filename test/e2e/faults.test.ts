/**
 * Faults end to end (docs/api.md "Pods"; docs/decisions.md "Runners and pods") with REAL processes:
 * a runner killed with SIGKILL mid-pod, a runner frozen (SIGSTOP) past the orphan grace and then
 * thawed, the server killed with SIGKILL and restarted on the same data while a runner works on,
 * and (PostgreSQL) two server replicas on one database, the runner held by one of them.
 *
 * Short knobs: DROVER_SWEEP_INTERVAL_MS=200, DROVER_POD_ORPHAN_GRACE_SECONDS=2 and the runner's
 * DROVER_RUNNER_HEARTBEAT_MS=500. The silence after which the server itself marks a runner
 * offline (30 s, RUNNER_SILENCE_MS) has no knob, so the frozen-runner test waits it out; it runs on
 * SQLite only (the liveness code is the same on both stores, and the store-specific parts, the
 * guarded status updates, are exercised on both by the SIGKILL test).
 *
 * The external runners here run their agents unsandboxed (`--sandbox none`): these tests are about
 * what the runner's agent journal does for agents that outlive a killed runner, which only happens
 * without the sandbox (inside it an agent dies with its runner: test/sandbox/). The local runner
 * runs with its default sandbox.
 */
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { createProcessTestDatabase, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { childPids, commandLine, killGroup, podProcesses, processGone, processesWithEnv, runnerPath, startRunnerProcess, tempDir, waitFor } from '../helpers/runner-process.ts';
import { unusedPort } from '../helpers/ports.ts';
import { ORG, podClient } from '../helpers/pod-client.ts';

const ADMIN_TOKEN = 'drvadm_e2e_faults_admin_token_0123456789abcdef';
const SECRET_KEY = Buffer.alloc(32, 7).toString('base64');

/** The pod client of these tests, with this file's admin token. */
const client = (base: () => string, key: () => string) => podClient(base, key, ADMIN_TOKEN);

const waitPid = (file: string) =>
  waitFor(() => (fs.existsSync(file) && fs.readFileSync(file, 'utf8').trim() ? Number(fs.readFileSync(file, 'utf8').trim()) : undefined), {
    what: file,
  });

describe.each(DATABASES)('runner faults (%s)', (kind) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let apiKey: string;
  let scratch: string;
  const leftovers = new Set<number>();
  const c = client(
    () => server.url,
    () => apiKey,
  );
  const runnerEnv = (): Record<string, string> => ({ PATH: runnerPath(), HOME: scratch, DROVER_RUNNER_HEARTBEAT_MS: '500', DROVER_RUNNER_SANDBOX: 'none' });

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    scratch = tempDir('faults');
    server = await startServerProcess({
      dataDir: database.dataDir,
      env: {
        ...database.env,
        DROVER_ADMIN_TOKEN: ADMIN_TOKEN,
        DROVER_SWEEP_INTERVAL_MS: '200',
        DROVER_POD_ORPHAN_GRACE_SECONDS: '2',
        DROVER_POD_ORPHAN_FAIL_SECONDS: '3600',
        DROVER_LOG_LEVEL: 'warn',
      },
    });
    apiKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
  });

  afterAll(async () => {
    await server?.stop();
    for (const pid of leftovers) killGroup(pid);
    await database?.cleanup();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('kill -9 of a runner mid-pod: runner offline, pod orphaned after the grace; a new runner process on the same work dir: the agent is gone and the pod failed', async () => {
    const workDir = path.join(scratch, 'killed-runner');
    const first = await startRunnerProcess({ server: server.url, token: await c.registrationToken(), workDir, name: 'victim', env: runnerEnv() });
    await waitFor(async () => (await c.runnerStatus(first.runnerId)) === 'online', { what: 'the runner online' });
    const pidFile = path.join(scratch, 'victim.pid');
    const key = await c.createPod(`echo $$ > ${pidFile}\nsleep 300 &\nwait`, first.runnerId);
    const agent = await waitPid(pidFile);
    leftovers.add(agent);
    await c.waitStatus(key, ['running']);

    await first.kill9();
    await waitFor(async () => (await c.runnerStatus(first.runnerId)) === 'offline', { timeout: 5_000, what: 'the killed runner offline' });
    expect((await c.getPod(key)).status).toBe('running'); // within the grace
    const orphaned = await c.waitStatus(key, ['orphaned'], 6_000);
    expect(orphaned.status).toBe('orphaned');
    const available = (await c.api('GET', `${ORG}/runners/available`)).body as { runners: { id: number }[] };
    expect(available.runners.map((r) => r.id)).not.toContain(first.runnerId);

    // Same work dir, so the same credential: the server knows it as the same runner.
    const second = await startRunnerProcess({ server: server.url, workDir, name: 'victim', env: runnerEnv() });
    expect(second.runnerId).toBe(first.runnerId);
    const failed = await c.waitStatus(key, ['failed', 'running', 'completed', 'terminated'], 10_000);
    expect(failed.status).toBe('failed');
    expect(failed.error_message).toMatch(/no longer has this pod/);
    await waitFor(async () => (await c.runnerStatus(first.runnerId)) === 'online', { what: 'the runner online again' });
    // The agent the killed runner left behind must not keep working on a pod reported failed.
    await waitFor(() => processGone(agent), { timeout: 5_000, what: 'the abandoned agent to be gone' });
    const runners = (await c.api('GET', `${ORG}/runners`)).body as { runners: { id: number }[] };
    expect(runners.runners.filter((r) => r.id === first.runnerId)).toHaveLength(1);

    // The runner works again.
    const after = await c.createPod('echo back', first.runnerId);
    expect(await c.waitStatus(after, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    await second.stop();
  }, 60_000);

  it.runIf(kind === 'sqlite')(
    'a runner frozen (SIGSTOP) past the grace and then thawed: offline → orphaned → back to running, online again, and the pod still ends normally',
    async () => {
      const workDir = path.join(scratch, 'frozen-runner');
      const runner = await startRunnerProcess({ server: server.url, token: await c.registrationToken(), workDir, name: 'frozen', env: runnerEnv() });
      await waitFor(async () => (await c.runnerStatus(runner.runnerId)) === 'online', { what: 'the runner online' });
      const pidFile = path.join(scratch, 'frozen.pid');
      const gate = path.join(scratch, 'frozen.gate');
      const key = await c.createPod(`echo $$ > ${pidFile}\nwhile [ ! -e ${gate} ]; do sleep 0.2; done\necho finished-after-thaw`, runner.runnerId);
      const agent = await waitPid(pidFile);
      leftovers.add(agent);
      await c.waitStatus(key, ['running']);

      runner.pause();
      try {
        // The server notices the silence after 30 s (no knob), then the 2 s grace orphans the pod.
        await waitFor(async () => (await c.runnerStatus(runner.runnerId)) === 'offline', { timeout: 40_000, interval: 500, what: 'the frozen runner offline' });
        await c.waitStatus(key, ['orphaned'], 6_000);
        expect(processGone(agent)).toBe(false); // the agent is not frozen with its runner
      } finally {
        runner.resume();
      }
      await waitFor(async () => (await c.runnerStatus(runner.runnerId)) === 'online', { timeout: 5_000, what: 'the thawed runner online' });
      await c.waitStatus(key, ['running'], 5_000);
      // Stays running (no flapping back to orphaned on the next sweeps).
      for (let i = 0; i < 10; i++) {
        await new Promise((r) => setTimeout(r, 300));
        expect((await c.getPod(key)).status).toBe('running');
      }
      fs.writeFileSync(gate, '');
      expect(await c.waitStatus(key, ['completed', 'failed'])).toMatchObject({ status: 'completed', exit_code: 0 });
      expect(await c.output(key)).toContain('finished-after-thaw');
      await runner.stop();
    },
    90_000,
  );

  it('a runner that never comes back: its orphaned pod fails after DROVER_POD_ORPHAN_FAIL_SECONDS', async () => {
    const db = await createProcessTestDatabase(kind);
    const local = await startServerProcess({
      dataDir: db.dataDir,
      env: { ...db.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_SWEEP_INTERVAL_MS: '200', DROVER_POD_ORPHAN_GRACE_SECONDS: '1', DROVER_POD_ORPHAN_FAIL_SECONDS: '3', DROVER_LOG_LEVEL: 'warn' },
    });
    try {
      const key = fs.readFileSync(path.join(db.dataDir, 'bootstrap-api-key'), 'utf8').trim();
      const lc = client(
        () => local.url,
        () => key,
      );
      const runner = await startRunnerProcess({ server: local.url, token: await lc.registrationToken(), workDir: path.join(scratch, 'gone-runner'), env: runnerEnv() });
      await waitFor(async () => (await lc.runnerStatus(runner.runnerId)) === 'online', { what: 'the runner online' });
      const pidFile = path.join(scratch, 'gone.pid');
      const podKey = await lc.createPod(`echo $$ > ${pidFile}\nsleep 300`);
      leftovers.add(await waitPid(pidFile));
      await lc.waitStatus(podKey, ['running']);
      await runner.kill9();
      await lc.waitStatus(podKey, ['orphaned'], 5_000);
      const failed = await lc.waitStatus(podKey, ['failed'], 8_000);
      expect(failed.error_message).toMatch(/never came back/);
    } finally {
      await local.stop();
      await db.cleanup();
    }
    // The budget of a server and a runner started here (the waits above are the orphan and fail
    // times'): 40 s ran out at load ~40 in a whole run; the file's other tests that start processes have 60–90 s.
  }, 90_000);
});

describe.each(DATABASES)('server faults (%s)', (kind) => {
  let database: TestDatabase;
  let scratch: string;
  const leftovers = new Set<number>();

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    scratch = tempDir('server-faults');
  });

  afterAll(async () => {
    for (const pid of leftovers) killGroup(pid);
    await database?.cleanup();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('kill -9 of the server and a restart on the same data: the runner reconnects, pods and states are intact, and a pod that ended during the outage is reported', async () => {
    const port = await unusedPort();
    const env = { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_SWEEP_INTERVAL_MS: '200', DROVER_LOG_LEVEL: 'warn' };
    let server = await startServerProcess({ dataDir: database.dataDir, env, args: ['--port', String(port)] });
    expect(server.url).toBe(`http://127.0.0.1:${port}`);
    const apiKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    const c = client(
      () => server.url,
      () => apiKey,
    );
    const runner = await startRunnerProcess({
      server: server.url,
      token: await c.registrationToken(),
      workDir: path.join(scratch, 'runner'),
      env: { PATH: runnerPath(), HOME: scratch, DROVER_RUNNER_HEARTBEAT_MS: '500', DROVER_RUNNER_SANDBOX: 'none' },
    });
    await waitFor(async () => (await c.runnerStatus(runner.runnerId)) === 'online', { what: 'the runner online' });

    const longPid = path.join(scratch, 'long.pid');
    const quickPid = path.join(scratch, 'quick.pid');
    const gate = path.join(scratch, 'gate');
    const long = await c.createPod(`echo $$ > ${longPid}\necho long-started\nsleep 300`);
    const quick = await c.createPod(`echo $$ > ${quickPid}\necho before-outage\nwhile [ ! -e ${gate} ]; do sleep 0.1; done\necho during-outage\nexit 0`);
    const longAgent = await waitPid(longPid);
    const quickAgent = await waitPid(quickPid);
    leftovers.add(longAgent).add(quickAgent);
    await c.waitStatus(long, ['running']);
    await c.waitStatus(quick, ['running']);
    await waitFor(async () => (await c.output(quick)).includes('before-outage'), { what: 'output before the outage' });

    await server.kill9();
    fs.writeFileSync(gate, '');
    await waitFor(() => processGone(quickAgent), { what: 'the quick pod to end during the outage' });
    await new Promise((r) => setTimeout(r, 1_000));

    server = await startServerProcess({ dataDir: database.dataDir, env, args: ['--port', String(port)] });
    const reconnectedIn = Date.now();
    const done = await c.waitStatus(quick, ['completed', 'failed'], 20_000);
    expect(done).toMatchObject({ status: 'completed', exit_code: 0 });
    await waitFor(async () => (await c.runnerStatus(runner.runnerId)) === 'online', { what: 'the runner online after the restart' });
    expect(Date.now() - reconnectedIn).toBeLessThan(20_000);
    expect((await c.getPod(long)).status).toBe('running');
    expect(processGone(longAgent)).toBe(false);
    const all = (await c.api('GET', `${ORG}/pods`)).body as { total: number; pods: { key: string }[] };
    expect(all.total).toBe(2);
    expect(all.pods.map((p) => p.key).sort()).toEqual([long, quick].sort());
    const quickOutput = await c.output(quick);
    expect(quickOutput).toContain('before-outage');
    // Output written while the server was away is delivered after the reconnect, not dropped.
    expect(quickOutput).toContain('during-outage');

    // The link works both ways after the restart: stop the long pod, start a new one.
    expect((await c.api('POST', `${ORG}/pods/${long}/terminate`)).status).toBe(200);
    await waitFor(() => processGone(longAgent), { timeout: 12_000, what: 'the long pod stopped after the restart' });
    const fresh = await c.createPod('echo after-restart');
    expect(await c.waitStatus(fresh, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    expect(await c.output(fresh)).toBe('after-restart\n');
    await runner.stop();
    await server.stop();
  }, 90_000);
});

describe.runIf(DATABASES.includes('postgres'))('two server replicas on one PostgreSQL database', () => {
  let database: TestDatabase;
  let scratch: string;
  const leftovers = new Set<number>();

  beforeAll(async () => {
    database = await createProcessTestDatabase('postgres');
    scratch = tempDir('replicas');
  });

  afterAll(async () => {
    for (const pid of leftovers) killGroup(pid);
    await database?.cleanup();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('a pod created and terminated through replica B runs on and stops on the runner held by replica A, well within a heartbeat (LISTEN/NOTIFY)', async () => {
    const env = {
      ...database.env,
      DROVER_ADMIN_TOKEN: ADMIN_TOKEN,
      DROVER_SECRET_KEY: SECRET_KEY,
      DROVER_LOCAL_RUNNER: 'false',
      DROVER_SWEEP_INTERVAL_MS: '200',
      DROVER_LOG_LEVEL: 'warn',
    };
    const a = await startServerProcess({ dataDir: path.join(scratch, 'a'), env });
    const b = await startServerProcess({ dataDir: path.join(scratch, 'b'), env });
    const apiKey = fs.readFileSync(path.join(scratch, 'a', 'bootstrap-api-key'), 'utf8').trim();
    expect(fs.existsSync(path.join(scratch, 'b', 'bootstrap-api-key'))).toBe(false);
    const viaA = client(
      () => a.url,
      () => apiKey,
    );
    const viaB = client(
      () => b.url,
      () => apiKey,
    );
    // Default heartbeat (10 s): anything faster than that came through the notification.
    const runner = await startRunnerProcess({
      server: a.url,
      token: await viaA.registrationToken(),
      workDir: path.join(scratch, 'runner'),
      env: { PATH: runnerPath(), HOME: scratch, DROVER_RUNNER_SANDBOX: 'none' },
    });
    await waitFor(async () => (await viaB.runnerStatus(runner.runnerId)) === 'online', { what: 'the runner online, seen from B' });
    // Its hello heartbeat is done; the next one is 10 s away.
    await new Promise((r) => setTimeout(r, 500));

    const pidFile = path.join(scratch, 'replica.pid');
    const createdAt = Date.now();
    const key = await viaB.createPod(`echo $$ > ${pidFile}\nsleep 300`);
    const agent = await waitPid(pidFile);
    leftovers.add(agent);
    await viaB.waitStatus(key, ['running'], 5_000);
    expect(Date.now() - createdAt).toBeLessThan(4_000);

    const stoppedAt = Date.now();
    const stop = await viaB.api('POST', `${ORG}/pods/${key}/terminate`);
    expect(stop.status).toBe(200);
    await waitFor(() => processGone(agent), { timeout: 5_000, interval: 50, what: 'the agent stopped through replica B' });
    expect(Date.now() - stoppedAt).toBeLessThan(4_000);
    expect((await viaA.getPod(key)).status).toBe('terminated');
    await runner.stop();
    await b.stop();
    await a.stop();
  }, 60_000);
});

describe('the local runner of `drover serve` (SQLite)', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createProcessTestDatabase('sqlite');
  });

  afterAll(async () => {
    await database?.cleanup();
  });

  it('runs pods with the server’s credentials and nothing else of its environment; kill -9 of the server ends its local runner’s agents, and the restart ends the pod (the runner’s kept report, or lost)', async () => {
    const port = await unusedPort();
    const env = {
      ...database.env,
      DROVER_ADMIN_TOKEN: ADMIN_TOKEN,
      DROVER_SECRET_KEY: SECRET_KEY,
      DROVER_SWEEP_INTERVAL_MS: '200',
      DROVER_CREDENTIAL_API_TOKEN: 'local-credential',
      DROVER_LOG_LEVEL: 'warn',
    };
    let server = await startServerProcess({ dataDir: database.dataDir, env, localRunner: true, args: ['--port', String(port)] });
    const apiKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    const c = client(
      () => server.url,
      () => apiKey,
    );
    // "Drover listening" comes first; the local runner registers and connects just after.
    await server.localRunnerConnected();
    const runners = ((await c.api('GET', `${ORG}/runners`)).body as { runners: { id: number; name: string; labels: string[]; status: string }[] }).runners;
    expect(runners).toEqual([expect.objectContaining({ name: 'local', labels: ['local'], status: 'online' })]);

    const response = await c.api('POST', `${ORG}/pods`, {
      agent_slug: 'shell',
      agentfile_layer: 'CREDENTIAL API_TOKEN\nPROMPT "echo cred=$API_TOKEN admin=${DROVER_ADMIN_TOKEN:-unset} key=${DROVER_SECRET_KEY:-unset} db=${DROVER_DATA_DIR:-unset}"',
    });
    expect(response.status, response.text).toBe(201);
    const hello = (response.body as { pod: { pod_key: string } }).pod.pod_key;
    expect(await c.waitStatus(hello, ['completed', 'failed'])).toMatchObject({ status: 'completed', runner_id: runners[0].id });
    expect(await c.output(hello)).toBe('cred=local-credential admin=unset key=unset db=unset\n');

    const long = await c.createPod('sleep 300');
    await c.waitStatus(long, ['running']);
    // "running" is the sandbox's spawn; the agent (with the pod's environment) exists once bwrap has
    // built its namespaces and executed it, a moment later on a loaded machine.
    await waitFor(() => podProcesses(long).length > 0, { what: 'the agent process inside the sandbox' });
    await server.kill9();
    // The local runner is the server's child process: with its server gone it stops its pods (no
    // agent is left running unwatched) and exits.
    await waitFor(() => podProcesses(long).length === 0, { timeout: 15_000, what: 'the agent to be ended by the local runner of the dead server' });

    server = await startServerProcess({ dataDir: database.dataDir, env, localRunner: true, args: ['--port', String(port)] });
    // The restarted runner's report comes once it has started again (its self-tests and each
    // agent's --version first): seconds, more on a loaded machine.
    const ended = await c.waitStatus(long, ['failed', 'completed', 'terminated'], 45_000);
    // The local runner stopped the agent itself and keeps that end report on its disk until a server
    // takes it (docs/agents.md "Getting the work back"): its next start reports it. A runner that
    // died before it could keep the report has no pod to show: the server then fails it as lost.
    if (ended.status === 'terminated') expect(ended).toMatchObject({ error_message: 'terminated', exit_code: 143 });
    else expect(ended).toMatchObject({ status: 'failed', error_message: expect.stringMatching(/no longer has this pod/) });
    const after = ((await c.api('GET', `${ORG}/runners`)).body as { runners: { id: number; status: string }[] }).runners;
    expect(after).toEqual([expect.objectContaining({ id: runners[0].id, status: 'online' })]);
    await server.stop();
  }, 120_000);

  it('kill -9 of the local runner: the server starts it again (same runner, a new connection, online) and pods run; after SIGTERM to the server none of its processes is left', async () => {
    const db = await createProcessTestDatabase('sqlite');
    const env = { ...db.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_SECRET_KEY: SECRET_KEY, DROVER_SWEEP_INTERVAL_MS: '200', DROVER_LOG_LEVEL: 'warn' };
    const server = await startServerProcess({ dataDir: db.dataDir, env, localRunner: true });
    const seen = new Set<number>();
    try {
      const apiKey = fs.readFileSync(path.join(db.dataDir, 'bootstrap-api-key'), 'utf8').trim();
      const c = client(
        () => server.url,
        () => apiKey,
      );
      // Announced once the server has heard from its runner over IPC (the start-up is over).
      const runnerId = await server.localRunnerConnected();
      const listed = ((await c.api('GET', `${ORG}/runners`)).body as { runners: { id: number; status: string }[] }).runners;
      expect(listed).toEqual([expect.objectContaining({ id: runnerId, status: 'online' })]);
      // The runner's row as stored: a new socket gets a new connection_id.
      const stored = () => {
        const sqlite = new SQLite(path.join(db.dataDir, 'drover.sqlite'), { readonly: true, fileMustExist: true });
        try {
          return sqlite.prepare('select status, connection_id from runners where id = ?').get(runnerId) as { status: string; connection_id: string | null };
        } finally {
          sqlite.close();
        }
      };
      const localRunner = () => childPids(server.child.pid!).find((pid) => commandLine(pid).includes('drover.mjs runner'));
      const launcherOf = (pid: number) => childPids(pid).find((child) => commandLine(child).includes('launcher-child.mjs'));
      const first = await waitFor(localRunner, { what: 'the local runner process' });
      const firstLauncher = await waitFor(() => launcherOf(first), { what: 'the local runner’s launcher' });
      seen.add(first).add(firstLauncher);
      const firstConnection = stored().connection_id;
      expect(firstConnection).not.toBeNull();

      process.kill(first, 'SIGKILL');
      await waitFor(() => processGone(firstLauncher), { what: 'the killed runner’s launcher to exit' });
      const second = await waitFor(
        () => {
          if (server.child.exitCode !== null || server.child.signalCode !== null) throw new Error(`the server exited:\n${server.stderr}${server.stdout}`);
          const pid = localRunner();
          return pid !== first ? pid : undefined;
        },
        { timeout: 20_000, what: 'the local runner started again' },
      );
      seen.add(second);
      const reconnected = await waitFor(
        () => {
          const row = stored();
          return row.status === 'online' && row.connection_id !== null && row.connection_id !== firstConnection && row;
        },
        { timeout: 20_000, what: 'the restarted local runner connected' },
      );
      expect(reconnected.status).toBe('online');
      const runners = ((await c.api('GET', `${ORG}/runners`)).body as { runners: { id: number; status: string }[] }).runners;
      expect(runners).toEqual([expect.objectContaining({ id: runnerId, status: 'online' })]);

      const key = await c.createPod('echo after-restart');
      expect(await c.waitStatus(key, ['completed', 'failed'])).toMatchObject({ status: 'completed', runner_id: runnerId });
      expect(await c.output(key)).toBe('after-restart\n');
      const secondLauncher = await waitFor(() => launcherOf(second), { what: 'the restarted runner’s launcher' });
      seen.add(secondLauncher);

      // The processes of this server carry its data dir in their environment: the server, its
      // local runner and the runner's launcher among them (agents get a minimal environment).
      const marker = `DROVER_DATA_DIR=${db.dataDir}`;
      expect(processesWithEnv(marker)).toEqual(expect.arrayContaining([server.child.pid!, second, secondLauncher]));
      expect(await server.stop()).toBe(0);
      await waitFor(() => processesWithEnv(marker).length === 0, { what: 'no process of the stopped server left' });
      for (const pid of seen) expect(processGone(pid)).toBe(true);
    } finally {
      if (server.child.exitCode === null && server.child.signalCode === null) await server.kill9();
      for (const pid of seen) if (!processGone(pid)) killGroup(pid);
      await db.cleanup();
    }
  }, 120_000);
});

