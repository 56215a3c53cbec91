/**
 * GitHub (and GitHub Enterprise) through @octokit/rest.
 *
 * @octokit/rest 22 bundles no retry or throttling plugin, so a failing provider fails fast;
 * its only logging (plugin-request-log, deprecation warnings) goes to `log`, which we silence.
 * Octokit puts the token in `Authorization: token <t>` and redacts it from RequestError.
 */
import { Octokit } from '@octokit/rest';
import {
  assertArray,
  assertRecord,
  branchNames,
  isoTimestamp,
  nestedString,
  parseApiBase,
  requireInt,
  requireString,
  splitOwnerRepo,
  statusError,
  tooManyPages,
  unexpectedAnswer,
  userName,
} from './common.ts';
import {
  MAX_PAGES,
  ProviderError,
  type MergeRequest,
  type MergeRequestFilter,
  type ProviderCall,
  type ProviderTarget,
} from './types.ts';

const DEFAULT_API = 'https://api.github.com';
const PER_PAGE = 100;
const silentLog = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/**
 * A fetch that only talks to the configured API origin (pagination follows absolute `Link`
 * URLs; a hostile or misconfigured answer must not make us send the token elsewhere) and
 * refuses successful answers that are not JSON (Octokit would read an empty body as []).
 */
function pinnedFetch(root: string): typeof fetch {
  const origin = new URL(root).origin;
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.origin !== origin) {
      throw new ProviderError('unavailable', `github pagination pointed to another host (${url.host})`);
    }
    const res = await fetch(input, init);
    if (res.ok && res.status !== 204 && !/\bjson\b/i.test(res.headers.get('content-type') ?? '')) {
      await res.body?.cancel().catch(() => {});
      throw unexpectedAnswer('github', `HTTP ${res.status} without a JSON body`);
    }
    return res;
  };
}

function client(target: ProviderTarget, call: ProviderCall): { octokit: Octokit; owner: string; repo: string } {
  const root = parseApiBase(target.apiBaseUrl ?? DEFAULT_API, 'github');
  const { owner, repo } = splitOwnerRepo(target.fullName, 'github');
  const octokit = new Octokit({
    auth: call.token,
    baseUrl: root,
    userAgent: 'drover',
    log: silentLog,
    request: { fetch: pinnedFetch(root), signal: call.signal },
  });
  return { octokit, owner, repo };
}

/** Octokit's RequestError carries the HTTP status and the response headers. */
function mapOctokitError(err: unknown): unknown {
  if (err instanceof ProviderError || typeof err !== 'object' || err === null) return err;
  const status = (err as { status?: unknown }).status;
  const response = (err as { response?: { headers?: Record<string, string | undefined> } }).response;
  // status 500 without a response is Octokit's wrapping of a network failure: keep the cause.
  if (typeof status !== 'number' || !response) return err;
  // A 403 for an exhausted rate limit is not a refused token.
  if (status === 403 && (response.headers?.['x-ratelimit-remaining'] === '0' || response.headers?.['retry-after'])) {
    return new ProviderError('unavailable', 'github rate limit exceeded');
  }
  return statusError('github', status);
}

export async function listBranches(target: ProviderTarget, call: ProviderCall): Promise<string[]> {
  const { octokit, owner, repo } = client(target, call);
  const names: string[] = [];
  let pages = 0;
  try {
    for await (const page of octokit.paginate.iterator(octokit.rest.repos.listBranches, { owner, repo, per_page: PER_PAGE })) {
      if (++pages > MAX_PAGES) throw tooManyPages('github');
      names.push(...branchNames(page.data, 'github'));
    }
  } catch (err) {
    throw mapOctokitError(err);
  }
  return names;
}

function toMergeRequest(raw: unknown): MergeRequest {
  const pr = assertRecord(raw, 'github', 'pull request');
  const state = requireString(pr, 'state', 'github');
  return {
    id: requireInt(pr, 'number', 'github'),
    title: requireString(pr, 'title', 'github'),
    state: state === 'open' ? 'opened' : typeof pr.merged_at === 'string' && pr.merged_at !== '' ? 'merged' : 'closed',
    source_branch: nestedString(pr, 'head', 'ref', 'github'),
    target_branch: nestedString(pr, 'base', 'ref', 'github'),
    author: userName(pr.user, 'login'), // null for pull requests of deleted accounts
    url: requireString(pr, 'html_url', 'github'),
    created_at: isoTimestamp(pr.created_at, 'github'),
  };
}

export async function listMergeRequests(
  target: ProviderTarget,
  call: ProviderCall,
  filter: MergeRequestFilter,
): Promise<MergeRequest[]> {
  const { octokit, owner, repo } = client(target, call);
  // GitHub knows open/closed/all; merged is closed with merged_at, filtered below.
  const state = filter.state === 'opened' ? 'open' : filter.state === 'all' ? 'all' : 'closed';
  const out: MergeRequest[] = [];
  let pages = 0;
  try {
    // `head` would need `owner:branch` and misses forks' branches, so the branch filter is applied here.
    for await (const page of octokit.paginate.iterator(octokit.rest.pulls.list, { owner, repo, state, per_page: PER_PAGE })) {
      if (++pages > MAX_PAGES) throw tooManyPages('github');
      for (const raw of assertArray(page.data, 'github', 'pull request list')) {
        const mr = toMergeRequest(raw);
        if (filter.state !== 'all' && mr.state !== filter.state) continue;
        if (filter.branch !== undefined && mr.source_branch !== filter.branch) continue;
        out.push(mr);
      }
    }
  } catch (err) {
    throw mapOctokitError(err);
  }
  return out;
}
