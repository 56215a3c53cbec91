/**
 * Pod workspaces on a runner (contract §3 sandbox_strategy, §4 pods).
 *
 * Layout under the runner's work dir:
 *
 *   repos/<sha256(url)[0:24]>.git   bare clone cache, one per repository URL; origin's branches
 *                                   are fetched into refs/remotes/origin/* before every prepare
 *   pods/<podKey>/                  a pod's workspace: a git worktree of the cache, or an empty
 *                                   directory when the pod has no repository
 *   persistent/<key>/               a workspace kept across pods (persistent sandbox of a loop)
 *
 * Branches. A branch can be checked out in only one worktree at a time, and several pods may
 * work on the same branch at once, so every workspace gets its own local branch:
 * `drover/pod/<podKey>` (or `drover/persistent/<key>`), started at `origin/<BRANCH>` — or at
 * `origin/<default branch>` when BRANCH does not exist on the remote yet (it is created there
 * when the agent pushes). The local branch's upstream is `origin/<BRANCH>` and the cache sets
 * `push.default=upstream`, so inside the workspace `git pull` / `git push` work against BRANCH.
 * The agent sees BRANCH's files, can commit, and `origin/*` shows the remote's branches.
 * origin's branches live only under refs/remotes/origin/*, so `fetch --prune` never touches the
 * workspaces' local branches and never trips over a checked-out branch.
 *
 * The cache's git operations are serialized per cache by an in-process mutex; operations on
 * one workspace (pod key or persistent key) by another. Lock order: workspace, then cache.
 * Fetches are coalesced: a prepare waiting for the cache skips its own fetch when a fetch with
 * the same token succeeded after it asked.
 *
 * Tokens are only ever passed to git through the environment (see ./workspace/git.ts); they are
 * never written to disk (the cache's remote URL is stored as given), and error messages are
 * scrubbed.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { WorkspaceError } from './workspace/errors.ts';
import {
  branchNameProblem,
  displayUrl,
  gitFailureReason,
  repoUrlProblem,
  runGit,
  workspaceGitEnv,
  type GitResult,
} from './workspace/git.ts';
import { KeyedMutex } from './workspace/mutex.ts';

export { WorkspaceError } from './workspace/errors.ts';

export interface RepoSource {
  url: string;
  token?: string | null;
  defaultBranch: string;
}

export interface WorkspaceRequest {
  podKey: string;
  repo?: RepoSource | null;
  branch?: string | null;
  /** persistent sandbox: reuse the workspace named by this key (e.g. `loop-<id>`) */
  persistentKey?: string | null;
}

export interface PreparedWorkspace {
  /** Absolute path of the workspace directory. */
  path: string;
  /** The remote branch the workspace follows (BRANCH, or the default branch); null without a repository. */
  branch: string | null;
  /** True when an existing persistent workspace was reused. */
  reused: boolean;
}

export interface WorkspaceManagerOptions {
  /** Budget of each git command (clone, fetch, worktree add …). Default 10 minutes. */
  gitTimeoutMs?: number;
}

const KEY_RE = /^[a-z0-9][a-z0-9-]{0,63}$/;
const CACHE_RE = /^[0-9a-f]{24}\.git$/;
const CACHE_TMP_RE = /^([0-9a-f]{24}\.git)\.tmp-[0-9a-f]+$/;
const FETCH_REFSPEC = '+refs/heads/*:refs/remotes/origin/*';
const POD_BRANCH_PREFIX = 'drover/pod/';
const PERSISTENT_BRANCH_PREFIX = 'drover/persistent/';
const DEFAULT_GIT_TIMEOUT_MS = 10 * 60_000;

interface Repo {
  url: string;
  token: string;
  defaultBranch: string;
  cache: string;
}

interface Target {
  kind: 'pod' | 'persistent';
  key: string;
  dir: string;
  localBranch: string;
}

interface CacheState {
  /** Fetches started so far. */
  started: number;
  /** The last successful fetch: its start index and the token (hashed) it used. */
  lastOk: { index: number; tokenHash: string } | null;
}

export class WorkspaceManager {
  readonly workDir: string;
  private readonly reposDir: string;
  private readonly podsDir: string;
  private readonly persistentDir: string;
  private readonly gitTimeoutMs: number;
  private readonly cacheLocks = new KeyedMutex();
  private readonly workspaceLocks = new KeyedMutex();
  private readonly caches = new Map<string, CacheState>();
  /** Pods being prepared or prepared and not yet released by this instance → their cache (null: none). */
  private readonly held = new Map<string, string | null>();

