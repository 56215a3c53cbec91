/**
 * Pod workspaces and HOMEs on a runner (docs/runners.md "The work dir", "HOME", "Git"; docs/api.md "Pods").
 *
 * Layout under the runner's work dir (none of it visible to pods but their own places):
 *
 *   agent-home/                      the operator's template of every pod's HOME (./workspace/homes.ts)
 *   repos/<sha256(url)[0:24]>.git    bare clone caches, runner only (./workspace/cache.ts)
 *   pods/<key>/workspace             a pod's workspace: its own checkout (./workspace/checkout.ts),
 *                                    or an empty directory when the pod has no repository
 *   pods/<key>/home                  its HOME
 *   pods/<key>/state                 its autopilot status file (made by the supervisor)
 *   persistent/<key>/workspace|home  kept across the pods of a persistent sandbox (a loop's runs)
 *   persistent/<key>/made-for.json   which repository and branch that workspace was made for
 *
 * Operations on one workspace (pod key or persistent key) are serialized by an in-process mutex;
 * the clone caches serialize their own.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Sandbox } from './sandbox/index.ts';
import { RepoCaches, type OriginRefs, type Repo } from './workspace/cache.ts';
import { createCheckout, refUpdates } from './workspace/checkout.ts';
import { WorkspaceError } from './workspace/errors.ts';
import { exists, listDir, removeTree } from './workspace/files.ts';
import { branchNameProblem, displayUrl, repoUrlProblem, runGit, workspaceGitEnv } from './workspace/git.ts';
import { AgentHomes } from './workspace/homes.ts';
import { KeyedMutex } from './workspace/mutex.ts';
import { readMadeFor, writeMadeFor, type MadeFor } from './workspace/made-for.ts';
import type { DeliveryReport } from '../protocol/delivery.ts';

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
  /** persistent sandbox: reuse the workspace (and HOME) named by this key (e.g. `loop-<id>`) */
  persistentKey?: string | null;
}

export interface PreparedWorkspace {
  /** Absolute path of the workspace directory. */
  path: string;
  /** The pod's HOME. */
  home: string;
  /** The remote branch the workspace follows (BRANCH, or the default branch); null without a repository. */
  branch: string | null;
  /** True when an existing persistent workspace was reused. */
  reused: boolean;
  /** Directories the pod must be able to read (the clone cache's objects its checkout borrows). */
  readOnly: string[];
  /** With a repository: the commit the pod's work starts from (checked out, or a reused workspace's HEAD) and the clone cache. */
  origin: { base: string; cache: string } | null;
}

export interface WorkspaceManagerOptions {
  /** Budget of each git command (clone, fetch, checkout …). Default 10 minutes. */
  gitTimeoutMs?: number;
  /** The pods' sandbox: git on a persistent workspace an agent has used runs inside it. Default none. */
  sandbox?: Sandbox;
}

const KEY_RE = /^[a-z0-9][a-z0-9-]{0,63}$/;
const DEFAULT_GIT_TIMEOUT_MS = 10 * 60_000;

interface Target {
  kind: 'pod' | 'persistent';
  key: string;
  /** pods/<key> or persistent/<key> */
  dir: string;
  workspace: string;
  home: string;
}


export class WorkspaceManager {
  readonly workDir: string;
  private readonly podsDir: string;
  private readonly persistentDir: string;
  private readonly gitTimeoutMs: number;
  private readonly caches: RepoCaches;
  private readonly homes: AgentHomes;
  private readonly sandbox: Sandbox | null;
  private readonly locks = new KeyedMutex();
  /** Pods being prepared or prepared and not yet released by this instance. */
  private readonly held = new Set<string>();

  constructor(workDir: string, options: WorkspaceManagerOptions = {}) {
    this.workDir = path.resolve(workDir);
    this.podsDir = path.join(this.workDir, 'pods');
    this.persistentDir = path.join(this.workDir, 'persistent');
    this.gitTimeoutMs = options.gitTimeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
    this.caches = new RepoCaches(path.join(this.workDir, 'repos'), this.gitTimeoutMs);
    this.homes = new AgentHomes(path.join(this.workDir, 'agent-home'));
    this.sandbox = options.sandbox ?? null;
  }

  /** A pod's own directory for runner-made state the agent may write (its autopilot status file). */
  stateDir(podKey: string): string {
    return path.join(this.podsDir, checkKey(podKey, 'pod key'), 'state');
  }

  /** A pod's directory for delivering its work (../delivery/), never seen by any sandbox but the capture's. */
  deliveryDir(podKey: string): string {
    return path.join(this.podsDir, checkKey(podKey, 'pod key'), 'delivery');
  }

