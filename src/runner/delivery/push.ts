/**
 * The runner's side of delivering (docs/agents.md "Getting the work back"), all in its own clone
 * cache: what the work is (commits, diff stat, format-patch text) and the push to the registered
 * URL with the repository's token. The token travels only in the environment of this git (an
 * `http.<url>.extraHeader`, ../workspace/git.ts), never on a command line, never in a sandbox.
 */
import { MAX_DELIVERY_COMMITS, MAX_PATCH_CHARS, type DeliveryCommit } from '../../protocol/delivery.ts';
import { scrub } from '../../git/scrub.ts';
import { gitFailureReason, workspaceGitEnv } from '../workspace/git.ts';
import { cacheGit, lastLine } from './capture.ts';

export interface Work {
  commits: DeliveryCommit[];
  files_changed: number;
  insertions: number;
  deletions: number;
  /** null when larger than the runner keeps (MAX_PATCH_CHARS). */
  patch: string | null;
}

interface CacheRef {
  cache: string;
  timeoutMs: number;
}

// Diff drivers and text conversions are configuration; the cache has none, and none is wanted.
const PLAIN_DIFF = ['--no-ext-diff', '--no-textconv', '--no-color'];

/** The commits `base..head` (oldest first), their diff stat and patch. */
export async function describeWork(at: CacheRef, base: string, head: string): Promise<Work> {
  const commits = await listCommits(at, base, head);
  return { commits, ...(await measureWork(at, base, head)) };
}

/** The commits `base..head`, oldest first (the last MAX_DELIVERY_COMMITS). */
export async function listCommits(at: CacheRef, base: string, head: string): Promise<DeliveryCommit[]> {
  const log = await cacheGit(at, ['log', '--reverse', '--format=%H%x09%s', '--no-color', `${base}..${head}`]);
  if (log.code !== 0) throw new Error(`listing the commits failed: ${lastLine(log)}`);
  const all = log.stdout.split('\n').filter((l) => l !== '');
  return all.slice(-MAX_DELIVERY_COMMITS).map((line) => {
    const tab = line.indexOf('\t');
    return { sha: line.slice(0, tab), subject: line.slice(tab + 1).slice(0, 1000) };
  });
}

/** The diff stat and the patch of `base..head`, read at once (two git processes side by side). */
export async function measureWork(at: CacheRef, base: string, head: string): Promise<Omit<Work, 'commits'>> {
  const [stat, patchRun] = await Promise.all([
    cacheGit(at, ['diff', '--shortstat', ...PLAIN_DIFF, base, head]),
    cacheGit(at, ['format-patch', '--stdout', '--no-signature', ...PLAIN_DIFF, `${base}..${head}`]),
  ]);
  if (stat.code !== 0) throw new Error(`reading the diff stat failed: ${lastLine(stat)}`);
  const number = (re: RegExp): number => Number(re.exec(stat.stdout)?.[1] ?? 0);
  const patch = patchRun.code === 0 && patchRun.stdout.length <= MAX_PATCH_CHARS ? patchRun.stdout : null;
  return {
    files_changed: number(/(\d+) files? changed/),
    insertions: number(/(\d+) insertions?\(\+\)/),
    deletions: number(/(\d+) deletions?\(-\)/),
    patch,
  };
}

export class PushError extends Error {}

/**
 * Pushes `head` to `branch` of `url`, never forcing: a branch holding commits the pod did not
 * make stays as it is (PushError saying so).
 */
export async function pushWork(at: CacheRef, url: string, token: string, head: string, branch: string): Promise<void> {
  const result = await cacheGit(
    at,
    // The URL itself, never a remote name of some configuration; no `+`: never a force-push.
    ['push', '--quiet', '--no-verify', '--porcelain', '--', url, `${head}:refs/heads/${branch}`],
    workspaceGitEnv(url, token),
  );
  if (result.code === 0) return;
  const said = `${result.stdout}\n${result.stderr}`;
  if (/\[rejected\]|non-fast-forward|fetch first|\(stale info\)/.test(said)) {
    throw new PushError(`branch ${branch} has commits the pod did not make; not overwritten (push refused as not a fast-forward)`);
  }
  throw new PushError(`pushing to ${scrub(url, token)} failed: ${gitFailureReason(result, token, at.timeoutMs)}`);
}