  constructor(workDir: string, options: WorkspaceManagerOptions = {}) {
    this.workDir = path.resolve(workDir);
    this.reposDir = path.join(this.workDir, 'repos');
    this.podsDir = path.join(this.workDir, 'pods');
    this.persistentDir = path.join(this.workDir, 'persistent');
    this.gitTimeoutMs = options.gitTimeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  }

  /**
   * Makes the workspace of a pod: a fresh one under pods/<podKey>, or with `persistentKey` the
   * persistent one, reused when it exists and was made for the same repository and branch
   * (otherwise it is replaced by a fresh one). Throws WorkspaceError with a user-facing message.
   */
  async prepare(request: WorkspaceRequest): Promise<PreparedWorkspace> {
    const podKey = checkKey(request.podKey, 'pod key');
    const persistentKey = request.persistentKey == null ? null : checkKey(request.persistentKey, 'persistent workspace key');
    const repo = request.repo ? this.checkRepo(request.repo) : null;
    let branch: string | null = null;
    if (repo) {
      branch = request.branch == null || request.branch === '' ? repo.defaultBranch : request.branch;
      const problem = branchNameProblem(branch);
      if (problem) throw new WorkspaceError(problem);
    }
    const target: Target = persistentKey
      ? {
          kind: 'persistent',
          key: persistentKey,
          dir: path.join(this.persistentDir, persistentKey),
          localBranch: PERSISTENT_BRANCH_PREFIX + persistentKey,
        }
      : { kind: 'pod', key: podKey, dir: path.join(this.podsDir, podKey), localBranch: POD_BRANCH_PREFIX + podKey };

    if (target.kind === 'pod') this.held.set(podKey, repo?.cache ?? null);
    try {
      return await this.workspaceLocks.run(lockName(target), () => this.prepareLocked(target, repo, branch));
    } catch (err) {
      if (target.kind === 'pod') this.held.delete(podKey);
      throw err;
    }
  }

  /**
   * The pod ended: removes pods/<podKey> (and its worktree registration and local branch)
   * unless `keep`. Persistent workspaces are never removed here (see removePersistent).
   */
  async release(podKey: string, options: { keep: boolean }): Promise<void> {
    const key = checkKey(podKey, 'pod key');
    const knownCache = this.held.get(key) ?? null;
    this.held.delete(key);
    if (options.keep) return;
    const target: Target = { kind: 'pod', key, dir: path.join(this.podsDir, key), localBranch: POD_BRANCH_PREFIX + key };
    await this.workspaceLocks.run(lockName(target), async () => {
      if (this.held.has(key)) return; // prepared again meanwhile
      await this.removeWorkspace(target, knownCache);
    });
  }

  /** Removes a persistent workspace (e.g. its loop was deleted or no longer persistent). */
  async removePersistent(persistentKey: string): Promise<void> {
    const key = checkKey(persistentKey, 'persistent workspace key');
    const target: Target = {
      kind: 'persistent',
      key,
      dir: path.join(this.persistentDir, key),
      localBranch: PERSISTENT_BRANCH_PREFIX + key,
    };
    await this.workspaceLocks.run(lockName(target), () => this.removeWorkspace(target, null));
  }

