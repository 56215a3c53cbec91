/**
 * The runner's clone caches: one bare repository per repository URL under `<work dir>/repos/`,
 * holding origin's branches as `refs/remotes/origin/*`. Only the runner touches a cache: pods
 * see nothing of it but its `objects/` directory, read-only, which their own repositories borrow
 * objects from (docs/runners.md "Git").
 *
 * Every fetch names the registered URL and refspec on the command line, never a remote of the
 * cache's configuration, and the token travels scoped to that URL (./git.ts): what any repository
 * configuration says cannot redirect a fetch or its token.
 *
 * A cache's git operations are serialized by an in-process mutex. Fetches are coalesced: a prepare
 * waiting for the cache skips its own fetch when a fetch with the same token succeeded after it
 * asked. The cache never collects garbage (`gc.auto 0` on every runner git call): pods'
 * repositories borrow its objects, and an object it no longer needs may still be one of theirs.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { WorkspaceError } from './errors.ts';
import { displayUrl, gitFailureReason, runGit, workspaceGitEnv, type GitResult } from './git.ts';
import { KeyedMutex } from './mutex.ts';
import { exists, removeTree } from './files.ts';

export const FETCH_REFSPEC = '+refs/heads/*:refs/remotes/origin/*';
const CACHE_RE = /^[0-9a-f]{24}\.git$/;
const CACHE_TMP_RE = /^([0-9a-f]{24}\.git)\.tmp-[0-9a-f]+$/;

export interface Repo {
  url: string;
  token: string;
  defaultBranch: string;
  /** The cache's directory. */
  cache: string;
}

/** origin's branches as the cache has them: `refs/remotes/origin/<branch>` → commit. */
export type OriginRefs = Map<string, string>;

interface CacheState {
  /** Fetches started so far. */
  started: number;
  /** The last successful fetch: its start index and the token (hashed) it used. */
  lastOk: { index: number; tokenHash: string } | null;
}

export class RepoCaches {
  private readonly locks = new KeyedMutex();
  private readonly states = new Map<string, CacheState>();

  constructor(
    readonly reposDir: string,
    private readonly timeoutMs: number,
  ) {}

  /** The cache of a repository URL (a name derived from the URL, so one URL has one cache). */
  cacheFor(url: string): string {
    const hash = createHash('sha256').update(url).digest('hex').slice(0, 24);
    return path.join(this.reposDir, `${hash}.git`);
  }

  /**
   * Brings the cache of `repo` up to date (cloning it on first use) and returns origin's branches.
   * Throws WorkspaceError with a user-facing message (never the token).
   */
  async refresh(repo: Repo): Promise<OriginRefs> {
    const askedAt = this.state(repo.cache).started;
    return this.locks.run(repo.cache, async () => {
      if (await exists(path.join(repo.cache, 'HEAD'))) await this.fetch(repo, repo.cache, false, askedAt);
      else await this.clone(repo);
      return this.originRefs(repo);
    });
  }

  /** After a restart: removes half-made clones (no clone is running yet). */
  async sweep(): Promise<void> {
    let entries: string[];
    try {
      entries = await fs.readdir(this.reposDir);
    } catch {
      return;
    }
    for (const name of entries) {
      const tmp = CACHE_TMP_RE.exec(name);
      if (tmp && CACHE_RE.test(tmp[1])) await this.locks.run(path.join(this.reposDir, tmp[1]), () => removeTree(path.join(this.reposDir, name)));
    }
  }

  private async originRefs(repo: Repo): Promise<OriginRefs> {
    const result = await this.git(repo.cache, ['for-each-ref', '--format=%(objectname) %(refname)', 'refs/remotes/origin/'], workspaceGitEnv('', ''));
    if (result.code !== 0) throw new WorkspaceError(`reading the repository cache failed: ${gitFailureReason(result, repo.token, this.timeoutMs)}`);
    const refs: OriginRefs = new Map();
    for (const line of result.stdout.split('\n')) {
      const m = /^([0-9a-f]{40,64}) (refs\/remotes\/origin\/\S+)$/.exec(line.trim());
      if (m) refs.set(m[2], m[1]);
    }
    return refs;
  }

  /** First use of a repository on this runner: a bare cache, built in a temp dir then renamed into place. */
  private async clone(repo: Repo): Promise<void> {
    await fs.mkdir(this.reposDir, { recursive: true });
    await removeTree(repo.cache); // a broken leftover (no HEAD)
    const tmp = `${repo.cache}.tmp-${randomBytes(6).toString('hex')}`;
    const env = workspaceGitEnv(repo.url, '');
    try {
      const init = await runGit(['init', '--quiet', '--bare', tmp], { cwd: this.reposDir, env, timeoutMs: this.timeoutMs });
      if (init.code !== 0) throw new WorkspaceError(`preparing the repository cache failed: ${gitFailureReason(init, repo.token, this.timeoutMs)}`);
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
    const state = this.state(repo.cache);
    const tokenHash = createHash('sha256').update(repo.token).digest('hex');
    if (askedAt !== undefined && state.lastOk && state.lastOk.index >= askedAt && state.lastOk.tokenHash === tokenHash) return;
    const index = state.started;
    state.started += 1;
    const result = await this.git(
      gitDir,
      // The URL itself, never a remote name: nothing in any configuration can redirect the fetch.
      ['fetch', '--prune', '--no-tags', '--quiet', '--no-recurse-submodules', '--', repo.url, FETCH_REFSPEC],
      workspaceGitEnv(repo.url, repo.token),
    );
    if (result.code !== 0 || result.timedOut) {
      throw new WorkspaceError(
        `${cloning ? 'cloning' : 'fetching'} ${displayUrl(repo.url, repo.token)} failed: ${gitFailureReason(result, repo.token, this.timeoutMs)}`,
      );
    }
    state.lastOk = { index, tokenHash };
  }

  private state(cache: string): CacheState {
    let state = this.states.get(cache);
    if (!state) {
      state = { started: 0, lastOk: null };
      this.states.set(cache, state);
    }
    return state;
  }

  /** git on a bare cache, named explicitly (no repository discovery from the cwd). */
  private git(cache: string, args: string[], env: NodeJS.ProcessEnv): Promise<GitResult> {
    return runGit([`--git-dir=${cache}`, ...args], { cwd: path.dirname(cache), env, timeoutMs: this.timeoutMs });
  }
}
