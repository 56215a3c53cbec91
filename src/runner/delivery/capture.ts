/**
 * Capture (docs/agents.md "Getting the work back"): at a pod's end, what the agent left
 * uncommitted becomes one commit, and the commits the runner has not got yet travel out of the
 * pod's repository as a bundle into the runner's clone cache.
 *
 * The pod's repository is the agent's: its configuration, hooks, `.gitattributes` filters and
 * fsmonitor are programs the agent chose. So every git command on it runs inside the pod's
 * sandbox (the same walls the agent had), and what comes out is data only: a few lines of text
 * and a bundle file, checked to be a regular file before the runner's own git reads it (into the
 * cache, whose configuration is the runner's).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { PodView, Sandbox } from '../sandbox/index.ts';
import { AGENT_IDENTITY } from '../workspace/checkout.ts';
import { runGit, workspaceGitEnv, type GitOptions, type GitResult } from '../workspace/git.ts';

export interface CaptureRequest {
  podKey: string;
  workspace: string;
  home: string;
  /** What the pod's sandbox may read besides (the cache's objects). */
  readOnly: string[];
  /** A fresh directory of the runner's for the bundle, made after the agent ended. */
  outDir: string;
  /** The clone cache: runner-owned, where the work is taken to. */
  cache: string;
  sandbox: Sandbox | null;
  timeoutMs: number;
}

export interface Captured {
  /** The commit the repository's HEAD names after the capture. */
  head: string;
  /** The branch the agent had checked out; null when detached. */
  branch: string | null;
  /** The ref of the cache holding `head` (to be deleted when done). */
  ref: string;
}

export class CaptureError extends Error {}

const SHA_RE = /^[0-9a-f]{40,64}$/;

/** Commits the uncommitted work, takes HEAD into the cache; throws CaptureError with a reason. */
export async function capture(request: CaptureRequest): Promise<Captured> {
  const inPod = podGit(request);
  const added = await inPod(['add', '--all', '--', '.']);
  if (added.code !== 0) throw new CaptureError(`git add failed in the pod's workspace: ${lastLine(added)}`);
  // Each command here is a sandbox launch: the commit is tried first, and only when it fails is
  // the index asked whether there was anything to commit (docs/agents.md "Getting the work back").
  const message = `Uncommitted changes of pod ${request.podKey}`;
  const committed = await inPod(['commit', '--quiet', '--no-verify', '--no-gpg-sign', '--untracked-files=no', '--allow-empty-message', '-m', message]);
  if (committed.code !== 0) {
    const staged = await inPod(['diff', '--cached', '--quiet', '--no-ext-diff']);
    if (staged.code === 1) throw new CaptureError(`committing the uncommitted work failed: ${lastLine(committed)}`);
    if (staged.code !== 0) throw new CaptureError(`reading the pod's workspace failed: ${lastLine(staged)}`);
  }
  // One launch for both: the head commit, then HEAD's full ref name (`HEAD` itself when detached).
  const headLines = await inPod(['rev-parse', 'HEAD^{commit}', '--symbolic-full-name', 'HEAD']);
  const [head = '', full = ''] = headLines.stdout.split('\n').map((l) => l.trim());
  if (headLines.code !== 0 || !SHA_RE.test(head)) throw new CaptureError('the pod\'s repository has no commit at HEAD');
  const branch = full.startsWith('refs/heads/') && full.length > 'refs/heads/'.length ? full.slice('refs/heads/'.length) : null;
  const ref = `refs/drover/pods/${request.podKey}`;
  if (!(await cacheHas(request, head))) await takeBundle(request, inPod, head, ref);
  else {
    const kept = await cacheGit(request, ['update-ref', ref, head]);
    if (kept.code !== 0) throw new CaptureError(`keeping the work in the runner's cache failed: ${lastLine(kept)}`);
  }
  return { head, branch, ref };
}

/** Moves the commits the cache lacks from the pod's repository into the cache, as a bundle. */
async function takeBundle(request: CaptureRequest, inPod: (args: string[]) => Promise<GitResult>, head: string, ref: string): Promise<void> {
  const file = path.join(request.outDir, 'work.bundle');
  // Everything origin/* reaches is in the cache (the runner wrote those refs from it).
  const made = await inPod(['bundle', 'create', '--quiet', file, 'HEAD', '--not', '--remotes=origin']);
  if (made.code !== 0) throw new CaptureError(`bundling the work failed: ${lastLine(made)}`);
  // Written by git under the agent's configuration: only a plain file is read, never a link to elsewhere.
  const stat = await fs.lstat(file).catch(() => null);
  if (!stat || !stat.isFile()) throw new CaptureError('bundling the work failed: no bundle was written');
  const fetched = await cacheGit(request, ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--', file, `+HEAD:${ref}`]);
  if (fetched.code !== 0) throw new CaptureError(`taking the work into the runner's cache failed: ${lastLine(fetched)}`);
  const got = await cacheGit(request, ['rev-parse', '--verify', '--quiet', ref]);
  if (got.stdout.trim() !== head) throw new CaptureError('taking the work into the runner\'s cache failed: the bundle holds another commit');
}

async function cacheHas(request: CaptureRequest, sha: string): Promise<boolean> {
  return (await cacheGit(request, ['cat-file', '-e', `${sha}^{commit}`])).code === 0;
}

/** The runner's own git on its cache (its configuration is the runner's). */
export function cacheGit(request: { cache: string; timeoutMs: number }, args: string[], env?: NodeJS.ProcessEnv): Promise<GitResult> {
  return runGit([`--git-dir=${request.cache}`, ...args], { cwd: path.dirname(request.cache), env: env ?? workspaceGitEnv('', ''), timeoutMs: request.timeoutMs });
}

/** git in the pod's repository, inside the pod's sandbox, as the agent's HOME sees it. */
function podGit(request: CaptureRequest): (args: string[]) => Promise<GitResult> {
  const view: PodView = { cwd: request.workspace, writable: [request.workspace, request.home, request.outDir], readOnly: request.readOnly };
  const sandbox = request.sandbox;
  const wrap: GitOptions['wrap'] = sandbox ? (command, args, env) => sandbox.wrap(command, args, view, env) : undefined;
  const env: NodeJS.ProcessEnv = {
    ...workspaceGitEnv('', ''),
    HOME: request.home,
    // The capture commit is Drover's, made on the agent's behalf; its identity never depends on the agent's configuration.
    GIT_AUTHOR_NAME: AGENT_IDENTITY.name,
    GIT_AUTHOR_EMAIL: AGENT_IDENTITY.email,
    GIT_COMMITTER_NAME: AGENT_IDENTITY.name,
    GIT_COMMITTER_EMAIL: AGENT_IDENTITY.email,
  };
  return (args) => runGit(args, { cwd: request.workspace, env, timeoutMs: request.timeoutMs, wrap });
}

export function lastLine(result: GitResult): string {
  if (result.timedOut) return 'timed out';
  const lines = result.stderr.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  return (lines.find((l) => /^(fatal|error):/.test(l)) ?? lines[lines.length - 1] ?? `git exited with code ${String(result.code)}`)
    .replace(/^(fatal|error):\s*/, '')
    .slice(0, 500);
}
