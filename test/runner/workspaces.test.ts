/**
 * WorkspaceManager against real git repositories in temp dirs: a bare "origin" with `main`
 * and `feature/x`, read as a local path, and over HTTP through `git http-backend` (run as CGI
 * by a tiny node:http server that demands the access token as Basic credentials).
 *
 * HOME points to an empty temp dir for the whole file, so the runner's git sees no global
 * configuration (and no identity: the workspaces must bring their own).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth, gitHttpServer } from '../helpers/git-http.ts';
import { WorkspaceError, WorkspaceManager, type RepoSource } from '../../src/runner/workspaces.ts';

const TOKEN = 'ghp-WorkspaceSecret-123xyz';
const EXPECTED_AUTH = basicAuth(TOKEN);

let tmp: string;
let srv: string; // directory served over HTTP
let origin: string; // bare origin repository
let seed: string; // a working clone used to push to origin
let savedEnv: Record<string, string | undefined>;
let counter = 0;
const servers: http.Server[] = [];
const seenAuth: (string | undefined)[] = [];
const seenUrls: string[] = [];

/** A git for the fixtures, independent of any configuration. */
function git(cwd: string, ...args: string[]): string {
  return execFileSync(
    'git',
    ['-c', 'user.name=Fixture', '-c', 'user.email=fixture@example.com', '-c', 'commit.gpgsign=false', '-c', 'init.defaultBranch=main', ...args],
    {
      cwd,
      stdio: 'pipe',
      encoding: 'utf8',
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: os.devNull, GIT_TERMINAL_PROMPT: '0' },
    },
  ).trim();
}

/** A git as an agent in a workspace would run it: plain environment, no identity of its own. */
function agentGit(cwd: string, ...args: string[]): string {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  return execFileSync('git', args, { cwd, stdio: 'pipe', encoding: 'utf8', env: { ...env, GIT_CONFIG_NOSYSTEM: '1' } }).trim();
}

function commitFile(file: string, content: string, message: string): void {
  fs.mkdirSync(path.dirname(path.join(seed, file)), { recursive: true });
  fs.writeFileSync(path.join(seed, file), content);
  git(seed, 'add', file);
  git(seed, 'commit', '-q', '-m', message);
}

const newWorkDir = (): string => fs.mkdtempSync(path.join(tmp, 'work-'));
const key = (prefix = 'pod'): string => `${prefix}-${++counter}`;
const repo = (url = origin, extra: Partial<RepoSource> = {}): RepoSource => ({ url, defaultBranch: 'main', ...extra });
const read = (dir: string, file: string): string => fs.readFileSync(path.join(dir, file), 'utf8');
const podDir = (workDir: string, podKey: string): string => path.join(workDir, 'pods', podKey);
const wsOf = (workDir: string, podKey: string) => ({ path: path.join(podDir(workDir, podKey), 'workspace'), home: path.join(podDir(workDir, podKey), 'home') });
/** The refs of every clone cache of a work dir: only origin's branches ever live there. */
const cacheRefs = (workDir: string): string[] => {
  const repos = path.join(workDir, 'repos');
  return fs
    .readdirSync(repos)
    .filter((n) => n.endsWith('.git'))
    .flatMap((n) => git(repos, `--git-dir=${path.join(repos, n)}`, 'for-each-ref', '--format=%(refname)').split('\n').filter((r) => r !== ''));
};
const cacheObjects = (workDir: string): string => {
  const [name] = fs.readdirSync(path.join(workDir, 'repos')).filter((n) => n.endsWith('.git'));
  return path.join(workDir, 'repos', name, 'objects');
};