  /**
   * Makes the workspace and HOME of a pod: fresh ones under pods/<podKey>, or with `persistentKey`
   * the persistent ones, reused when they exist and were made for the same repository and branch
   * (otherwise replaced by fresh ones). Throws WorkspaceError with a user-facing message.
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
    const target = persistentKey ? this.target('persistent', persistentKey) : this.target('pod', podKey);
    this.held.add(podKey);
    try {
      return await this.locks.run(lockName(target), () => this.prepareLocked(target, repo, branch));
    } catch (err) {
      this.held.delete(podKey);
      throw err;
    }
  }

  /**
   * The pod ended: removes pods/<podKey> (its workspace, HOME and state) unless `keep`. A
   * persistent workspace and HOME are never removed here (see removePersistent); only the pod's state.
   */
  async release(podKey: string, options: { keep: boolean }): Promise<void> {
    const key = checkKey(podKey, 'pod key');
    this.held.delete(key);
    if (options.keep) return;
    const target = this.target('pod', key);
    await this.locks.run(lockName(target), async () => {
      if (!this.held.has(key)) await removeTree(target.dir);
    });
  }

  /**
   * A pod of persistent workspace `persistentKey` delivered its work: what it pushed (or found
   * already there) is delivered, the base of what its removal still delivers.
   */
  async markDelivered(persistentKey: string, report: DeliveryReport | null): Promise<void> {
    if (!report?.head_commit || (report.status !== 'pushed' && report.status !== 'no_changes')) return;
    const target = this.target('persistent', checkKey(persistentKey, 'persistent workspace key'));
    await this.locks.run(lockName(target), async () => {
      const madeFor = await readMadeFor(target.dir);
      if (madeFor) await writeMadeFor(target.dir, { ...madeFor, delivered: report.head_commit });
    });
  }

  /**
   * A persistent workspace as its final delivery sees it: its work since what was delivered last
   * (`origin.base`); null when there is none; `origin` null when it has no repository or no record
   * of what was delivered.
   */
  async persistentWork(persistentKey: string): Promise<Omit<PreparedWorkspace, 'branch' | 'reused'> | null> {
    const target = this.target('persistent', checkKey(persistentKey, 'persistent workspace key'));
    const madeFor = await readMadeFor(target.dir);
    if (!madeFor || !(await exists(target.workspace))) return null;
    const cache = madeFor.cache ? path.join(this.workDir, 'repos', path.basename(madeFor.cache)) : null;
    const origin = cache && madeFor.delivered ? { base: madeFor.delivered, cache } : null;
    return { path: target.workspace, home: target.home, readOnly: cache ? [path.join(cache, 'objects')] : [], origin };
  }

  /** Removes a persistent workspace and HOME (e.g. its loop was deleted or no longer persistent). */
  async removePersistent(persistentKey: string): Promise<void> {
    const target = this.target('persistent', checkKey(persistentKey, 'persistent workspace key'));
    await this.locks.run(lockName(target), () => removeTree(target.dir));
  }

  /**
   * After a restart: removes pod directories whose key is not in `activePodKeys` (left over by a
   * crash) and half-made clone caches. Pods this instance is preparing or holds are spared too.
   * Persistent workspaces are left alone.
   */
  async sweep(activePodKeys: Iterable<string>): Promise<void> {
    const active = new Set(activePodKeys);
    const keep = (key: string): boolean => active.has(key) || this.held.has(key);
    for (const name of await listDir(this.podsDir)) {
      if (keep(name)) continue;
      await this.locks.run(`pods/${name}`, async () => {
        if (!keep(name)) await removeTree(path.join(this.podsDir, name));
      });
    }
    await removeTree(path.join(this.workDir, 'autopilot')); // state of runners before per-pod directories
    await this.caches.sweep();
  }

  // ---------------------------------------------------------------------------------------

  private target(kind: Target['kind'], key: string): Target {
    const dir = path.join(kind === 'pod' ? this.podsDir : this.persistentDir, key);
    return { kind, key, dir, workspace: path.join(dir, 'workspace'), home: path.join(dir, 'home') };
  }

  private checkRepo(source: RepoSource): Repo {
    const url = (source.url ?? '').trim();
    const problem = repoUrlProblem(url);
    if (problem) throw new WorkspaceError(problem);
    const defaultBranch = (source.defaultBranch ?? '').trim();
    const branchProblem = branchNameProblem(defaultBranch);
    if (branchProblem) throw new WorkspaceError(`default ${branchProblem}`);
    return { url, token: source.token ?? '', defaultBranch, cache: this.caches.cacheFor(url) };
  }

