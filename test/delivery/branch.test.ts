/**
 * Delivering the work (docs/agents.md "Getting the work back") with REAL processes on every
 * database: a server, a runner with its bwrap sandbox, `shell` pods on a bare repository
 * registered by its local path, and real git. What is pushed is read from the bare repository.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from '../helpers/databases.ts';
import { fixtureGit } from '../helpers/git-fixture.ts';
import { ORG, podClient } from '../helpers/pod-client.ts';
import { waitFor, type RunnerProcess } from '../helpers/runner-process.ts';
import { startSandboxFixture, type SandboxFixture } from '../helpers/sandbox-fixture.ts';
import { runDrover, type ServerProcess } from '../helpers/server-process.ts';

const ADMIN_TOKEN = 'drvadm_delivery_branch_admin_token_0123456789abc';

interface Delivery {
  status: string;
  branch: string | null;
  base_commit: string | null;
  head_commit: string | null;
  commits: { sha: string; subject: string }[];
  files_changed: number;
  insertions: number;
  deletions: number;
  merge_request: unknown;
  error: string | null;
}

describe.each(DATABASES)('delivering a pod’s work to a local repository (%s)', (kind) => {
  let server: ServerProcess;
  let runner: RunnerProcess;
  let scratch: string;
  let apiKey: string;
  let repo: { bare: string; work: string };
  let base: string;
  const c = podClient(
    () => server.url,
    () => apiKey,
    ADMIN_TOKEN,
  );
  const git = (...args: string[]) => fixtureGit(scratch, `--git-dir=${repo.bare}`, ...args);
  const settled = async (key: string): Promise<{ status: string; delivery: Delivery | null; error_message: string | null }> =>
    waitFor(
      async () => {
        const pod = (await c.getPod(key)) as unknown as { status: string; delivery: Delivery | null; error_message: string | null };
        return ['completed', 'failed', 'terminated'].includes(pod.status) && pod.delivery?.status !== 'pending' ? pod : undefined;
      },
      { timeout: 60_000, what: `pod ${key} ended and its work delivered` },
    );

  let fixture: SandboxFixture | undefined;
  beforeAll(async () => {
    fixture = await startSandboxFixture({
      kind,
      adminToken: ADMIN_TOKEN,
      name: 'delivery-branch',
      runnerName: 'deliver',
      repository: {
        name: 'shop',
        fullName: 'acme/shop',
        files: { 'README.md': 'shop\n', 'src/discount.js': 'module.exports = (p) => p;\n', '.gitignore': 'node_modules/\n' },
        token: 'unused-for-a-path',
      },
    });
    ({ server, runner, scratch, apiKey, repo } = fixture);
    base = git('rev-parse', 'main');
  }, 240_000);

  afterAll(async () => fixture?.stop());

  it('own branch + uncommitted work: both commits on that branch, the delivery lists them with the diff stat, /patch returns them', async () => {
    const script = [
      'git checkout -q -b fix/discount-percent',
      "printf 'module.exports = (p, pct) => p * (1 - pct / 100);\\n' > src/discount.js",
      'git commit -qam "Fix the discount percentage"',
      "printf 'notes\\n' > NOTES.md", // untracked, not ignored: delivered
      'mkdir -p node_modules && echo junk > node_modules/x.js', // ignored: not delivered
      "printf 'shop, fixed\\n' > README.md", // tracked change, uncommitted
    ].join('\n');
    const key = await c.createPod(script, runner.runnerId, 'REPO shop');
    const pod = await settled(key);
    expect(pod.status, pod.error_message ?? '').toBe('completed');
    const d = pod.delivery!;
    expect(d).toMatchObject({ status: 'pushed', branch: 'fix/discount-percent', base_commit: base, error: null, merge_request: null });
    expect(d.commits.map((x) => x.subject)).toEqual(['Fix the discount percentage', `Uncommitted changes of pod ${key}`]);
    expect(d).toMatchObject({ files_changed: 3, insertions: 3, deletions: 2 });
    // The bare repository has the branch with both commits; main is untouched.
    expect(git('rev-parse', 'fix/discount-percent')).toBe(d.head_commit);
    expect(git('log', '--format=%s', 'main..fix/discount-percent').split('\n')).toEqual([`Uncommitted changes of pod ${key}`, 'Fix the discount percentage']);
    expect(git('rev-parse', 'main')).toBe(base);
    expect(git('ls-tree', '-r', '--name-only', 'fix/discount-percent').split('\n').sort()).toEqual(['.gitignore', 'NOTES.md', 'README.md', 'src/discount.js']);

    // The CLI's `pods get` shows it: branch, head, diff stat, commits.
    const shown = await runDrover(['pods', 'get', key], { env: { HOME: scratch, XDG_CONFIG_HOME: path.join(scratch, 'xdg'), DROVER_API_URL: server.url, DROVER_ORG: 'default', DROVER_API_KEY: apiKey } });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`pushed → fix/discount-percent @ ${d.head_commit!.slice(0, 12)}`);
    expect(shown.stdout).toContain('3 files changed, +3 -2');
    expect(shown.stdout).toContain(`${d.commits[0].sha.slice(0, 12)} Fix the discount percentage`);

    const patch = await c.api('GET', `${ORG}/pods/${key}/patch`);
    expect(patch.status).toBe(200);
    expect(patch.headers.get('content-type')).toMatch(/^text\/x-patch/);
    expect(patch.text).toContain('Subject: [PATCH 1/2] Fix the discount percentage');
    expect(patch.text).toContain(`Subject: [PATCH 2/2] Uncommitted changes of pod ${key}`);
    expect(patch.text).toContain('+notes');
    // The patch applies to the base commit and gives the same tree.
    const apply = path.join(scratch, 'apply');
    fixtureGit(scratch, 'clone', '-q', repo.bare, apply);
    fs.writeFileSync(path.join(scratch, 'work.patch'), patch.text);
    fixtureGit(apply, 'am', '-q', path.join(scratch, 'work.patch'));
    expect(fixtureGit(apply, 'rev-parse', 'HEAD^{tree}')).toBe(git('rev-parse', 'fix/discount-percent^{tree}'));
  });

  it('work on the base branch goes to drover/<key>; no changes is no_changes; deliver none pushes nothing; a failed pod still delivers', async () => {
    const onMain = await c.createPod('echo change >> README.md', runner.runnerId, 'REPO shop');
    const noChanges = await c.createPod('cat README.md', runner.runnerId, 'REPO shop');
    const none = await c.createPod('echo change >> README.md\ngit checkout -q -b kept-local', runner.runnerId, 'REPO shop', 'CONFIG deliver = none');
    const failing = await c.createPod('echo half-done > half.txt\nexit 3', runner.runnerId, 'REPO shop', 'CONFIG deliver_branch = wip/failing');

    const a = await settled(onMain);
    expect(a.delivery).toMatchObject({ status: 'pushed', branch: `drover/${onMain}`, files_changed: 1, insertions: 1, deletions: 0 });
    expect(git('log', '--format=%s', `main..drover/${onMain}`)).toBe(`Uncommitted changes of pod ${onMain}`);
    expect(git('rev-parse', 'main')).toBe(base);

    const b = await settled(noChanges);
    expect(b.delivery).toMatchObject({ status: 'no_changes', commits: [], base_commit: base, head_commit: base });
    expect((await c.api('GET', `${ORG}/pods/${noChanges}/patch`)).status).toBe(404);

    const n = await settled(none);
    expect(n.status).toBe('completed');
    expect(n.delivery).toBeNull();
    expect(git('branch', '--list', 'kept-local')).toBe('');

    const f = await settled(failing);
    expect(f.status).toBe('failed');
    expect(f.delivery).toMatchObject({ status: 'pushed', branch: 'wip/failing', files_changed: 1 });
    expect(git('show', 'wip/failing:half.txt')).toBe('half-done');
  });

  it('a push that would overwrite commits the pod did not make fails, and the patch is kept', async () => {
    // Someone else's branch with a commit of its own.
    fixtureGit(repo.work, 'checkout', '-q', '-b', 'taken');
    fs.writeFileSync(path.join(repo.work, 'theirs.txt'), 'theirs\n');
    fixtureGit(repo.work, 'add', 'theirs.txt');
    fixtureGit(repo.work, 'commit', '-qm', 'their work');
    fixtureGit(repo.work, 'push', '-q', repo.bare, 'taken');
    const theirs = git('rev-parse', 'taken');
    const key = await c.createPod('echo mine > mine.txt', runner.runnerId, 'REPO shop', 'CONFIG deliver_branch = taken');
    const pod = await settled(key);
    expect(pod.delivery).toMatchObject({ status: 'failed', branch: 'taken', files_changed: 1 });
    expect(pod.delivery!.error).toMatch(/commits the pod did not make/);
    expect(git('rev-parse', 'taken')).toBe(theirs);
    const patch = await c.api('GET', `${ORG}/pods/${key}/patch`);
    expect(patch.status).toBe(200);
    expect(patch.text).toContain('+mine');
  });

  it('a terminated pod delivers what it had done', async () => {
    const key = await c.createPod('echo started > started.txt\ngit add started.txt\ngit commit -qm "started"\necho committed\nsleep 600', runner.runnerId, 'REPO shop');
    await waitFor(async () => ((await c.output(key)).includes('committed\n') ? true : undefined), { what: 'the pod committed' });
    const stopped = await c.api('POST', `${ORG}/pods/${key}/terminate`);
    expect(stopped.status, stopped.text).toBe(200);
    const pod = await settled(key);
    expect(pod.status).toBe('terminated');
    expect(pod.delivery).toMatchObject({ status: 'pushed', branch: `drover/${key}` });
    expect(git('show', `drover/${key}:started.txt`)).toBe('started');
  });

  it('hooks, a clean filter in .gitattributes and core.fsmonitor written by the pod never run on the runner', async () => {
    const markers = path.join(scratch, 'markers');
    fs.mkdirSync(markers, { recursive: true });
    const mark = (name: string) => `echo ran > ${path.join(markers, name)}; touch /tmp/drover-delivery-${name}`;
    const script = [
      `printf '#!/bin/sh\n${mark('hook')}\n' > .git/hooks/pre-commit`,
      `cp .git/hooks/pre-commit .git/hooks/post-commit && cp .git/hooks/pre-commit .git/hooks/reference-transaction && chmod +x .git/hooks/*`,
      `git config filter.evil.clean 'sh -c "${mark('filter')}; cat"'`,
      `git config core.fsmonitor '${path.join(markers, 'fsmonitor.sh')}'`,
      `printf '#!/bin/sh\n${mark('fsmonitor')}\n' > ${path.join(markers, 'fsmonitor.sh')} 2>/dev/null || true`,
      "echo '*.txt filter=evil' > .gitattributes",
      'echo secret-work > work.txt',
    ].join('\n');
    // The marker directory exists only on the host: the pod cannot even write its fsmonitor program there.
    fs.writeFileSync(path.join(markers, 'fsmonitor.sh'), `#!/bin/sh\n${mark('fsmonitor')}\n`, { mode: 0o755 });
    const key = await c.createPod(script, runner.runnerId, 'REPO shop');
    const pod = await settled(key);
    expect(pod.delivery, JSON.stringify(pod)).toMatchObject({ status: 'pushed', branch: `drover/${key}` });
    expect(git('show', `drover/${key}:work.txt`)).toBe('secret-work');
    // Nothing ran on the host: no marker in the host directory, none in the host's /tmp.
    expect(fs.readdirSync(markers)).toEqual(['fsmonitor.sh']);
    for (const name of ['hook', 'filter', 'fsmonitor']) expect(fs.existsSync(`/tmp/drover-delivery-${name}`)).toBe(false);
  });

  it('a patch over 1 MiB (more than one runner-link message carries) is kept whole: GET /patch returns all of it', async () => {
    // 1.5 MiB of text lines: the patch travels in pod_patch parts before the pod's end report.
    const script = "awk 'BEGIN { for (i = 0; i < 24000; i++) printf \"line %06d of the large change, padded to sixty-four characters.\\n\", i }' > large.txt";
    const key = await c.createPod(script, runner.runnerId, 'REPO shop');
    const pod = await settled(key);
    expect(pod.delivery, JSON.stringify(pod)).toMatchObject({ status: 'pushed', branch: `drover/${key}`, files_changed: 1, insertions: 24000 });
    const patch = await c.api('GET', `${ORG}/pods/${key}/patch`);
    expect(patch.status).toBe(200);
    expect(patch.text.length).toBeGreaterThan(1024 * 1024);
    expect(patch.text).toContain('+line 000000 of the large change');
    expect(patch.text).toContain('+line 023999 of the large change');
    // The whole patch: applied to the base, it gives the pushed tree.
    const apply = path.join(scratch, `apply-${key}`);
    fixtureGit(scratch, 'clone', '-q', repo.bare, apply);
    fs.writeFileSync(path.join(scratch, 'large.patch'), patch.text);
    fixtureGit(apply, 'am', '-q', path.join(scratch, 'large.patch'));
    expect(fixtureGit(apply, 'rev-parse', 'HEAD^{tree}')).toBe(git('rev-parse', `drover/${key}^{tree}`));
  });

  it('CONFIG deliver checks: merge_request on a plain git repository, deliver_branch = the base branch, deliver without REPO are 400', async () => {
    for (const lines of [['REPO shop', 'CONFIG deliver = merge_request'], ['REPO shop', 'CONFIG deliver_branch = main'], ['CONFIG deliver = branch'], ['REPO shop', 'CONFIG deliver = later']]) {
      const response = await c.api('POST', `${ORG}/pods`, { agent_slug: 'shell', agentfile_layer: [...lines, 'PROMPT "true"'].join('\n') });
      expect(response.status, lines.join(' / ')).toBe(400);
      expect((response.body as { code: string }).code).toBe('VALIDATION_FAILED');
    }
  });
});
