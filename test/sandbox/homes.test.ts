/**
 * Pods' HOMEs and workspaces in the sandbox (docs/runners.md "HOME", "Git"), with REAL processes on
 * every database: each pod's HOME starts as a copy of the runner's `<work dir>/agent-home/`; a
 * fresh pod's HOME goes with its workspace; the runs of a persistent loop share one workspace and
 * one HOME on their runner (so agent sessions resume), which other pods never see; a reused
 * checkout's origin/* follows origin, refreshed from inside the sandbox.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from '../helpers/databases.ts';
import { fixtureGit } from '../helpers/git-fixture.ts';
import { ORG, podClient } from '../helpers/pod-client.ts';
import { waitFor, type RunnerProcess } from '../helpers/runner-process.ts';
import { startSandboxFixture, type SandboxFixture } from '../helpers/sandbox-fixture.ts';
import type { ServerProcess } from '../helpers/server-process.ts';

const ADMIN_TOKEN = 'drvadm_sandbox_homes_admin_token_0123456789abcd';

interface Run {
  id: number;
  status: string;
  pod_key: string | null;
}

describe.each(DATABASES)('HOMEs and persistent sandboxes (%s)', (kind) => {
  let server: ServerProcess;
  let runner: RunnerProcess;
  let apiKey: string;
  let repo: { bare: string; work: string };
  let repositoryId: number;
  const c = podClient(
    () => server.url,
    () => apiKey,
    ADMIN_TOKEN,
  );

  async function runLoop(slug: string): Promise<{ run: Run; output: string }> {
    const triggered = await c.api('POST', `${ORG}/loops/${slug}/trigger`, {});
    expect(triggered.status, triggered.text).toBe(201);
    const id = (triggered.body as { run: Run }).run.id;
    const run = await waitFor(
      async () => {
        const got = ((await c.api('GET', `${ORG}/loops/${slug}/runs/${id}`)).body as { run: Run }).run;
        return ['completed', 'failed'].includes(got.status) ? got : undefined;
      },
      { timeout: 20_000, what: `run ${id} of ${slug} to end` },
    );
    return { run, output: await c.output(run.pod_key!) };
  }

  let fixture: SandboxFixture | undefined;
  beforeAll(async () => {
    fixture = await startSandboxFixture({
      kind,
      adminToken: ADMIN_TOKEN,
      name: 'homes',
      runnerName: 'homes',
      serverEnv: { DROVER_SWEEP_INTERVAL_MS: '200' },
      // The operator's template of every HOME: agent configuration, and a git identity.
      prepareWorkDir(workDir) {
        fs.mkdirSync(path.join(workDir, 'agent-home', '.config', 'tool'), { recursive: true });
        fs.writeFileSync(path.join(workDir, 'agent-home', '.config', 'tool', 'settings.json'), '{"from":"template"}\n');
        fs.writeFileSync(path.join(workDir, 'agent-home', '.gitconfig'), '[user]\n\tname = Template Agent\n\temail = template@example.com\n');
      },
      repository: { name: 'homes', fullName: 'local/homes', files: { README: 'v1\n' } },
    });
    ({ server, runner, apiKey, repo, repositoryId } = fixture);
  }, 240_000);

  afterAll(async () => fixture?.stop());

  it('a fresh pod’s HOME is a copy of agent-home, its own, and removed with its workspace', async () => {
    const script = [
      'echo "home=$HOME"',
      'cat "$HOME/.config/tool/settings.json"',
      'echo mine > "$HOME/.config/tool/state"',
      'echo "template-writable=$( (echo x > ' + path.join(runner.workDir, 'agent-home', 'x') + ') 2>/dev/null && echo yes || echo no)"',
    ].join('\n');
    const key = await c.createPod(script, runner.runnerId);
    expect(await c.waitStatus(key, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    const text = await c.output(key);
    const home = path.join(runner.workDir, 'pods', key, 'home');
    expect(text).toContain(`home=${home}\n`);
    expect(text).toContain('{"from":"template"}\n');
    expect(text).toContain('template-writable=no\n');
    expect(fs.existsSync(path.join(runner.workDir, 'agent-home', '.config', 'tool', 'state'))).toBe(false);
    await waitFor(() => !fs.existsSync(path.join(runner.workDir, 'pods', key)), { what: 'the pod’s workspace and HOME to be removed' });
  });

  it('a persistent loop keeps one workspace and one HOME across runs; other pods never see them; its checkout follows origin', async () => {
    const script = [
      'echo "home=$HOME workspace=$DROVER_WORKSPACE"',
      'echo "session=$(cat "$HOME/session" 2>/dev/null || echo none)"',
      'echo "run-{{n}}" > "$HOME/session"',
      'echo "origin-readme=$(git show origin/main:README)"',
      'echo "work-{{n}}" >> notes.txt && git add notes.txt && git commit -qm "run {{n}}" && echo "author=$(git log -1 --format=%ae)"',
    ].join('\n');
    const created = await c.api('POST', `${ORG}/loops`, {
      name: 'Persistent homes',
      slug: `persistent-homes-${kind}`,
      agent_slug: 'shell',
      execution_mode: 'direct',
      sandbox_strategy: 'persistent',
      repository_id: repositoryId,
      runner_id: runner.runnerId,
      prompt_template: script,
      prompt_variables: { n: '1' },
    });
    expect(created.status, created.text).toBe(201);
    const loop = (created.body as { loop: { id: number; slug: string } }).loop;

    const first = await runLoop(loop.slug);
    expect(first.run.status, first.output).toBe('completed');
    expect(first.output).toContain('session=none\n');
    expect(first.output).toContain('origin-readme=v1\n');
    expect(first.output).toContain('author=template@example.com\n'); // the template's identity, not Drover's default
    const dir = path.join(runner.workDir, 'persistent', `loop-${loop.id}`);
    expect(first.output).toContain(`home=${path.join(dir, 'home')} workspace=${path.join(dir, 'workspace')}\n`);

    // origin moves on between the runs.
    fs.writeFileSync(path.join(repo.work, 'README'), 'v2\n');
    fixtureGit(repo.work, 'commit', '-qam', 'v2');
    fixtureGit(repo.work, 'push', '--quiet', repo.bare, 'main');

    const second = await runLoop(loop.slug);
    expect(second.run.status, second.output).toBe('completed');
    expect(second.output).toContain('session=run-1\n');
    expect(second.output).toContain('origin-readme=v2\n'); // refreshed from inside the sandbox
    expect(fs.readFileSync(path.join(dir, 'workspace', 'notes.txt'), 'utf8')).toBe('work-1\nwork-1\n');

    // Another pod on the same runner sees neither.
    const snoop = await c.createPod(`cat "${path.join(dir, 'home', 'session')}" && echo LEAK-home; cat "${path.join(dir, 'workspace', 'notes.txt')}" && echo LEAK-workspace; echo snooped`, runner.runnerId);
    expect(await c.waitStatus(snoop, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    const snooped = await c.output(snoop);
    expect(snooped).toContain('snooped');
    expect(snooped).not.toContain('LEAK');
    expect(fs.readFileSync(path.join(dir, 'home', 'session'), 'utf8')).toBe('run-1\n');
  });
});
