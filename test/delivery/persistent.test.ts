/**
 * Persistent loops and their work (docs/agents.md "Getting the work back") with REAL processes on
 * every database: a server, a runner with its bwrap sandbox, a bare repository registered by its
 * local path. Each run delivers only its new commits, on the loop's branch; a deleted loop's
 * workspace is removed by its runner once its work is delivered, also when the runner was offline
 * at the deletion.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from '../helpers/databases.ts';
import { fixtureGit } from '../helpers/git-fixture.ts';
import { ORG, podClient } from '../helpers/pod-client.ts';
import { runnerPath, startRunnerProcess, waitFor, type RunnerProcess } from '../helpers/runner-process.ts';
import { startSandboxFixture, type SandboxFixture } from '../helpers/sandbox-fixture.ts';
import type { ServerProcess } from '../helpers/server-process.ts';

const ADMIN_TOKEN = 'drvadm_delivery_persistent_admin_token_012345';

interface Run {
  id: number;
  status: string;
  pod_key: string | null;
  delivery: { status: string; branch: string | null; commits: { subject: string }[]; base_commit: string | null; head_commit: string | null } | null;
}

describe.each(DATABASES)('persistent loops deliver their work, and their workspaces go with them (%s)', (kind) => {
  let server: ServerProcess;
  let runner: RunnerProcess;
  let scratch: string;
  let apiKey: string;
  let repo: { bare: string; work: string };
  let repositoryId: number;
  const c = podClient(
    () => server.url,
    () => apiKey,
    ADMIN_TOKEN,
  );
  const git = (...args: string[]) => fixtureGit(scratch, `--git-dir=${repo.bare}`, ...args);
  const runnerEnv = () => ({ PATH: runnerPath(), HOME: scratch, LANG: 'C.UTF-8' });

  async function createLoop(slug: string, script: string): Promise<number> {
    const created = await c.api('POST', `${ORG}/loops`, {
      name: slug,
      slug,
      agent_slug: 'shell',
      execution_mode: 'direct',
      sandbox_strategy: 'persistent',
      repository_id: repositoryId,
      runner_id: runner.runnerId,
      prompt_template: script,
      prompt_variables: { n: '0' },
    });
    expect(created.status, created.text).toBe(201);
    return (created.body as { loop: { id: number } }).loop.id;
  }

  async function runLoop(slug: string, n: number): Promise<Run> {
    const triggered = await c.api('POST', `${ORG}/loops/${slug}/trigger`, { variables: { n: String(n) } });
    expect(triggered.status, triggered.text).toBe(201);
    const id = (triggered.body as { run: Run }).run.id;
    return waitFor(
      async () => {
        const got = ((await c.api('GET', `${ORG}/loops/${slug}/runs/${id}`)).body as { run: Run }).run;
        return ['completed', 'failed'].includes(got.status) && got.delivery?.status !== 'pending' ? got : undefined;
      },
      { timeout: 60_000, what: `run ${id} of ${slug} to end with its work delivered` },
    );
  }

  let fixture: SandboxFixture | undefined;
  beforeAll(async () => {
    fixture = await startSandboxFixture({
      kind,
      adminToken: ADMIN_TOKEN,
      name: 'delivery-persistent',
      runnerName: 'persistent',
      repository: { name: 'notes', fullName: 'local/notes', files: { 'README.md': 'notes\n' } },
    });
    ({ server, runner, scratch, apiKey, repo, repositoryId } = fixture);
  }, 240_000);

  afterAll(async () => fixture?.stop());

  it('each run delivers only its new commits, on the loop’s branch; deleting the loop delivers what is left, then its runner removes the workspace', async () => {
    const slug = `notes-${kind}`;
    const loopId = await createLoop(slug, 'echo "note {{n}}" >> notes.txt && git add notes.txt && git commit -qm "note {{n}}"');
    const branch = `drover/loop-${loopId}`;
    const first = await runLoop(slug, 1);
    expect(first.status).toBe('completed');
    expect(first.delivery).toMatchObject({ status: 'pushed', branch });
    expect(first.delivery!.commits.map((x) => x.subject)).toEqual(['note 1']);
    const second = await runLoop(slug, 2);
    expect(second.status).toBe('completed');
    expect(second.delivery).toMatchObject({ status: 'pushed', branch, base_commit: first.delivery!.head_commit });
    expect(second.delivery!.commits.map((x) => x.subject)).toEqual(['note 2']);
    // The loop's branch holds both runs' commits, in order; main is untouched.
    expect(git('log', '--format=%s', `main..${branch}`).split('\n')).toEqual(['note 2', 'note 1']);
    expect(git('rev-parse', branch)).toBe(second.delivery!.head_commit);

    // Work left in the workspace after the last delivery (as a failed push would leave it).
    const dir = path.join(runner.workDir, 'persistent', `loop-${loopId}`);
    fs.writeFileSync(path.join(dir, 'workspace', 'left.txt'), 'left behind\n');
    // A link out of the workspace root: removed itself, never followed.
    const outside = path.join(scratch, 'outside');
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, 'keep.txt'), 'keep\n');
    fs.symlinkSync(outside, path.join(dir, 'workspace', 'link-out'));
    const deleted = await c.api('DELETE', `${ORG}/loops/${slug}`);
    expect(deleted.status, deleted.text).toBe(200);
    await waitFor(() => !fs.existsSync(dir), { timeout: 30_000, what: 'the deleted loop’s workspace to be removed by its runner' });
    expect(git('log', '-1', '--format=%s', branch)).toBe(`Uncommitted changes of pod loop-${loopId}`);
    expect(git('show', `${branch}:left.txt`)).toBe('left behind');
    expect(git('log', '--format=%s', `main..${branch}~1`).split('\n')).toEqual(['note 2', 'note 1']);
    expect(fs.readFileSync(path.join(outside, 'keep.txt'), 'utf8')).toBe('keep\n');
  });

  it('a loop deleted while its runner is offline: the runner removes the workspace when it is back', async () => {
    const slug = `offline-${kind}`;
    const loopId = await createLoop(slug, 'echo "line {{n}}" >> offline.txt');
    const run = await runLoop(slug, 1);
    expect(run.delivery).toMatchObject({ status: 'pushed', branch: `drover/loop-${loopId}` });
    const dir = path.join(runner.workDir, 'persistent', `loop-${loopId}`);
    expect(fs.existsSync(dir)).toBe(true);
    await runner.stop();
    await waitFor(async () => (await c.runnerStatus(runner.runnerId)) === 'offline', { what: 'the runner offline' });
    const deleted = await c.api('DELETE', `${ORG}/loops/${slug}`);
    expect(deleted.status, deleted.text).toBe(200);
    expect(fs.existsSync(dir)).toBe(true);
    runner = await startRunnerProcess({ server: server.url, workDir: runner.workDir, env: runnerEnv(), timeoutMs: 90_000 });
    await waitFor(() => !fs.existsSync(dir), { timeout: 30_000, what: 'the workspace removed after the runner reconnected' });
    expect(await c.runnerStatus(runner.runnerId)).toBe('online');
  }, 240_000);
});