  private async prepareLocked(target: Target, repo: Repo | null, branch: string | null): Promise<PreparedWorkspace> {
    const madeFor: MadeFor = { cache: repo ? path.basename(repo.cache) : null, branch, delivered: null };
    const readOnly = repo ? [path.join(repo.cache, 'objects')] : [];
    if (target.kind === 'persistent') {
      const reused = await this.tryReuse(target, repo, madeFor);
      if (reused) {
        const base = repo ? await this.headOf(target, repo) : null;
        const origin = repo && base ? { base, cache: repo.cache } : null;
        return { path: target.workspace, home: target.home, branch, reused: true, readOnly, origin };
      }
    }
    // A fresh workspace; whatever is there is debris (a crash) or an incompatible persistent one.
    await removeTree(target.dir);
    let origin: PreparedWorkspace['origin'] = null;
    try {
      await this.homes.seed(target.home);
      if (repo) {
        const refs = await this.caches.refresh(repo);
        origin = { base: startCommit(refs, repo, branch!), cache: repo.cache };
        await createCheckout({
          dir: target.workspace,
          repo,
          refs,
          branch: branch!,
          start: startCommit(refs, repo, branch!),
          identity: !(await this.homes.hasGitIdentity()),
          timeoutMs: this.gitTimeoutMs,
        });
      } else {
        await fs.mkdir(target.workspace, { recursive: true });
      }
      // Delivered so far: nothing beyond the commit it starts from (docs/agents.md "Getting the work back").
      if (target.kind === 'persistent') await writeMadeFor(target.dir, { ...madeFor, delivered: origin?.base ?? null });
    } catch (err) {
      await removeTree(target.dir).catch(() => undefined);
      throw err;
    }
    return { path: target.workspace, home: target.home, branch, reused: false, readOnly, origin };
  }

  /**
   * Reuses a persistent workspace made for the same repository and branch: the agent's work stays
   * as it is, and its origin/* branches are brought up to date from a fresh fetch, by git running
   * inside the pod's sandbox (the repository is the agent's). False when it cannot be reused.
   */
  private async tryReuse(target: Target, repo: Repo | null, madeFor: MadeFor): Promise<boolean> {
    const before = await readMadeFor(target.dir);
    if (!before || before.cache !== madeFor.cache || before.branch !== madeFor.branch) return false;
    if (!(await exists(target.workspace)) || !(await exists(target.home))) return false;
    if (repo) await this.refreshOrigin(target, repo, await this.caches.refresh(repo));
    return true;
  }

  /** Git in a persistent workspace an agent has used: inside the pod's sandbox. */
  private podGitOptions(target: Target, repo: Repo) {
    const view = { cwd: target.workspace, writable: [target.workspace, target.home], readOnly: [path.join(repo.cache, 'objects')] };
    const sandbox = this.sandbox;
    const wrap = sandbox ? (command: string, args: string[], env: Record<string, string>) => sandbox.wrap(command, args, view, env) : undefined;
    const env = { ...workspaceGitEnv('', ''), HOME: target.home };
    return { cwd: target.workspace, env, timeoutMs: this.gitTimeoutMs, wrap };
  }

  /** A reused workspace's HEAD: where this run's work starts (null: the agent left no commit there). */
  private async headOf(target: Target, repo: Repo): Promise<string | null> {
    const result = await runGit(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], this.podGitOptions(target, repo));
    const sha = result.stdout.trim();
    return result.code === 0 && /^[0-9a-f]{40,64}$/.test(sha) ? sha : null;
  }

  private async refreshOrigin(target: Target, repo: Repo, refs: OriginRefs): Promise<void> {
    const options = this.podGitOptions(target, repo);
    const listed = await runGit(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/remotes/origin/'], options);
    // A repository the agent broke or removed stays as the agent left it.
    if (listed.code !== 0) return;
    const current: OriginRefs = new Map();
    for (const line of listed.stdout.split('\n')) {
      const [sha, name] = line.trim().split(' ');
      if (sha && name) current.set(name, sha);
    }
    const updates = refUpdates(current, refs);
    if (updates !== '') await runGit(['update-ref', '--stdin'], { ...options, stdin: updates });
  }
}

/** The commit a new checkout of `branch` starts from: origin's branch, else the default branch (a new branch). */
function startCommit(refs: OriginRefs, repo: Repo, branch: string): string {
  const own = refs.get(`refs/remotes/origin/${branch}`);
  if (own) return own;
  const where = displayUrl(repo.url, repo.token);
  const fallback = refs.get(`refs/remotes/origin/${repo.defaultBranch}`);
  if (branch === repo.defaultBranch || !fallback) {
    throw new WorkspaceError(
      branch === repo.defaultBranch
        ? `default branch ${branch} not found in ${where}`
        : `branch ${branch} not found in ${where} and cannot be created: default branch ${repo.defaultBranch} not found either`,
    );
  }
  return fallback;
}

function checkKey(key: unknown, what: string): string {
  if (typeof key !== 'string' || !KEY_RE.test(key)) {
    throw new WorkspaceError(`${what} must be 1-64 lowercase letters, digits or "-", starting with a letter or digit`);
  }
  return key;
}

const lockName = (target: Target): string => `${target.kind === 'pod' ? 'pods' : 'persistent'}/${target.key}`;
