/**
 * How a runner sandboxes its pods (docs/runners.md "What an agent can and cannot see", "Identity", "The runner record"), with
 * REAL processes on every database: the default `bwrap`; `--sandbox none`, which works, warns
 * and shows on the runner record; a runner whose bubblewrap is missing or broken, which refuses
 * to start and names the fix; and an agent that refuses to run as root (Claude Code skipping its
 * permission prompts: the stand-in `claude` behaves alike), which completes in the sandbox of a
 * runner started as root.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { ORG, podClient, shellLayer } from '../helpers/pod-client.ts';
import { runnerPath, standInBinDir, startRunnerProcess, tempDir, waitFor, type RunnerProcess } from '../helpers/runner-process.ts';
import { createProcessTestDatabase, runDrover, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

const ADMIN_TOKEN = 'drvadm_sandbox_modes_admin_token_0123456789abcd';
const AS_ROOT = process.getuid?.() === 0;

interface RunnerJson {
  sandbox: string | null;
  agents: { slug: string; version: string | null }[];
}

describe.each(DATABASES)('sandbox modes of a runner (%s)', (kind) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let scratch: string;
  let binDir: string;
  let apiKey: string;
  const runners: RunnerProcess[] = [];
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

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    scratch = tempDir('modes');
    binDir = standInBinDir(['claude']);
    server = await startServerProcess({ dataDir: database.dataDir, env: { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_LOG_LEVEL: 'warn' } });
    apiKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
  });

  afterAll(async () => {
    for (const r of runners) await r.stop();
    await server?.stop();
    await database?.cleanup();
    for (const dir of [scratch, binDir]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('bwrap by default: on the record, with the agents found and their versions; claude-code completes although the runner runs as root', async () => {
    const sandboxed = await runner('default');
    const shown = await record(sandboxed.runnerId);
    expect(shown.sandbox).toBe('bwrap');
    expect(shown.agents.map((a) => a.slug)).toEqual(['claude-code', 'shell']);
    expect(shown.agents.find((a) => a.slug === 'shell')!.version).toMatch(/^\d+\.\d+/);
    expect(sandboxed.stderr).not.toMatch(/warning/i);

    const key = await c.launch({ agent_slug: 'claude-code', agentfile_layer: 'PROMPT "fix the bug"', runner_id: sandboxed.runnerId });
    const pod = await c.waitStatus(key, ['completed', 'failed']);
    expect(pod, await c.output(key)).toMatchObject({ status: 'completed', exit_code: 0 });
  });

  it('--sandbox none: works, warns at start, and shows on the record', async () => {
    const plain = await runner('plain', 'none');
    expect((await record(plain.runnerId)).sandbox).toBe('none');
    expect(plain.stderr).toMatch(/warning: --sandbox none: agents run as this user/);
    const key = await c.launch({ agent_slug: 'shell', agentfile_layer: shellLayer('echo "uid=$(id -u) home=$HOME"'), runner_id: plain.runnerId });
    expect(await c.waitStatus(key, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    expect(await c.output(key)).toBe(`uid=${process.getuid?.()} home=${path.join(plain.workDir, 'pods', key, 'home')}\n`);
  });

  it.runIf(AS_ROOT)('without the sandbox, a runner started as root cannot run claude-code (what the sandbox fixes)', async () => {
    const plain = await runner('plain-root', 'none');
    const key = await c.launch({ agent_slug: 'claude-code', agentfile_layer: 'PROMPT "fix the bug"', runner_id: plain.runnerId });
    const pod = await c.waitStatus(key, ['completed', 'failed']);
    expect(pod).toMatchObject({ status: 'failed', exit_code: 1 });
    expect(await c.output(key)).toContain('cannot be used with root/sudo privileges');
  });

  it('a runner whose bubblewrap is missing exits at start, naming the fix', async () => {
    const result = await runDrover(['runner', '--server', server.url, '--token', await c.registrationToken(), '--work-dir', path.join(scratch, 'no-bwrap')], {
      env: { PATH: runnerPath(), HOME: scratch, DROVER_BWRAP: path.join(scratch, 'no-such-bwrap') },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('apt-get install bubblewrap');
    expect(result.stderr).toContain('--sandbox none');
    // It did not register: nothing of it reached the server.
    expect(fs.existsSync(path.join(scratch, 'no-bwrap', 'runner.json'))).toBe(false);
  });

  it('a runner whose bubblewrap does not work exits at start with bwrap’s reason and the fix', async () => {
    const broken = path.join(scratch, 'broken-bwrap');
    fs.writeFileSync(broken, '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n', { mode: 0o755 });
    const result = await runDrover(['runner', '--server', server.url, '--token', await c.registrationToken(), '--work-dir', path.join(scratch, 'broken')], {
      env: { PATH: runnerPath(), HOME: scratch, DROVER_BWRAP: broken },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('No permissions to create new namespace');
    expect(result.stderr).toContain('--sandbox none');
  });

  it('--sandbox takes bwrap or none only', async () => {
    const result = await runDrover(['runner', '--server', server.url, '--sandbox', 'docker', '--work-dir', path.join(scratch, 'bad')], { env: { PATH: runnerPath(), HOME: scratch } });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('--sandbox must be one of bwrap, none, got "docker"');
  });

  it('the local runner follows DROVER_LOCAL_RUNNER_SANDBOX', async () => {
    const db = await createProcessTestDatabase('sqlite');
    const local = await startServerProcess({ dataDir: db.dataDir, localRunner: true, env: { ...db.env, DROVER_LOCAL_RUNNER_SANDBOX: 'none', DROVER_LOG_LEVEL: 'warn' } });
    try {
      const key = fs.readFileSync(path.join(db.dataDir, 'bootstrap-api-key'), 'utf8').trim();
      const lc = podClient(
        () => local.url,
        () => key,
        '',
      );
      const runnersList = await waitFor(
        async () => {
          const list = ((await lc.api('GET', `${ORG}/runners`)).body as { runners: RunnerJson[] }).runners;
          return list.length > 0 && list[0].sandbox !== null ? list : undefined;
        },
        { what: 'the local runner connected' },
      );
      expect(runnersList[0].sandbox).toBe('none');
      expect(local.stdout + local.stderr).toMatch(/warning: --sandbox none/);
    } finally {
      await local.stop();
      await db.cleanup();
    }
    const bad = await runDrover(['serve', '--port', '0', '--data-dir', path.join(scratch, 'bad-serve')], { env: { PATH: runnerPath(), HOME: scratch, DROVER_LOCAL_RUNNER_SANDBOX: 'off' } });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('DROVER_LOCAL_RUNNER_SANDBOX must be one of bwrap, none, got "off"');
  });
});
