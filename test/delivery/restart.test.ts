/**
 * A pod's work survives its runner's crash (docs/agents.md "Getting the work back") with REAL
 * processes on every database: the pod ends while the server is stopped, so its outcome (with the
 * patch, large enough to travel in `pod_patch` parts) is not acknowledged; the runner is SIGKILLed;
 * server and runner start again, and the work is recorded and `GET /pods/:key/patch` returns it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from '../helpers/databases.ts';
import { fixtureGit } from '../helpers/git-fixture.ts';
import { ORG, podClient } from '../helpers/pod-client.ts';
import { runnerPath, startRunnerProcess, waitFor, type RunnerProcess } from '../helpers/runner-process.ts';
import { startSandboxFixture, type SandboxFixture } from '../helpers/sandbox-fixture.ts';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

const ADMIN_TOKEN = 'drvadm_delivery_restart_admin_token_0123456789ab';

describe.each(DATABASES)('unacknowledged work survives a runner restart (%s)', (kind) => {
  let fixture: SandboxFixture;
  // The processes of the moment: the test replaces the fixture's with restarted ones.
  let server: ServerProcess;
  let runner: RunnerProcess;
  let scratch: string;
  let apiKey: string;
  let repo: { bare: string; work: string };
  const c = podClient(
    () => server.url,
    () => apiKey,
    ADMIN_TOKEN,
  );

  beforeAll(async () => {
    fixture = await startSandboxFixture({
      kind,
      adminToken: ADMIN_TOKEN,
      name: 'delivery-restart',
      runnerName: 'restart',
      repository: { name: 'shop', fullName: 'acme/shop', files: { 'README.md': 'shop\n' } },
    });
    ({ server, runner, scratch, apiKey, repo } = fixture);
  }, 240_000);

  afterAll(async () => {
    await runner?.stop();
    await server?.stop();
    await fixture?.stop();
  });

  it('a pod ending while the server is down, its runner SIGKILLed before any acknowledgement: after both restart, the delivery is recorded and /patch returns the work', async () => {
    // ~380 Ki characters of patch: more than one part (PATCH_PART_CHARS).
    const script = [
      "awk 'BEGIN { for (i = 0; i < 6000; i++) printf \"line %05d of the work done before the crash, padded to 64 chars.\\n\", i }' > work.txt",
      'git add work.txt && git commit -qm "Work before the crash"',
      'echo committed',
      // Ends once the test says so (the file is in .git: not part of the work).
      'while [ ! -e .git/go ]; do sleep 0.05; done',
    ].join('\n');
    const key = await c.createPod(script, runner.runnerId, 'REPO shop');
    await waitFor(async () => ((await c.output(key)).includes('committed\n') ? true : undefined), { timeout: 60_000, what: 'the pod committed' });

    await server.stop();
    const unacked = path.join(runner.workDir, 'unacked');
    fs.writeFileSync(path.join(runner.workDir, 'pods', key, 'workspace', '.git', 'go'), '');
    // The pod ended and was delivered (pushed: the repository is a local path), unacknowledged: kept on disk, private.
    const file = await waitFor(() => (fs.existsSync(unacked) ? fs.readdirSync(unacked).find((name) => name.endsWith('.json')) : undefined), {
      timeout: 60_000,
      what: 'the unacknowledged outcome kept on disk',
    });
    expect(fs.statSync(path.join(unacked, file)).mode & 0o777).toBe(0o600);
    expect(fs.statSync(unacked).mode & 0o777).toBe(0o700);
    await runner.kill9();

    server = await startServerProcess({ dataDir: fixture.database.dataDir, timeoutMs: 90_000, env: { ...fixture.database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_LOG_LEVEL: 'warn' } });
    runner = await startRunnerProcess({ server: server.url, workDir: runner.workDir, env: { PATH: runnerPath(), HOME: scratch, LANG: 'C.UTF-8' }, timeoutMs: 90_000 });
    const pod = await waitFor(
      async () => {
        const got = (await c.getPod(key)) as unknown as { status: string; delivery: { status: string; branch: string | null; head_commit: string | null } | null };
        return got.delivery && got.delivery.status !== 'pending' ? got : undefined;
      },
      { timeout: 60_000, what: `pod ${key}'s delivery recorded after the restart` },
    );
    expect(pod.status).toBe('completed');
    expect(pod.delivery).toMatchObject({ status: 'pushed', branch: `drover/${key}` });
    expect(fixtureGit(scratch, `--git-dir=${repo.bare}`, 'rev-parse', `drover/${key}`)).toBe(pod.delivery!.head_commit);
    const patch = await waitFor(
      async () => {
        const got = await c.api('GET', `${ORG}/pods/${key}/patch`);
        return got.status === 200 ? got : undefined;
      },
      { timeout: 30_000, what: `pod ${key}'s patch` },
    );
    expect(patch.text).toContain('Subject: [PATCH] Work before the crash');
    expect(patch.text).toContain('+line 00000 of the work done before the crash');
    expect(patch.text).toContain('+line 05999 of the work done before the crash');
    // Acknowledged: no longer kept.
    await waitFor(() => fs.readdirSync(unacked).length === 0, { timeout: 30_000, what: 'the acknowledged outcome removed from disk' });
  }, 300_000);
});