async function workspaceError(p: Promise<unknown>): Promise<WorkspaceError> {
  const err: unknown = await p.then(
    () => {
      throw new Error('expected a WorkspaceError, got success');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkspaceError);
  return err as WorkspaceError;
}

async function listen(server: http.Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The repositories over HTTP; records what every request carried. */
function cgiServer(): http.Server {
  return gitHttpServer({
    root: () => srv,
    token: TOKEN,
    onRequest: (req) => {
      seenAuth.push(req.headers.authorization);
      seenUrls.push(req.url ?? '');
    },
  });
}

beforeAll(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'drover-workspaces-')));
  const home = path.join(tmp, 'home');
  fs.mkdirSync(home);
  savedEnv = { HOME: process.env.HOME, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME };
  process.env.HOME = home;
  process.env.XDG_CONFIG_HOME = path.join(home, '.config');

  srv = path.join(tmp, 'srv');
  origin = path.join(srv, 'app.git');
  seed = path.join(tmp, 'seed');
  fs.mkdirSync(srv);
  git(srv, 'init', '--bare', '-q', origin);
  git(tmp, 'init', '-q', seed);
  commitFile('README.md', 'hello from main\n', 'first');
  commitFile('src/app.txt', 'app v1\n', 'second');
  git(seed, 'checkout', '-q', '-b', 'feature/x');
  commitFile('feature.txt', 'feature x\n', 'feature');
  git(seed, 'checkout', '-q', 'main');
  git(seed, 'push', '-q', origin, 'main', 'feature/x');
});

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  for (const [k, v] of Object.entries(savedEnv)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  fs.rmSync(tmp, { recursive: true, force: true });
});

const SHA = /^[0-9a-f]{40}$/;
/** Where a checkout came from (for delivery): the commit checked out and the runner's clone cache under `workDir`. */
const originIn = (workDir: string) => ({ base: expect.stringMatching(SHA), cache: expect.stringContaining(path.join(workDir, 'repos')) });

describe('workspaces without a repository', () => {
  it('a pod gets an empty workspace and a HOME of its own under pods/<key>/, which release removes', async () => {
    const workDir = newWorkDir();
    const manager = new WorkspaceManager(workDir);
    const podKey = key();
    const ws = await manager.prepare({ podKey });
    expect(ws).toEqual({ ...wsOf(workDir, podKey), branch: null, reused: false, readOnly: [], origin: null });
    expect(fs.readdirSync(ws.path)).toEqual([]);
    expect(fs.readdirSync(ws.home)).toEqual([]);
    expect(fs.statSync(ws.home).mode & 0o777).toBe(0o700);
    fs.writeFileSync(path.join(ws.path, 'scratch.txt'), 'x');
    fs.writeFileSync(path.join(ws.home, '.history'), 'x');
    await manager.release(podKey, { keep: false });
    expect(fs.existsSync(podDir(workDir, podKey))).toBe(false);
  });

  it('each HOME starts as a copy of <work dir>/agent-home (symlinks kept as links); pods never share one', async () => {
    const workDir = newWorkDir();
    const template = path.join(workDir, 'agent-home');
    fs.mkdirSync(path.join(template, '.codex'), { recursive: true });
    fs.writeFileSync(path.join(template, '.codex', 'config.toml'), 'model_provider = "mock"\n');
    fs.symlinkSync('/etc/hostname', path.join(template, 'link'));
    const manager = new WorkspaceManager(workDir);
    const [a, b] = [await manager.prepare({ podKey: key() }), await manager.prepare({ podKey: key() })];
    for (const ws of [a, b]) {
      expect(read(ws.home, '.codex/config.toml')).toBe('model_provider = "mock"\n');
      expect(fs.readlinkSync(path.join(ws.home, 'link'))).toBe('/etc/hostname');
    }
    fs.writeFileSync(path.join(a.home, '.codex', 'session.jsonl'), 'a only');
    expect(fs.existsSync(path.join(b.home, '.codex', 'session.jsonl'))).toBe(false);
    expect(fs.existsSync(path.join(template, '.codex', 'session.jsonl'))).toBe(false);
  });

  it('a leftover directory of the same pod key is replaced by a fresh one', async () => {
    const workDir = newWorkDir();
    const podKey = key();
    fs.mkdirSync(path.join(workDir, 'pods', podKey, 'workspace'), { recursive: true });
    fs.writeFileSync(path.join(workDir, 'pods', podKey, 'workspace', 'old.txt'), 'old');
    const ws = await new WorkspaceManager(workDir).prepare({ podKey });
    expect(fs.readdirSync(ws.path)).toEqual([]);
  });
});

