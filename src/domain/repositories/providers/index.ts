/**
 * Branches and merge requests read live from a repository's Git provider (docs/api.md).
 *
 * Every call has one time budget (default 10 s) covering all pages; when it is spent the
 * in-flight requests are aborted and the call fails with ProviderError('unavailable').
 * Failures are always ProviderError: 'rejected' when the provider refused the token
 * (401/403), 'unavailable' otherwise. Messages never contain the token.
 */
import { dedupe, timedOut, toProviderError, type ProviderName } from './common.ts';
import * as git from './git.ts';
import * as gitea from './gitea.ts';
import * as github from './github.ts';
import * as gitlab from './gitlab.ts';
import {
  DEFAULT_TIMEOUT_MS,
  ProviderError,
  type MergeRequest,
  type MergeRequestFilter,
  type ProviderCall,
  type ProviderCallOptions,
  type ProviderTarget,
} from './types.ts';

export * from './types.ts';

const STATES = new Set(['opened', 'merged', 'closed', 'all']);

function providerOf(target: ProviderTarget): ProviderName {
  const p: unknown = target.provider;
  if (p === 'github' || p === 'gitlab' || p === 'gitea' || p === 'git') return p;
  throw new ProviderError('unavailable', `unsupported provider ${JSON.stringify(p)}`);
}

async function withBudget<T>(
  provider: ProviderName,
  token: string,
  opts: ProviderCallOptions | undefined,
  work: (call: ProviderCall) => Promise<T>,
): Promise<T> {
  const timeoutMs = opts?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new RangeError('timeoutMs must be a positive number');
  if (typeof token !== 'string') throw new TypeError('access token must be a string');
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = timedOut(provider, timeoutMs);
      controller.abort(err);
      reject(err);
    }, timeoutMs);
  });
  const ctx = { token, timeoutMs, signal: controller.signal };
  try {
    // The race guarantees the budget even where a library cannot take our signal (gitbeaker).
    return await Promise.race([work(ctx), deadline]);
  } catch (err) {
    throw toProviderError(err, provider, ctx);
  } finally {
    clearTimeout(timer);
  }
}

/** Branch names in the provider's order, without duplicates, every page read. */
export async function listBranches(
  target: ProviderTarget,
  accessToken: string,
  opts?: ProviderCallOptions,
): Promise<string[]> {
  const provider = providerOf(target);
  const impl = { github, gitlab, gitea, git }[provider];
  return dedupe(await withBudget(provider, accessToken, opts, (call) => impl.listBranches(target, call)));
}

/**
 * Merge (pull) requests, newest first, filtered by state (`all` = no filter) and by source
 * branch. A `git` repository has none.
 */
export async function listMergeRequests(
  target: ProviderTarget,
  token: string,
  filter: MergeRequestFilter,
  opts?: ProviderCallOptions,
): Promise<MergeRequest[]> {
  const provider = providerOf(target);
  if (!STATES.has(filter.state)) throw new RangeError(`unknown merge request state ${JSON.stringify(filter.state)}`);
  if (provider === 'git') return [];
  const impl = { github, gitlab, gitea }[provider];
  const found = await withBudget(provider, token, opts, (call) => impl.listMergeRequests(target, call, filter));
  const seen = new Set<number>();
  return found
    .filter((mr) => (filter.state === 'all' || mr.state === filter.state) && (filter.branch === undefined || mr.source_branch === filter.branch))
    .filter((mr) => !seen.has(mr.id) && seen.add(mr.id) !== undefined)
    .sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : b.id - a.id));
}