  /**
   * After a restart: removes pod workspaces whose key is not in `activePodKeys` (left over by a
   * crash), half-made clone caches, stale worktree registrations and the local branches of pods
   * that are gone. Pods this instance is preparing or holds are spared too. Persistent
   * workspaces are left alone.
   */
  async sweep(activePodKeys: Iterable<string>): Promise<void> {
    const active = new Set(activePodKeys);
    const keep = (key: string): boolean => active.has(key) || this.held.has(key);

    for (const name of await listDir(this.podsDir)) {
      if (keep(name)) continue;
      const dir = path.join(this.podsDir, name);
      await this.workspaceLocks.run(`pods/${name}`, async () => {
        if (keep(name)) return;
        await removeTree(dir);
      });
    }

    const entries = await listDir(this.reposDir);
    const caches = new Set<string>();
    for (const name of entries) {
      const tmp = CACHE_TMP_RE.exec(name);
      if (tmp) caches.add(tmp[1]);
      else if (CACHE_RE.test(name)) caches.add(name);
    }
    for (const name of caches) {
      const cache = path.join(this.reposDir, name);
      await this.cacheLocks.run(cache, async () => {
        // No clone of this cache is running (they run under this lock): its temp dirs are debris.
        for (const entry of entries) {
          if (CACHE_TMP_RE.exec(entry)?.[1] === name) await removeTree(path.join(this.reposDir, entry));
        }
        if (!(await exists(path.join(cache, 'HEAD')))) return;
        const env = workspaceGitEnv('', '');
        await this.git(cache, ['worktree', 'prune'], env);
        const refs = await this.git(cache, ['for-each-ref', '--format=%(refname)', 'refs/heads/drover/'], env);
        if (refs.code !== 0) return;
        const stale: string[] = [];
        for (const ref of refs.stdout.split('\n')) {
          const branch = ref.trim().replace(/^refs\/heads\//, '');
          if (branch.startsWith(POD_BRANCH_PREFIX)) {
            if (!keep(branch.slice(POD_BRANCH_PREFIX.length))) stale.push(branch);
          } else if (branch.startsWith(PERSISTENT_BRANCH_PREFIX)) {
            // Its workspace is gone (e.g. a crash during removePersistent): after the prune above
            // the branch is no longer checked out anywhere.
            const key = branch.slice(PERSISTENT_BRANCH_PREFIX.length);
            if (KEY_RE.test(key) && !(await exists(path.join(this.persistentDir, key)))) stale.push(branch);
          }
        }
        // One at a time: a branch still checked out somewhere is refused and must not stop the others.
        for (const branch of stale) await this.git(cache, ['branch', '-D', branch], env);
      });
    }
  }

  // ---------------------------------------------------------------------------------------

  private checkRepo(source: RepoSource): Repo {
    const url = (source.url ?? '').trim();
    const problem = repoUrlProblem(url);
    if (problem) throw new WorkspaceError(problem);
    const defaultBranch = (source.defaultBranch ?? '').trim();
    const branchProblem = branchNameProblem(defaultBranch);
    if (branchProblem) throw new WorkspaceError(`default ${branchProblem}`);
    const hash = createHash('sha256').update(url).digest('hex').slice(0, 24);
    return { url, token: source.token ?? '', defaultBranch, cache: path.join(this.reposDir, `${hash}.git`) };
  }

  private async prepareLocked(target: Target, repo: Repo | null, branch: string | null): Promise<PreparedWorkspace> {
    // The common case first: a new, empty workspace where nothing stands yet (one system call).
    if (!repo && (await makeNewDir(target.dir))) return { path: target.dir, branch: null, reused: false };
    await fs.mkdir(path.dirname(target.dir), { recursive: true });

    if (target.kind === 'persistent' && (await exists(target.dir))) {
      const reused = await this.tryReuse(target, repo, branch);
      if (reused) return reused;
    }
    // A fresh workspace; whatever is there is debris (a crash) or an incompatible persistent one.
    await this.removeWorkspace(target, null);

    if (!repo) {
      await fs.mkdir(target.dir, { recursive: true });
      return { path: target.dir, branch: null, reused: false };
    }
    const targetBranch = branch ?? repo.defaultBranch;
    try {
      const askedAt = this.cacheState(repo.cache).started;
      await this.cacheLocks.run(repo.cache, () => this.addWorktree(target, repo, targetBranch, askedAt));
    } catch (err) {
      await this.removeWorkspace(target, repo.cache).catch(() => undefined);
      throw err;
    }
    return { path: target.dir, branch: targetBranch, reused: false };
  }

  /** Reuses an existing persistent workspace made for the same repository and branch; null otherwise. */
  private async tryReuse(target: Target, repo: Repo | null, branch: string | null): Promise<PreparedWorkspace | null> {
    const cache = await this.cacheOf(target.dir);
    if (!repo) {
      // Made without a repository (a `.git` the agent created itself is not ours): reuse.
      return cache === null && (await isDirectory(target.dir)) ? { path: target.dir, branch: null, reused: true } : null;
    }
    if (cache !== repo.cache) return null;
    const targetBranch = branch ?? repo.defaultBranch;
    const askedAt = this.cacheState(repo.cache).started;
    return this.cacheLocks.run(repo.cache, async () => {
      const env = workspaceGitEnv(repo.url, '');
      const merge = await this.git(repo.cache, ['config', '--get', `branch.${target.localBranch}.merge`], env);
      if (merge.code !== 0 || merge.stdout.trim() !== `refs/heads/${targetBranch}`) return null;
      // The agent's work stays as it is; the fetch refreshes origin/* (and checks access).
      await this.fetch(repo, repo.cache, false, askedAt);
      return { path: target.dir, branch: targetBranch, reused: true };
    });
  }

  /** Under the cache lock: clone or fetch, then add the worktree on its own local branch. */
  private async addWorktree(target: Target, repo: Repo, branch: string, askedAt: number): Promise<void> {
    if (await exists(path.join(repo.cache, 'HEAD'))) await this.fetch(repo, repo.cache, false, askedAt);
    else await this.clone(repo);

    const env = workspaceGitEnv(repo.url, '');
    let start = await this.resolveCommit(repo.cache, branch, env);
    if (start === null) {
      const where = displayUrl(repo.url, repo.token);
      if (branch === repo.defaultBranch) throw new WorkspaceError(`default branch ${branch} not found in ${where}`);
      start = await this.resolveCommit(repo.cache, repo.defaultBranch, env);
      if (start === null) {
        throw new WorkspaceError(
          `branch ${branch} not found in ${where} and cannot be created: default branch ${repo.defaultBranch} not found either`,
        );
      }
    }

    await this.git(repo.cache, ['worktree', 'prune'], env);
    const add = await this.git(
      repo.cache,
      ['worktree', 'add', '--quiet', '--no-track', '-B', target.localBranch, target.dir, start],
      env,
    );
    if (add.code !== 0) {
      throw new WorkspaceError(`creating the workspace failed: ${gitFailureReason(add, repo.token, this.gitTimeoutMs)}`);
    }
    for (const [key, value] of [
      [`branch.${target.localBranch}.remote`, 'origin'],
      [`branch.${target.localBranch}.merge`, `refs/heads/${branch}`],
    ]) {
      const set = await this.git(repo.cache, ['config', key, value], env);
      if (set.code !== 0) {
        throw new WorkspaceError(`creating the workspace failed: ${gitFailureReason(set, repo.token, this.gitTimeoutMs)}`);
      }
    }
  }

  /** First use of a repository on this runner: a bare cache, built in a temp dir then renamed into place. */
  private async clone(repo: Repo): Promise<void> {
    await fs.mkdir(this.reposDir, { recursive: true });
    await removeTree(repo.cache); // a broken leftover (no HEAD)
    const tmp = `${repo.cache}.tmp-${randomBytes(6).toString('hex')}`;
    const env = workspaceGitEnv(repo.url, '');
    const failed = (what: string, result: GitResult): WorkspaceError =>
      new WorkspaceError(`${what} failed: ${gitFailureReason(result, repo.token, this.gitTimeoutMs)}`);
    try {
      const init = await runGit(['init', '--quiet', '--bare', tmp], { cwd: this.reposDir, env, timeoutMs: this.gitTimeoutMs });
      if (init.code !== 0) throw failed('preparing the repository cache', init);
      const settings: [string, string][] = [
        ['remote.origin.url', repo.url],
        ['remote.origin.fetch', FETCH_REFSPEC],
        ['remote.origin.tagOpt', '--no-tags'],
        ['push.default', 'upstream'],
      ];
      // Agents must be able to commit even where the runner's user has no git identity.
      const identity = await this.git(tmp, ['config', '--get', 'user.email'], env);
      if (identity.code !== 0 || identity.stdout.trim() === '') {
        settings.push(['user.name', 'Drover Agent'], ['user.email', 'agent@drover.invalid']);
      }
      for (const [key, value] of settings) {
        const set = await this.git(tmp, ['config', key, value], env);
        if (set.code !== 0) throw failed('preparing the repository cache', set);
      }
      await this.fetch(repo, tmp, true);
      await fs.rename(tmp, repo.cache);
    } catch (err) {
      await removeTree(tmp);
      throw err;
    }
  }

  /**
   * Brings refs/remotes/origin/* of `gitDir` (the cache, or the temp dir of a clone) up to date.
   * Under the cache lock. Skipped when a fetch with the same token that started after the caller
   * asked (`askedAt`, a start index of this cache's fetches) has succeeded.
   */
  private async fetch(repo: Repo, gitDir: string, cloning: boolean, askedAt?: number): Promise<void> {
    const state = this.cacheState(repo.cache);
    const tokenHash = createHash('sha256').update(repo.token).digest('hex');
    if (askedAt !== undefined && state.lastOk && state.lastOk.index >= askedAt && state.lastOk.tokenHash === tokenHash) {
      return;
    }
    const index = state.started;
    state.started += 1;
    const result = await this.git(
      gitDir,
      ['fetch', '--prune', '--no-tags', '--quiet', '--no-recurse-submodules', 'origin', FETCH_REFSPEC],
      workspaceGitEnv(repo.url, repo.token),
    );
    if (result.code !== 0 || result.timedOut) {
      const reason = gitFailureReason(result, repo.token, this.gitTimeoutMs);
      throw new WorkspaceError(`${cloning ? 'cloning' : 'fetching'} ${displayUrl(repo.url, repo.token)} failed: ${reason}`);
    }
    state.lastOk = { index, tokenHash };
  }

  private async resolveCommit(cache: string, branch: string, env: NodeJS.ProcessEnv): Promise<string | null> {
    const result = await this.git(cache, ['rev-parse', '--verify', '--quiet', `refs/remotes/origin/${branch}^{commit}`], env);
    const sha = result.stdout.trim();
    return result.code === 0 && /^[0-9a-f]{40,64}$/.test(sha) ? sha : null;
  }

  /** Deletes a workspace directory, then (under the cache lock) its worktree registration and local branch. */
  private async removeWorkspace(target: Target, knownCache: string | null): Promise<void> {
    const cache = (await this.cacheOf(target.dir)) ?? knownCache;
    await removeTree(target.dir);
    if (cache === null || !(await exists(path.join(cache, 'HEAD')))) return;
    await this.cacheLocks.run(cache, async () => {
      const env = workspaceGitEnv('', '');
      await this.git(cache, ['worktree', 'prune'], env);
      await this.git(cache, ['branch', '-D', target.localBranch], env); // absent: fine
    });
  }

  /** The cache a workspace is a worktree of, read from its `.git` file; null when it is not one of ours. */
  private async cacheOf(dir: string): Promise<string | null> {
    let text: string;
    try {
      const file = path.join(dir, '.git');
      const stat = await fs.lstat(file);
      if (!stat.isFile() || stat.size > 4096) return null;
      text = await fs.readFile(file, 'utf8');
    } catch {
      return null;
    }
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(text);
    if (!m) return null;
    // <work dir>/repos/<hash>.git/worktrees/<name>; compare names only (the path may be a realpath).
    const admin = m[1];
    const worktrees = path.dirname(admin);
    const cacheDir = path.dirname(worktrees);
    if (path.basename(worktrees) !== 'worktrees' || path.basename(path.dirname(cacheDir)) !== 'repos') return null;
    const name = path.basename(cacheDir);
    if (!CACHE_RE.test(name)) return null;
    // The registration must still exist, else the worktree is dead (e.g. the cache was deleted).
    if (!(await exists(admin))) return null;
    return path.join(this.reposDir, name);
  }

  private cacheState(cache: string): CacheState {
    let state = this.caches.get(cache);
    if (!state) {
      state = { started: 0, lastOk: null };
      this.caches.set(cache, state);
    }
    return state;
  }

  /** git on a bare cache, named explicitly (no repository discovery from the cwd). */
  private git(cache: string, args: string[], env: NodeJS.ProcessEnv): Promise<GitResult> {
    return runGit([`--git-dir=${cache}`, ...args], { cwd: path.dirname(cache), env, timeoutMs: this.gitTimeoutMs });
  }
}

function checkKey(key: unknown, what: string): string {
  if (typeof key !== 'string' || !KEY_RE.test(key)) {
    throw new WorkspaceError(`${what} must be 1-64 lowercase letters, digits or "-", starting with a letter or digit`);
  }
  return key;
}

const lockName = (target: Target): string => `${target.kind === 'pod' ? 'pods' : 'persistent'}/${target.key}`;

async function exists(p: string): Promise<boolean> {
  try {
    await fs.lstat(p);
    return true;
  } catch {
    return false;
  }
}

/** Creates `dir` (and its parents); false when something is already there. */
async function makeNewDir(dir: string, parentsMade = false): Promise<boolean> {
  try {
    await fs.mkdir(dir);
    return true;
  } catch (error) {
    if (parentsMade || (error as NodeJS.ErrnoException).code !== 'ENOENT') return false;
  }
  await fs.mkdir(path.dirname(dir), { recursive: true });
  return makeNewDir(dir, true);
}

async function isDirectory(p: string): Promise<boolean> {
  try {
    return (await fs.lstat(p)).isDirectory();
  } catch {
    return false;
  }
}

async function listDir(dir: string): Promise<string[]> {
  try {
    return await fs.readdir(dir);
  } catch {
    return [];
  }
}

/** rm -rf; a symlink is removed itself, never followed. */
async function removeTree(p: string): Promise<void> {
  await fs.rm(p, { recursive: true, force: true, maxRetries: 3, retryDelay: 100 });
}
