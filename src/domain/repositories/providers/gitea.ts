/**
 * Gitea (and Forgejo) with plain fetch: there is no well-kept client library.
 *
 * Pages are requested by number (`page`, `limit`) rather than by following the `Link` URL,
 * because Gitea builds those links from its ROOT_URL setting, which is often wrong behind a
 * proxy; the `Link` header only tells whether a next page exists. Without a `Link` header a
 * full page means "maybe more". The server may cap `limit` below what we ask
 * (MAX_RESPONSE_ITEMS), which the `Link` header accounts for.
 */
import {
  assertArray,
  assertRecord,
  branchNames,
  isoTimestamp,
  nestedString,
  nextLink,
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

const PAGE_SIZE = 50;

function repoRoot(target: ProviderTarget): string {
  if (target.apiBaseUrl === null || target.apiBaseUrl.trim() === '') {
    throw new ProviderError('unavailable', 'gitea repositories need api_base_url');
  }
  const base = parseApiBase(target.apiBaseUrl, 'gitea');
  const { owner, repo } = splitOwnerRepo(target.fullName, 'gitea');
  return `${base}/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`;
}

/** Yields every page of a list endpoint. */
async function* pages(root: string, path: string, query: Record<string, string>, call: ProviderCall): AsyncGenerator<unknown[]> {
  for (let page = 1; ; page++) {
    if (page > MAX_PAGES) throw tooManyPages('gitea');
    const params = new URLSearchParams({ ...query, page: String(page), limit: String(PAGE_SIZE) });
    const res = await fetch(`${root}${path}?${params}`, {
      headers: { Authorization: `token ${call.token}`, Accept: 'application/json', 'User-Agent': 'drover' },
      signal: call.signal,
    });
    if (!res.ok) {
      await res.body?.cancel().catch(() => {});
      throw statusError('gitea', res.status);
    }
    if (!/\bjson\b/i.test(res.headers.get('content-type') ?? '')) {
      await res.body?.cancel().catch(() => {});
      throw unexpectedAnswer('gitea', `HTTP ${res.status} without a JSON body`);
    }
    let body: unknown;
    try {
      body = await res.json();
    } catch (err) {
      if (call.signal.aborted) throw err;
      throw unexpectedAnswer('gitea', 'invalid JSON');
    }
    const items = assertArray(body, 'gitea', 'list');
    yield items;
    const link = res.headers.get('link');
    const more = link !== null ? nextLink(link) !== null : items.length >= PAGE_SIZE;
    if (!more || items.length === 0) return;
  }
}

export async function listBranches(target: ProviderTarget, call: ProviderCall): Promise<string[]> {
  const root = repoRoot(target);
  const names: string[] = [];
  for await (const page of pages(root, '/branches', {}, call)) names.push(...branchNames(page, 'gitea'));
  return names;
}

function toMergeRequest(raw: unknown): MergeRequest {
  const pr = assertRecord(raw, 'gitea', 'pull request');
  const state = requireString(pr, 'state', 'gitea');
  return {
    id: requireInt(pr, 'number', 'gitea'),
    title: requireString(pr, 'title', 'gitea'),
    state: state === 'open' ? 'opened' : pr.merged === true ? 'merged' : 'closed',
    source_branch: nestedString(pr, 'head', 'ref', 'gitea'),
    target_branch: nestedString(pr, 'base', 'ref', 'gitea'),
    author: userName(pr.user, 'login'),
    url: requireString(pr, 'html_url', 'gitea'),
    created_at: isoTimestamp(pr.created_at, 'gitea'),
  };
}

export async function listMergeRequests(
  target: ProviderTarget,
  call: ProviderCall,
  filter: MergeRequestFilter,
): Promise<MergeRequest[]> {
  const root = repoRoot(target);
  // Gitea knows open/closed/all; merged is closed with merged=true, filtered below.
  const state = filter.state === 'opened' ? 'open' : filter.state === 'all' ? 'all' : 'closed';
  const out: MergeRequest[] = [];
  for await (const page of pages(root, '/pulls', { state }, call)) {
    for (const raw of page) {
      const mr = toMergeRequest(raw);
      if (filter.state !== 'all' && mr.state !== filter.state) continue;
      if (filter.branch !== undefined && mr.source_branch !== filter.branch) continue;
      out.push(mr);
    }
  }
  return out;
}
