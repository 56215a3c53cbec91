/**
 * The walls on the host (docs/runners.md "The walls", "Limits"), with REAL processes: `drover
 * serve` and an external `drover runner` with the default sandbox (bwrap) and real cgroups (v1 on
 * this project's machines), on every database.
 *
 * - the agent's variables stay inside: a marker in ENV, a runner credential and the pod token are
 *   in no environment of a process outside the sandbox's PID namespace and on no command line;
 * - CONFIG pids / memory_mb / disk_mb hold, and a pod over its memory or disk is `failed` naming
 *   the limit, while the API answers and another pod completes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { podClient } from '../helpers/pod-client.ts';
import { runnerPath, startRunnerProcess, tempDir, waitFor, type RunnerProcess } from '../helpers/runner-process.ts';
import { createProcessTestDatabase, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

const ADMIN_TOKEN = 'drvadm_sandbox_walls_admin_token_0123456789abcdef';
const CREDENTIAL = 'walls-credential-value-5d1e0c7a';
const MARKER = 'walls-env-marker-9f3b27c4';

/** Every process the test can see, with its pid namespace, environment and command line. */
function processes(): { pid: number; ns: string; environ: string; cmdline: string }[] {
  const found = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      found.push({
        pid: Number(name),
        ns: fs.readlinkSync(`/proc/${name}/ns/pid`),
        environ: fs.readFileSync(`/proc/${name}/environ`, 'latin1'),
        cmdline: fs.readFileSync(`/proc/${name}/cmdline`, 'latin1'),
      });
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

describe.each(DATABASES)('the walls on the host (%s)', (kind) => {
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

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    scratch = tempDir('walls');
    server = await startServerProcess({
      dataDir: database.dataDir,
      env: { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_LOG_LEVEL: 'warn' },
      // Generous start-up times: the machines this runs on are shared and often loaded.
      timeoutMs: 90_000,
    });
    apiKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    const workDir = path.join(scratch, 'runner');
    fs.mkdirSync(workDir, { recursive: true, mode: 0o700 });
    // In credentials.json, not in the runner's environment: the runner's own process must not carry it either.
    fs.writeFileSync(path.join(workDir, 'credentials.json'), JSON.stringify({ WALLS_CREDENTIAL: CREDENTIAL }));
    runner = await startRunnerProcess({
      server: server.url,
      token: await c.registrationToken(),
      workDir,
      name: 'walls',
      env: { PATH: runnerPath(), HOME: scratch, LANG: 'C.UTF-8', DROVER_RUNNER_HEARTBEAT_MS: '500' },
      timeoutMs: 90_000,
    });
    await waitFor(async () => (await c.runnerStatus(runner.runnerId)) === 'online', { what: 'the runner online', timeout: 60_000 });
  }, 240_000);

  afterAll(async () => {
    await runner?.stop();
    await server?.stop();
    await database?.cleanup();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  const ended = (key: string, timeout = 60_000) => c.waitStatus(key, ['completed', 'failed', 'terminated'], timeout);

  it('ENV values, credentials and the pod token are in no host-side environment and on no command line', async () => {
    const script = [
      // The token, reversed: the test learns it without the output holding it as it is.
      'echo "token=$(printf %s "$DROVER_POD_TOKEN" | rev)"',
      'echo "inside=$MARKER/$WALLS_CREDENTIAL"',
      'touch ready',
      'while [ ! -e done ]; do sleep 0.1; done',
    ].join('\n');
    const key = await c.createPod(script, runner.runnerId, `ENV MARKER "${MARKER}"`, 'CREDENTIAL WALLS_CREDENTIAL');
    const workspace = path.join(runner.workDir, 'pods', key, 'workspace');
    await waitFor(() => fs.existsSync(path.join(workspace, 'ready')), { what: 'the agent running', timeout: 30_000 });
    const output = await waitFor(async () => ((await c.output(key)).includes('inside=') ? c.output(key) : undefined), { what: 'the output' });
    expect(output).toContain(`inside=${MARKER}/${CREDENTIAL}`);
    const token = /token=(\S+)/.exec(output)![1].split('').reverse().join('');
    expect(token.length).toBeGreaterThan(20);

    const own = fs.readlinkSync('/proc/self/ns/pid');
    const all = processes();
    const inside = all.filter((p) => p.environ.includes(MARKER));
    expect(inside.length).toBeGreaterThan(0); // the agent itself, in its own PID namespace
    for (const secret of [MARKER, CREDENTIAL, token]) {
      const outside = all.filter((p) => p.ns === own && p.environ.includes(secret)).map((p) => `${p.pid} ${p.cmdline.replaceAll('\0', ' ')}`);
      expect(outside, `processes outside the sandbox carrying ${secret.slice(0, 12)}…`).toEqual([]);
      expect(all.filter((p) => p.cmdline.includes(secret)).map((p) => p.pid)).toEqual([]);
    }
    expect(inside.every((p) => p.ns !== own)).toBe(true);
    fs.writeFileSync(path.join(workspace, 'done'), '');
    expect(await ended(key)).toMatchObject({ status: 'completed' });
  });

  it('CONFIG pids = 64: at most 64 processes start', async () => {
    // Python forks without retrying (a shell retries for seconds, then gives up the script).
    const script = [
      "python3 - <<'PY'",
      'import os, time',
      'started = 0',
      'for _ in range(100):',
      '    try:',
      '        if os.fork() == 0:',
      '            time.sleep(30)',
      '            os._exit(0)',
      '        started += 1',
      '    except OSError:',
      '        break',
      "print('started=%d processes=%d' % (started, len([p for p in os.listdir('/proc') if p.isdigit()])), flush=True)",
      'PY',
    ].join('\n');
    const key = await c.createPod(script, runner.runnerId, 'CONFIG pids = 64');
    const pod = await ended(key);
    const output = await c.output(key);
    const counts = /started=(\d+) processes=(\d+)/.exec(output);
    expect(counts, `${JSON.stringify(pod)} ${output}`).not.toBeNull();
    expect(Number(counts![1])).toBeGreaterThan(10);
    expect(Number(counts![1])).toBeLessThan(64);
    expect(Number(counts![2])).toBeLessThanOrEqual(64);
    expect((await c.getPod(key)) as unknown).toMatchObject({ limits: { memory_mb: null, pids: 64, cpus: null, disk_mb: null } });
  });

  it('CONFIG memory_mb = 256 and a 768 MiB allocation: failed, naming the memory limit', async () => {
    const key = await c.createPod('python3 -c "b = b\'x\' * (768 << 20); print(len(b))"\necho survived', runner.runnerId, 'CONFIG memory_mb = 256');
    expect(await ended(key)).toMatchObject({ status: 'failed', error_message: 'memory limit (256 MiB) exceeded' });
    expect(await c.output(key)).not.toContain(String(768 << 20));
  });

  it('dd of 600 MiB into /tmp does not get past the memory limit', async () => {
    const script = 'dd if=/dev/zero of=/tmp/big bs=1M count=600 2>&1 | tail -1\necho "size=$(du -sm /tmp/big | cut -f1)"';
    const key = await c.createPod(script, runner.runnerId, 'CONFIG memory_mb = 256');
    const pod = await ended(key);
    const size = /size=(\d+)/.exec(await c.output(key));
    // Either /tmp was full at its size (within the limit) or the kernel ended the pod at its limit.
    if (size) expect(Number(size[1])).toBeLessThanOrEqual(256);
    else expect(pod).toMatchObject({ status: 'failed', error_message: 'memory limit (256 MiB) exceeded' });
  });

  it('CONFIG disk_mb = 40 and 240 MiB written: failed naming the disk limit within 10 s; the API answers and another pod completes meanwhile', async () => {
    const script = 'dd if=/dev/zero of=big bs=1M count=240 2>/dev/null\necho written\nsleep 120';
    const key = await c.createPod(script, runner.runnerId, 'CONFIG disk_mb = 40');
    const workspace = path.join(runner.workDir, 'pods', key, 'workspace');
    // Crossing: the first moment the workspace holds more than 40 MiB.
    const crossed = await waitFor(
      () => {
        try {
          return fs.statSync(path.join(workspace, 'big')).blocks * 512 > 40 * 1024 * 1024 ? Date.now() : undefined;
        } catch {
          return undefined;
        }
      },
      { what: 'the pod over 40 MiB', timeout: 30_000, interval: 20 },
    );
    const other = await c.createPod('echo other-pod-done', runner.runnerId);
    const pod = await ended(key, 20_000);
    const after = Date.now() - crossed;
    expect(pod).toMatchObject({ status: 'failed', error_message: 'disk limit (40 MiB) exceeded' });
    expect(after).toBeLessThan(10_000);
    expect(await ended(other)).toMatchObject({ status: 'completed' });
    expect(await c.output(other)).toContain('other-pod-done');
  });
});