describe('workspaces on a repository', () => {
  it('without a branch: a checkout of its own on the default branch, borrowing the cache’s objects', async () => {
    const workDir = newWorkDir();
    const manager = new WorkspaceManager(workDir);
    const podKey = key();
    const ws = await manager.prepare({ podKey, repo: repo() });
    expect(ws).toEqual({ ...wsOf(workDir, podKey), branch: 'main', reused: false, readOnly: [cacheObjects(workDir)], origin: originIn(workDir) });
    expect(read(ws.path, 'README.md')).toBe('hello from main\n');
    expect(read(ws.path, 'src/app.txt')).toBe('app v1\n');
    expect(fs.existsSync(path.join(ws.path, 'feature.txt'))).toBe(false);
    // A repository of its own (not a worktree of the cache), on main, following origin/main.
    expect(fs.statSync(path.join(ws.path, '.git')).isDirectory()).toBe(true);
    expect(read(ws.path, '.git/objects/info/alternates')).toBe(`${cacheObjects(workDir)}\n`);
    expect(agentGit(ws.path, 'count-objects', '-v')).toMatch(/^count: 0$/m); // nothing copied
    expect(agentGit(ws.path, 'remote', 'get-url', 'origin')).toBe(origin);
    expect(agentGit(ws.path, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');
    expect(agentGit(ws.path, 'rev-parse', '--abbrev-ref', '@{upstream}')).toBe('origin/main');
    expect(agentGit(ws.path, 'rev-parse', 'HEAD')).toBe(git(seed, 'rev-parse', 'main'));
    expect(agentGit(ws.path, 'status', '--porcelain')).toBe('');
    const caches = fs.readdirSync(path.join(workDir, 'repos'));
    expect(caches).toHaveLength(1);
    expect(caches[0]).toMatch(/^[0-9a-f]{24}\.git$/);
    expect(agentGit(ws.path, 'branch', '-r').split('\n').map((b) => b.trim())).toEqual(['origin/feature/x', 'origin/main']);
  });

  it('on an existing branch: that branch’s files', async () => {
    const manager = new WorkspaceManager(newWorkDir());
    const ws = await manager.prepare({ podKey: key(), repo: repo(), branch: 'feature/x' });
    expect(ws.branch).toBe('feature/x');
    expect(read(ws.path, 'feature.txt')).toBe('feature x\n');
    expect(read(ws.path, 'README.md')).toBe('hello from main\n');
    expect(agentGit(ws.path, 'rev-parse', 'HEAD')).toBe(git(seed, 'rev-parse', 'feature/x'));
    expect(agentGit(ws.path, 'rev-parse', '--abbrev-ref', '@{upstream}')).toBe('origin/feature/x');
  });

  it('on a branch that does not exist yet: created from the default branch, pushed under its name', async () => {
    const workDir = newWorkDir();
    const manager = new WorkspaceManager(workDir);
    const podKey = key();
    const ws = await manager.prepare({ podKey, repo: repo(), branch: 'drover-new' });
    expect(ws.branch).toBe('drover-new');
    expect(read(ws.path, 'README.md')).toBe('hello from main\n');
    expect(fs.existsSync(path.join(ws.path, 'feature.txt'))).toBe(false);
    expect(agentGit(ws.path, 'rev-parse', 'HEAD')).toBe(git(seed, 'rev-parse', 'main'));
    expect(agentGit(ws.path, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('drover-new');
    expect(agentGit(ws.path, 'config', 'branch.drover-new.merge')).toBe('refs/heads/drover-new');

    // The agent commits (no identity of its own configured) and pushes: the branch appears on origin.
    fs.writeFileSync(path.join(ws.path, 'agent.txt'), 'agent work\n');
    agentGit(ws.path, 'add', 'agent.txt');
    agentGit(ws.path, 'commit', '-q', '-m', 'agent commit');
    agentGit(ws.path, 'push', '-q', 'origin', 'HEAD');
    expect(git(origin, 'rev-parse', 'refs/heads/drover-new')).toBe(agentGit(ws.path, 'rev-parse', 'HEAD'));
    expect(git(origin, 'log', '-1', '--format=%an <%ae>', 'drover-new')).toBe('Drover Agent <agent@drover.invalid>');
    git(origin, 'update-ref', '-d', 'refs/heads/drover-new');
    await manager.release(podKey, { keep: false });
  });

  it('two pods on the same branch at once: both prepared, independent working trees', async () => {
    const workDir = newWorkDir();
    const manager = new WorkspaceManager(workDir);
    const [a, b] = [key(), key()];
    const [wa, wb] = await Promise.all([
      manager.prepare({ podKey: a, repo: repo(), branch: 'feature/x' }),
      manager.prepare({ podKey: b, repo: repo(), branch: 'feature/x' }),
    ]);
    expect(wa.path).not.toBe(wb.path);
    expect(read(wa.path, 'feature.txt')).toBe('feature x\n');
    expect(read(wb.path, 'feature.txt')).toBe('feature x\n');

    fs.writeFileSync(path.join(wa.path, 'feature.txt'), 'changed by a\n');
    agentGit(wa.path, 'commit', '-q', '-am', 'work of a');
    expect(read(wb.path, 'feature.txt')).toBe('feature x\n');
    expect(agentGit(wb.path, 'rev-parse', 'HEAD')).toBe(git(seed, 'rev-parse', 'feature/x'));
    expect(agentGit(wb.path, 'status', '--porcelain')).toBe('');

    await manager.release(a, { keep: false });
    expect(read(wb.path, 'feature.txt')).toBe('feature x\n');
    await manager.release(b, { keep: false });
  });

  it('a commit pushed to origin is seen by the next prepare', async () => {
    const manager = new WorkspaceManager(newWorkDir());
    const first = await manager.prepare({ podKey: key(), repo: repo() });
    expect(fs.existsSync(path.join(first.path, 'news.txt'))).toBe(false);

    commitFile('news.txt', 'fresh news\n', 'news');
    git(seed, 'push', '-q', origin, 'main');

    const second = await manager.prepare({ podKey: key(), repo: repo() });
    expect(read(second.path, 'news.txt')).toBe('fresh news\n');
    expect(agentGit(second.path, 'rev-parse', 'HEAD')).toBe(git(seed, 'rev-parse', 'main'));
  });

  it('a branch deleted on origin is pruned from the cache, and then created afresh', async () => {
    const workDir = newWorkDir();
    const manager = new WorkspaceManager(workDir);
    git(seed, 'push', '-q', origin, 'feature/x:refs/heads/short-lived');
    const before = await manager.prepare({ podKey: key(), repo: repo(), branch: 'short-lived' });
    expect(read(before.path, 'feature.txt')).toBe('feature x\n');
    git(origin, 'update-ref', '-d', 'refs/heads/short-lived');
    const after = await manager.prepare({ podKey: key(), repo: repo(), branch: 'short-lived' });
    expect(fs.existsSync(path.join(after.path, 'feature.txt'))).toBe(false); // from main now
    expect(agentGit(after.path, 'branch', '-r')).not.toContain('short-lived');
  });

  it('release removes the workspace and HOME; keep: true keeps them; the cache only ever holds origin’s branches', async () => {
    const workDir = newWorkDir();
    const manager = new WorkspaceManager(workDir);
    const [gone, kept] = [key(), key()];
    const wg = await manager.prepare({ podKey: gone, repo: repo() });
    const wk = await manager.prepare({ podKey: kept, repo: repo() });
    fs.writeFileSync(path.join(wg.path, 'untracked.txt'), 'dirty');
    agentGit(wg.path, 'checkout', '-q', '-b', 'agent-branch');

    await manager.release(gone, { keep: false });
    expect(fs.existsSync(podDir(workDir, gone))).toBe(false);
    expect(cacheRefs(workDir).sort()).toEqual(['refs/remotes/origin/feature/x', 'refs/remotes/origin/main']);

    await manager.release(kept, { keep: true });
    expect(read(wk.path, 'README.md')).toBe('hello from main\n');

    // Releasing twice, or a pod that never had a workspace, is harmless.
    await manager.release(gone, { keep: false });
    await manager.release(key(), { keep: false });
  });

  it('what an agent does to its checkout’s configuration stays in its checkout', async () => {
    const workDir = newWorkDir();
    const manager = new WorkspaceManager(workDir);
    const first = await manager.prepare({ podKey: key(), repo: repo() });
    agentGit(first.path, 'config', 'remote.origin.url', 'http://127.0.0.1:9/evil.git');
    fs.appendFileSync(path.join(first.path, '.git', 'config'), '[url "http://127.0.0.1:9/"]\n\tinsteadOf = /\n');
    commitFile('after.txt', 'later\n', 'after');
    git(seed, 'push', '-q', origin, 'main');
    const second = await manager.prepare({ podKey: key(), repo: repo() });
    expect(read(second.path, 'after.txt')).toBe('later\n');
    expect(agentGit(second.path, 'remote', 'get-url', 'origin')).toBe(origin);
  });

  it('five pods preparing in parallel on one repository all succeed', async () => {
    const workDir = newWorkDir();
    const manager = new WorkspaceManager(workDir);
    const keys = Array.from({ length: 5 }, () => key());
    const all = await Promise.all(
      keys.map((podKey, i) => manager.prepare({ podKey, repo: repo(), branch: i % 2 === 0 ? 'main' : 'feature/x' })),
    );
    all.forEach((ws, i) => {
      expect(ws.path).toBe(wsOf(workDir, keys[i]).path);
      expect(read(ws.path, 'README.md')).toBe('hello from main\n');
      expect(fs.existsSync(path.join(ws.path, 'feature.txt'))).toBe(i % 2 === 1);
    });
    expect(fs.readdirSync(path.join(workDir, 'repos'))).toHaveLength(1);
    await Promise.all(keys.map((podKey) => manager.release(podKey, { keep: false })));
    expect(fs.readdirSync(path.join(workDir, 'pods'))).toEqual([]);
  });
});

describe('persistent workspaces', () => {
  it('every run with the same key reuses one workspace; release never removes it', async () => {
    const workDir = newWorkDir();
    const manager = new WorkspaceManager(workDir);
    const persistentKey = 'loop-42';
    const run1 = key('run');
    const w1 = await manager.prepare({ podKey: run1, repo: repo(), persistentKey });
    const dir = path.join(workDir, 'persistent', persistentKey);
    expect(w1).toEqual({ path: path.join(dir, 'workspace'), home: path.join(dir, 'home'), branch: 'main', reused: false, readOnly: [cacheObjects(workDir)], origin: originIn(workDir) });
    fs.writeFileSync(path.join(w1.home, 'session.json'), '{"id":"s-1"}');
    fs.writeFileSync(path.join(w1.path, 'notes.txt'), 'remember me\n');
    agentGit(w1.path, 'add', 'notes.txt');
    agentGit(w1.path, 'commit', '-q', '-m', 'notes');
    fs.writeFileSync(path.join(w1.path, 'untracked.txt'), 'also me\n');
    await manager.release(run1, { keep: false });

    const run2 = key('run');
    const w2 = await manager.prepare({ podKey: run2, repo: repo(), persistentKey });
    // A reused workspace's base is its HEAD when the run starts: the work of this run only.
    expect(w2).toEqual({ ...w1, reused: true, origin: { cache: w1.origin!.cache, base: expect.stringMatching(SHA) } });
    expect(w2.origin!.base).not.toBe(w1.origin!.base);
    expect(read(w2.path, 'notes.txt')).toBe('remember me\n');
    expect(read(w2.home, 'session.json')).toBe('{"id":"s-1"}');
    expect(read(w2.path, 'untracked.txt')).toBe('also me\n');
    await manager.release(run2, { keep: false });

    // A restart (new manager) and a sweep leave it alone too.
    const restarted = new WorkspaceManager(workDir);
    await restarted.sweep([]);
    const w3 = await restarted.prepare({ podKey: key('run'), repo: repo(), persistentKey });
    expect(w3.reused).toBe(true);
    expect(read(w3.path, 'notes.txt')).toBe('remember me\n');

    await restarted.removePersistent(persistentKey);
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('a reused checkout’s origin/* follows origin (the agent’s branch and work untouched)', async () => {
    const workDir = newWorkDir();
    const manager = new WorkspaceManager(workDir);
    const persistentKey = 'loop-follow';
    const w1 = await manager.prepare({ podKey: key('run'), repo: repo(), persistentKey });
    fs.writeFileSync(path.join(w1.path, 'mine.txt'), 'mine\n');
    agentGit(w1.path, 'add', 'mine.txt');
    agentGit(w1.path, 'commit', '-q', '-m', 'agent work');
    const agentHead = agentGit(w1.path, 'rev-parse', 'HEAD');
    git(seed, 'push', '-q', origin, 'feature/x:refs/heads/gone-soon');
    await manager.prepare({ podKey: key('run'), repo: repo(), persistentKey });
    expect(agentGit(w1.path, 'branch', '-r')).toContain('origin/gone-soon');

    commitFile('upstream.txt', 'upstream\n', 'upstream');
    git(seed, 'push', '-q', origin, 'main');
    git(origin, 'update-ref', '-d', 'refs/heads/gone-soon');
    const w3 = await manager.prepare({ podKey: key('run'), repo: repo(), persistentKey });
    expect(w3.reused).toBe(true);
    expect(agentGit(w3.path, 'rev-parse', 'origin/main')).toBe(git(seed, 'rev-parse', 'main'));
    expect(agentGit(w3.path, 'branch', '-r')).not.toContain('gone-soon');
    expect(agentGit(w3.path, 'rev-parse', 'HEAD')).toBe(agentHead);
    expect(fs.existsSync(path.join(w3.path, 'upstream.txt'))).toBe(false);
    agentGit(w3.path, 'merge', '-q', '--no-edit', 'origin/main');
    expect(read(w3.path, 'upstream.txt')).toBe('upstream\n');
  });

  it('without a repository too', async () => {
    const manager = new WorkspaceManager(newWorkDir());
    const w1 = await manager.prepare({ podKey: key(), persistentKey: 'loop-plain' });
    fs.writeFileSync(path.join(w1.path, 'state.json'), '{}');
    const w2 = await manager.prepare({ podKey: key(), persistentKey: 'loop-plain' });
    expect(w2).toEqual({ ...w1, reused: true });
    expect(read(w2.path, 'state.json')).toBe('{}');
  });

  it('a different branch or repository than before gives a fresh workspace', async () => {
    const manager = new WorkspaceManager(newWorkDir());
    const persistentKey = 'loop-switch';
    const w1 = await manager.prepare({ podKey: key(), repo: repo(), persistentKey });
    fs.writeFileSync(path.join(w1.path, 'mine.txt'), 'x');
    const w2 = await manager.prepare({ podKey: key(), repo: repo(), branch: 'feature/x', persistentKey });
    expect(w2).toEqual({ ...w1, branch: 'feature/x', reused: false, origin: { cache: w1.origin!.cache, base: expect.stringMatching(SHA) } });
    expect(w2.origin!.base).not.toBe(w1.origin!.base);
    expect(fs.existsSync(path.join(w2.path, 'mine.txt'))).toBe(false);
    expect(read(w2.path, 'feature.txt')).toBe('feature x\n');
    const w3 = await manager.prepare({ podKey: key(), persistentKey });
    expect(w3).toEqual({ ...w1, branch: null, reused: false, readOnly: [], origin: null });
    expect(fs.readdirSync(w3.path)).toEqual([]);
  });
});

describe('failures', () => {
  it('cloning a path that is not a repository fails clearly and leaves nothing behind', async () => {
    const workDir = newWorkDir();
    const manager = new WorkspaceManager(workDir);
    const podKey = key();
    const missing = path.join(tmp, 'no-such-repo.git');
    const err = await workspaceError(manager.prepare({ podKey, repo: repo(missing) }));
    expect(err.message).toBe(`cloning ${missing} failed: repository not found`);
    expect(fs.existsSync(path.join(workDir, 'pods', podKey))).toBe(false);
    expect(fs.readdirSync(path.join(workDir, 'repos'))).toEqual([]);
  });

  it('an unknown host fails clearly', async () => {
    const err = await workspaceError(
      new WorkspaceManager(newWorkDir()).prepare({ podKey: key(), repo: repo('https://nonexistent.invalid/x.git', { token: TOKEN }) }),
    );
    expect(err.message).toMatch(/^cloning https:\/\/nonexistent\.invalid\/x\.git failed: /);
    expect(err.message).not.toContain(TOKEN);
  });

  it('a missing default branch fails clearly', async () => {
    const manager = new WorkspaceManager(newWorkDir());
    const err = await workspaceError(manager.prepare({ podKey: key(), repo: repo(origin, { defaultBranch: 'trunk' }) }));
    expect(err.message).toBe(`default branch trunk not found in ${origin}`);
    const err2 = await workspaceError(
      manager.prepare({ podKey: key(), repo: repo(origin, { defaultBranch: 'trunk' }), branch: 'brand-new' }),
    );
    expect(err2.message).toBe(`branch brand-new not found in ${origin} and cannot be created: default branch trunk not found either`);
  });

  it('refuses path traversal and option injection, creating nothing', async () => {
    const workDir = newWorkDir();
    const manager = new WorkspaceManager(workDir);
    const marker = path.join(tmp, 'pwned');
    const refused = [
      { podKey: '../x' },
      { podKey: '..' },
      { podKey: 'a/b' },
      { podKey: 'UPPER' },
      { podKey: '-rf' },
      { podKey: '' },
      { podKey: 'x'.repeat(65) },
      { podKey: key(), persistentKey: '../../etc' },
      { podKey: key(), persistentKey: '.hidden' },
      { podKey: key(), repo: repo(`--upload-pack=touch ${marker}`) },
      { podKey: key(), repo: repo(`ext::sh -c touch% ${marker}`) },
      { podKey: key(), repo: repo('fd::3') },
      { podKey: key(), repo: repo('ftp://example.com/x.git') },
      { podKey: key(), repo: repo(`${origin}\n--upload-pack=x`) },
      { podKey: key(), repo: repo(), branch: '-b' },
      { podKey: key(), repo: repo(), branch: '--orphan' },
      { podKey: key(), repo: repo(), branch: '../../x' },
      { podKey: key(), repo: repo(), branch: 'a/../b' },
      { podKey: key(), repo: repo(), branch: 'feature..x' },
      { podKey: key(), repo: repo(), branch: '/abs' },
      { podKey: key(), repo: repo(), branch: 'x.lock' },
      { podKey: key(), repo: repo(), branch: 'a b' },
      { podKey: key(), repo: repo(), branch: 'HEAD' },
      { podKey: key(), repo: repo(), branch: 'x@{1}' },
      { podKey: key(), repo: repo(origin, { defaultBranch: '-main' }) },
    ];
    for (const request of refused) await workspaceError(manager.prepare(request));
    await workspaceError(manager.release('../x', { keep: false }));
    await workspaceError(manager.removePersistent('../../x'));
    expect(fs.existsSync(marker)).toBe(false);
    expect(fs.readdirSync(workDir)).toEqual([]);
  });

  it('a remote that does not answer times out, and the git process group is killed', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const silent = http.createServer(() => {}); // never answers
    silent.on('connection', (s) => sockets.add(s));
    const base = await listen(silent);
    const manager = new WorkspaceManager(newWorkDir(), { gitTimeoutMs: 1500 });
    const started = Date.now();
    const err = await workspaceError(manager.prepare({ podKey: key(), repo: repo(`${base}/slow.git`, { token: TOKEN }) }));
    expect(err.message).toBe(`cloning ${base}/slow.git failed: timed out after 1.5 s`);
    expect(Date.now() - started).toBeLessThan(10_000);
    // The killed git-remote-http closes its connection.
    await expect.poll(() => [...sockets].every((s) => s.destroyed || s.closed), { timeout: 5000 }).toBe(true);
  });
});

describe('repositories over HTTP with an access token', () => {
  let base: string;
  beforeAll(async () => {
    base = await listen(cgiServer());
  });

  it('clones with the token sent as a Basic Authorization header, never stored', async () => {
    const workDir = newWorkDir();
    const manager = new WorkspaceManager(workDir);
    seenAuth.length = 0;
    const ws = await manager.prepare({ podKey: key(), repo: repo(`${base}/app.git`, { token: TOKEN }), branch: 'feature/x' });
    expect(read(ws.path, 'feature.txt')).toBe('feature x\n');
    expect(seenAuth).toContain(EXPECTED_AUTH);
    // Nothing under the work dir holds the token.
    const grep = (dir: string): string[] =>
      fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) return grep(p);
        if (!e.isFile()) return [];
        const text = fs.readFileSync(p, 'latin1');
        return text.includes(TOKEN) || text.includes(EXPECTED_AUTH.slice(6)) ? [p] : [];
      });
    expect(grep(workDir)).toEqual([]);
  });

  it('pods preparing together share one fetch (same token); a later prepare fetches again', async () => {
    const manager = new WorkspaceManager(newWorkDir());
    const source = repo(`${base}/app.git`, { token: TOKEN });
    await manager.prepare({ podKey: key(), repo: source }); // the clone
    const adverts = (): number => seenUrls.filter((u) => u.includes('/info/refs')).length;
    seenUrls.length = 0;
    const all = await Promise.all(Array.from({ length: 5 }, () => manager.prepare({ podKey: key(), repo: source })));
    expect(all.every((ws) => read(ws.path, 'README.md') === 'hello from main\n')).toBe(true);
    expect(adverts()).toBeGreaterThanOrEqual(1);
    expect(adverts()).toBeLessThan(5);
    seenUrls.length = 0;
    await manager.prepare({ podKey: key(), repo: source });
    expect(adverts()).toBe(1);
  });

  it('a refused token fails clearly, without the token in the message', async () => {
    const wrong = 'ghp-WrongToken-000';
    const workDir = newWorkDir();
    seenAuth.length = 0;
    const err = await workspaceError(
      new WorkspaceManager(workDir).prepare({ podKey: key(), repo: repo(`${base}/app.git`, { token: wrong }) }),
    );
    expect(err.message).toBe(`cloning ${base}/app.git failed: authentication refused (check the repository access token)`);
    expect(err.message).not.toContain(wrong);
    expect(seenAuth).toContain(`Basic ${Buffer.from(`x-access-token:${wrong}`).toString('base64')}`);
  });

  it('credentials in the URL are masked in messages', async () => {
    const err = await workspaceError(
      new WorkspaceManager(newWorkDir()).prepare({
        podKey: key(),
        repo: repo(`${base.replace('http://', 'http://user:hunter2@')}/app.git`, { token: 'nope' }),
      }),
    );
    expect(err.message).not.toContain('hunter2');
    expect(err.message).toMatch(/^cloning http:\/\/\*\*\*@127\.0\.0\.1:\d+\/app\.git failed: /);
  });
});

describe('sweep after a restart', () => {
  it('removes pod directories that are not active and half-made clones, sparing persistent workspaces', async () => {
    const workDir = newWorkDir();
    const before = new WorkspaceManager(workDir);
    const [alive, dead1, dead2, plain] = [key(), key(), key(), key()];
    for (const podKey of [alive, dead1, dead2]) await before.prepare({ podKey, repo: repo() });
    await before.prepare({ podKey: plain });
    const persistent = await before.prepare({ podKey: key(), repo: repo(), persistentKey: 'loop-7' });
    const cacheName = fs.readdirSync(path.join(workDir, 'repos'))[0];
    fs.mkdirSync(path.join(workDir, 'repos', `${cacheName}.tmp-abcdef`));
    fs.mkdirSync(path.join(workDir, 'pods', 'not-a-pod-dir'));
    fs.mkdirSync(path.join(workDir, 'autopilot', 'p-old'), { recursive: true }); // an older runner's state

    const after = new WorkspaceManager(workDir); // the runner restarted
    await after.sweep([alive]);

    expect(fs.readdirSync(path.join(workDir, 'pods'))).toEqual([alive]);
    expect(fs.readdirSync(path.join(workDir, 'repos'))).toEqual([cacheName]);
    expect(fs.existsSync(persistent.path)).toBe(true);
    expect(fs.existsSync(path.join(workDir, 'autopilot'))).toBe(false);

    // The survivor still works, and is released normally.
    expect(read(wsOf(workDir, alive).path, 'README.md')).toBe('hello from main\n');
    await after.release(alive, { keep: false });
    expect(fs.readdirSync(path.join(workDir, 'pods'))).toEqual([]);
  });

  it('spares pods this instance holds, and works on an empty work dir', async () => {
    const workDir = newWorkDir();
    const manager = new WorkspaceManager(workDir);
    await manager.sweep([]);
    const podKey = key();
    const ws = await manager.prepare({ podKey, repo: repo() });
    await manager.sweep([]);
    expect(fs.existsSync(ws.path)).toBe(true);
    expect(fs.existsSync(ws.home)).toBe(true);
  });
});
