/**
 * The runner record's `isolation` (docs/runners.md "Isolation"), with REAL processes on every
 * database: a runner started as root on this machine (cgroups v1, bubblewrap) reports the walls
 * its self-tests found and shows them on GET /runners and GET /runners/:id; `--sandbox none`
 * reports no network wall and warns at start; a runner of an earlier version, whose hello has no
 * `isolation`, is shown with null (unknown), not with walls it never claimed.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { PROTOCOL_VERSION } from '../../src/protocol/runner-link.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { ORG, podClient } from '../helpers/pod-client.ts';
import { runnerPath, standInBinDir, startRunnerProcess, tempDir, waitFor, type RunnerProcess } from '../helpers/runner-process.ts';
import { createProcessTestDatabase, http, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

const ADMIN_TOKEN = 'drvadm_sandbox_isolation_admin_token_0123456789';
const AS_ROOT = process.getuid?.() === 0;

type Walls = Record<'network' | 'memory' | 'pids' | 'cpu' | 'disk', boolean>;
interface RunnerJson {
  id: number;
  sandbox: string | null;
  isolation: Walls | null;
}

describe.each(DATABASES)('runner isolation record (%s)', (kind) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let scratch: string;
  let binDir: string;
  let apiKey: string;
  const runners: RunnerProcess[] = [];
  const sockets: WebSocket[] = [];
  const c = podClient(
    () => server.url,
    () => apiKey,
    ADMIN_TOKEN,
  );

  async function runner(name: string, sandbox?: 'bwrap' | 'none'): Promise<RunnerProcess> {
    const started = await startRunnerProcess({
      server: server.url,
      token: await c.registrationToken(),
      workDir: path.join(scratch, name),
      name,
      sandbox,
      env: { PATH: runnerPath(binDir), HOME: scratch, LANG: 'C.UTF-8' },
    });
    runners.push(started);
    await waitFor(async () => (await c.runnerStatus(started.runnerId)) === 'online', { what: `runner ${name} online` });
    return started;
  }

  const record = async (id: number): Promise<RunnerJson> => ((await c.api('GET', `${ORG}/runners/${id}`)).body as { runner: RunnerJson }).runner;
  const listed = async (id: number): Promise<RunnerJson> =>
    ((await c.api('GET', `${ORG}/runners`)).body as { runners: RunnerJson[] }).runners.find((r) => r.id === id)!;

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    scratch = tempDir('isolation');
    binDir = standInBinDir(['claude']);
    server = await startServerProcess({ dataDir: database.dataDir, env: { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_LOG_LEVEL: 'warn' } });
    apiKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
  });

  afterAll(async () => {
    for (const socket of sockets) socket.terminate();
    for (const r of runners) await r.stop();
    await server?.stop();
    await database?.cleanup();
    for (const dir of [scratch, binDir]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it.runIf(AS_ROOT)('a runner as root with bubblewrap and cgroups: every wall on, in the list and the detail, and no warning', async () => {
    const walled = await runner('walled');
    const expected: Walls = { network: true, memory: true, pids: true, cpu: true, disk: true };
    expect((await record(walled.runnerId)).isolation).toEqual(expected);
    expect((await listed(walled.runnerId)).isolation).toEqual(expected);
    expect(walled.stderr).not.toMatch(/cannot enforce/);
  });

  it.runIf(AS_ROOT)('--sandbox none: no network wall, the cgroup limits still on, and a warn line naming what is missing', async () => {
    const plain = await runner('plain', 'none');
    const shown = await record(plain.runnerId);
    expect(shown.sandbox).toBe('none');
    expect(shown.isolation).toEqual({ network: false, memory: true, pids: true, cpu: true, disk: true });
    expect(plain.stderr).toMatch(/warning: this runner cannot enforce the pod walls: network\b/);
  });

  it.runIf(AS_ROOT)("a runner's stop removes its control groups (its parent group in each hierarchy), not only its pods'", async () => {
    const stopping = await runner('stopping');
    // The runner is this process's child: its groups are below this process's own, one per controller.
    const own = new Map(
      fs
        .readFileSync('/proc/self/cgroup', 'utf8')
        .split('\n')
        .filter(Boolean)
        .flatMap((line) => line.split(':')[1].split(',').map((controller) => [controller, line.split(':')[2]] as const)),
    );
    const name = `drover-${createHash('sha256').update(stopping.workDir).digest('hex').slice(0, 12)}`;
    const groups = ['memory', 'pids', 'cpu'].map((controller) => path.join('/sys/fs/cgroup', controller, own.get(controller) ?? '/', name));
    expect(groups.filter((dir) => fs.existsSync(dir))).toEqual(groups);
    expect(await stopping.stop()).toBe(0);
    expect(groups.filter((dir) => fs.existsSync(dir))).toEqual([]);
  });

  it('a runner of an earlier version (hello without isolation) is shown with isolation null', async () => {
    const registered = await http(server.url, 'POST', '/api/v1/runner/register', {
      body: { token: await c.registrationToken(), name: 'old', labels: [], max_pods: 1, version: '0.0.9', os: 'linux', arch: 'x64' },
    });
    expect(registered.status, registered.text).toBe(201);
    const { runner_id: id, credential } = registered.body as { runner_id: number; credential: string };
    const socket = new WebSocket(`${server.url.replace(/^http/, 'ws')}/api/v1/runner/connect`, { headers: { authorization: `Bearer ${credential}` } });
    sockets.push(socket);
    const welcomed = new Promise<unknown>((resolve, reject) => {
      socket.on('message', (data: Buffer) => {
        const message = JSON.parse(data.toString()) as { type: string };
        if (message.type === 'welcome') resolve(message);
      });
      socket.on('close', (code, reason) => reject(new Error(`closed ${code} ${reason.toString()}`)));
      socket.on('error', reject);
    });
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const hello = { v: PROTOCOL_VERSION, type: 'hello', version: '0.0.9', os: 'linux', arch: 'x64', labels: [], max_pods: 1, agents: [], sandbox: 'bwrap' };
    socket.send(JSON.stringify({ ...hello, draining: false, pods: [], finished: [] }));
    await welcomed;
    const shown = await record(id);
    expect(shown).toMatchObject({ sandbox: 'bwrap', isolation: null });
    expect((await listed(id)).isolation).toBeNull();
  });
});
