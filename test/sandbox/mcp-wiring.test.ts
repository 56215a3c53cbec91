/**
 * What a pod plants where the runner merges agent configuration (docs/runners.md "What the runner
 * touches in a pod"), end to end: `drover serve` and a real `drover runner` with the default
 * sandbox (bwrap), stand-in `gemini` and `opencode` programs on the runner's PATH, autopilot pods
 * of two iterations. In iteration 1, inside the sandbox, the agent replaces the configuration the
 * runner wrote in its HOME (~/.gemini/settings.json, ~/.config/opencode/opencode.json) with a
 * symlink to a host path that does not exist, a symlink to a root-only host file, a FIFO, or a
 * link to /dev/zero; before iteration 2 the runner merges that configuration again. Nothing is
 * created or changed on the host, each pod completes without the drover MCP server (saying why),
 * and the runner stays online and runs the next pod. Every database.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { podClient } from '../helpers/pod-client.ts';
import { STAND_IN_AGENT, runnerPath, startRunnerProcess, tempDir, waitFor, type RunnerProcess } from '../helpers/runner-process.ts';
import { createProcessTestDatabase, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

const ADMIN_TOKEN = 'drvadm_sandbox_mcp_wiring_admin_token_0123456789';
const CONFIG_FILES = { 'gemini-cli': '.gemini/settings.json', opencode: '.config/opencode/opencode.json' } as const;
const PROGRAMS = { 'gemini-cli': 'gemini', opencode: 'opencode' } as const;
const HAZARDS = ['missing', 'root-only', 'fifo', 'dev-zero'] as const;

/**
 * The stand-in under the agent's program name, behind a wrapper that plants `$PLANT` at
 * `$HOME/$PLANT_FILE` in the first iteration (inside the sandbox, as the agent), then runs it.
 */
function agentBin(dir: string): void {
  fs.mkdirSync(path.join(dir, 'stand-in'), { recursive: true });
  for (const program of Object.values(PROGRAMS)) {
    const real = path.join(dir, 'stand-in', program);
    fs.copyFileSync(STAND_IN_AGENT, real);
    fs.chmodSync(real, 0o755);
    const wrapper = [
      '#!/bin/sh',
      'if [ "${DROVER_ITERATION:-1}" = 1 ] && [ -n "$PLANT" ]; then',
      '  f="$HOME/$PLANT_FILE"',
      '  mkdir -p "$(dirname "$f")" && rm -f "$f"',
      '  case "$PLANT" in',
      '    fifo) mkfifo "$f" ;;',
      '    *) ln -s "$PLANT_TARGET" "$f" ;;',
      '  esac',
      'fi',
      `exec '${real}' "$@"`,
    ].join('\n');
    fs.writeFileSync(path.join(dir, program), `${wrapper}\n`, { mode: 0o755 });
  }
}

describe.each(DATABASES)('agent configuration planted by a pod, end to end (%s)', (kind) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let runner: RunnerProcess;
  let scratch: string;
  let outside: string;
  let secret: string;
  let apiKey: string;
  const c = podClient(
    () => server.url,
    () => apiKey,
    ADMIN_TOKEN,
  );

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    scratch = tempDir('mcp-wiring');
    // Outside /tmp: the pod has a /tmp of its own, the runner's view is the host's.
    outside = fs.mkdtempSync(path.join('/var/tmp', 'drover-mcp-wiring-outside-'));
    secret = path.join(outside, 'root-only.json');
    fs.writeFileSync(secret, '{"secret": "root only"}\n', { mode: 0o600 });
    const bin = path.join(scratch, 'bin');
    agentBin(bin);
    // Generous start-up times: the machines this runs on are shared and often loaded.
    server = await startServerProcess({ dataDir: database.dataDir, env: { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_LOG_LEVEL: 'warn' }, timeoutMs: 90_000 });
    apiKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    const workDir = path.join(scratch, 'runner');
    fs.mkdirSync(workDir, { recursive: true, mode: 0o700 });
    runner = await startRunnerProcess({
      server: server.url,
      token: await c.registrationToken(),
      workDir,
      name: 'mcp-wiring',
      maxPods: 4,
      timeoutMs: 90_000,
      env: { PATH: runnerPath(bin), HOME: scratch, LANG: 'C.UTF-8', DROVER_RUNNER_HEARTBEAT_MS: '500' },
    });
    await waitFor(async () => (await c.runnerStatus(runner.runnerId)) === 'online', { what: 'the runner online', timeout: 60_000 });
  }, 240_000);

  afterAll(async () => {
    await runner?.stop();
    await server?.stop();
    await database?.cleanup();
    for (const dir of [scratch, outside]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const hostSide = () => ({
    files: fs.readdirSync(outside).sort(),
    secret: fs.readFileSync(secret, 'utf8'),
    mode: fs.statSync(secret).mode & 0o777,
  });

  it('a symlink (to a missing path, to a root-only file), a FIFO, a link to /dev/zero: nothing on the host changes; the pods complete; the runner runs the next pod', async () => {
    const before = hostSide();
    const pods: { key: string; slug: keyof typeof CONFIG_FILES; hazard: (typeof HAZARDS)[number] }[] = [];
    for (const slug of Object.keys(CONFIG_FILES) as (keyof typeof CONFIG_FILES)[]) {
      for (const hazard of HAZARDS) {
        const target = { missing: path.join(outside, `created-by-${slug}.json`), 'root-only': secret, fifo: '', 'dev-zero': '/dev/zero' }[hazard];
        const layer = [
          'MODE autopilot',
          `ENV PLANT "${hazard}"`,
          `ENV PLANT_FILE "${CONFIG_FILES[slug]}"`,
          `ENV PLANT_TARGET "${target}"`,
          'PROMPT "plant and go on STAND_IN_DONE_AT=2"',
        ].join('\n');
        pods.push({ key: await c.launch({ agent_slug: slug, agentfile_layer: layer, runner_id: runner.runnerId }), slug, hazard });
      }
    }
    for (const pod of pods) {
      const ended = await c.waitStatus(pod.key, ['completed', 'failed', 'terminated'], 180_000);
      const output = await c.output(pod.key);
      expect(ended, `${pod.slug} ${pod.hazard}: ${output.slice(-2000)}`).toMatchObject({ status: 'completed' });
      // Iteration 2 ran without the drover MCP server, and the pod's output says why.
      expect(output, `${pod.slug} ${pod.hazard}`).toMatch(/so the drover MCP server was not added to it/);
    }
    expect(hostSide()).toEqual(before);
    expect(fs.existsSync(path.join(outside, 'created-by-gemini-cli.json'))).toBe(false);
    expect(fs.existsSync(path.join(outside, 'created-by-opencode.json'))).toBe(false);

    expect(await c.runnerStatus(runner.runnerId)).toBe('online');
    const next = await c.createPod('echo next-pod-ran', runner.runnerId);
    expect(await c.waitStatus(next, ['completed', 'failed', 'terminated'], 60_000)).toMatchObject({ status: 'completed' });
    expect(await c.output(next)).toContain('next-pod-ran');
  }, 300_000);
});
