import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { listBranches, listMergeRequests, type ProviderTarget } from '../../src/domain/repositories/providers/index.ts';
import { hang, json, providerError, startMockProvider, type MockProvider } from './helpers.ts';
import { unusedPort } from '../helpers/ports.ts';

const TOKEN = 'ghp_TestToken0123456789abcdef';
let mock: MockProvider;
let other: MockProvider;
let target: ProviderTarget;

beforeAll(async () => {
  mock = await startMockProvider();
  other = await startMockProvider();
});
afterAll(async () => {
  await mock.close();
  await other.close();
});
beforeEach(() => {
  mock.reset();
  other.reset();
  // GitHub Enterprise style API root, to check that the path prefix is kept.
  target = { provider: 'github', fullName: 'octo-org/hello-world', url: 'https://github.com/octo-org/hello-world.git', apiBaseUrl: `${mock.origin}/api/v3` };
});

// Shapes as GitHub returns them (GET /repos/{owner}/{repo}/branches).
const branch = (name: string, sha: string) => ({
  name,
  commit: { sha, url: `https://api.github.com/repos/octo-org/hello-world/commits/${sha}` },
  protected: name === 'main',
});

// Shape of GET /repos/{owner}/{repo}/pulls items (trimmed to the fields we read plus a few).
function pull(n: number, state: 'open' | 'closed', head: string, created: string, mergedAt: string | null, login: string | null = 'octocat') {
  return {
    url: `https://api.github.com/repos/octo-org/hello-world/pulls/${n}`,
    id: 1_000_000 + n,
    node_id: `PR_kw${n}`,
    html_url: `https://github.com/octo-org/hello-world/pull/${n}`,
    number: n,
    state,
    locked: false,
    title: `PR ${n}`,
    user: login === null ? null : { login, id: 1, type: 'User', site_admin: false },
    body: null,
    created_at: created,
    updated_at: created,
    closed_at: state === 'closed' ? created : null,
    merged_at: mergedAt,
    merge_commit_sha: null,
    draft: false,
    head: { label: `octo-org:${head}`, ref: head, sha: 'a'.repeat(40), user: { login: 'octo-org' } },
    base: { label: 'octo-org:main', ref: 'main', sha: 'b'.repeat(40), user: { login: 'octo-org' } },
    author_association: 'MEMBER',
  };
}

const PULLS = [
  pull(7, 'open', 'feature/login', '2026-03-07T10:00:00Z', null),
  pull(6, 'closed', 'feature/login', '2026-03-06T10:00:00Z', '2026-03-06T12:00:00Z', 'hubot'),
  pull(5, 'closed', 'fix/typo', '2026-03-05T10:00:00Z', null),
  pull(4, 'open', 'fix/typo', '2026-03-04T10:00:00Z', null, null),
  pull(3, 'closed', 'release', '2026-03-03T10:00:00Z', '2026-03-03T11:00:00Z'),
];

/** Serves pulls like GitHub: filtered by `state`, two per page, Link header to the next page. */
function servePulls(mockProvider: MockProvider) {
  mockProvider.handle((_req, res, url) => {
    const state = url.searchParams.get('state') ?? 'open';
    const page = Number(url.searchParams.get('page') ?? '1');
    const all = PULLS.filter((p) => state === 'all' || p.state === state);
    const per = 2;
    const last = Math.max(1, Math.ceil(all.length / per));
    const headers: Record<string, string> = {};
    if (page < last) {
      headers.Link = `<${mockProvider.origin}/api/v3/repositories/1296269/pulls?state=${state}&per_page=100&page=${page + 1}>; rel="next", <${mockProvider.origin}/api/v3/repositories/1296269/pulls?state=${state}&per_page=100&page=${last}>; rel="last"`;
    }
    json(res, 200, all.slice((page - 1) * per, page * per), headers);
  });
}

describe('github branches', () => {
  it('reads every page, sends the token in Authorization, keeps order and drops duplicates', async () => {
    mock.handle((_req, res, url) => {
      if (url.pathname === '/api/v3/repos/octo-org/hello-world/branches') {
        json(res, 200, [branch('main', '1'.repeat(40)), branch('develop', '2'.repeat(40))], {
          Link: `<${mock.origin}/api/v3/repositories/1296269/branches?per_page=100&page=2>; rel="next", <${mock.origin}/api/v3/repositories/1296269/branches?per_page=100&page=2>; rel="last"`,
        });
      } else if (url.pathname === '/api/v3/repositories/1296269/branches' && url.searchParams.get('page') === '2') {
        json(res, 200, [branch('feature/login', '3'.repeat(40)), branch('develop', '2'.repeat(40))], {
          Link: `<${mock.origin}/api/v3/repositories/1296269/branches?per_page=100&page=1>; rel="prev", <${mock.origin}/api/v3/repositories/1296269/branches?per_page=100&page=1>; rel="first"`,
        });
      } else {
        json(res, 404, { message: 'Not Found' });
      }
    });

    await expect(listBranches(target, TOKEN)).resolves.toEqual(['main', 'develop', 'feature/login']);
    expect(mock.requests).toHaveLength(2);
    expect(mock.requests[0].url).toBe('/api/v3/repos/octo-org/hello-world/branches?per_page=100');
    expect(mock.requests[1].url).toBe('/api/v3/repositories/1296269/branches?per_page=100&page=2');
    for (const r of mock.requests) expect(r.headers.authorization).toBe(`token ${TOKEN}`);
  });

  it('refuses to follow a Link to another host, which never sees the token', async () => {
    other.handle((_req, res) => json(res, 200, [branch('stolen', '9'.repeat(40))]));
    mock.handle((_req, res) => json(res, 200, [branch('main', '1'.repeat(40))], { Link: `<${other.origin}/branches?page=2>; rel="next"` }));
    const err = await providerError(listBranches(target, TOKEN));
    expect(err.kind).toBe('unavailable');
    expect(err.message).toContain('another host');
    expect(other.requests).toHaveLength(0);
  });

  it('treats a 200 that is not JSON as unavailable', async () => {
    mock.handle((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end('<html>captive portal</html>');
    });
    expect((await providerError(listBranches(target, TOKEN))).kind).toBe('unavailable');
  });
});

describe('github merge requests', () => {
  it('maps open/closed/merged_at to opened/closed/merged, newest first, across pages', async () => {
    servePulls(mock);
    const mrs = await listMergeRequests(target, TOKEN, { state: 'all' });
    expect(mrs.map((m) => [m.id, m.state])).toEqual([
      [7, 'opened'],
      [6, 'merged'],
      [5, 'closed'],
      [4, 'opened'],
      [3, 'merged'],
    ]);
    expect(mrs[0]).toEqual({
      id: 7,
      title: 'PR 7',
      state: 'opened',
      source_branch: 'feature/login',
      target_branch: 'main',
      author: 'octocat',
      url: 'https://github.com/octo-org/hello-world/pull/7',
      created_at: '2026-03-07T10:00:00.000Z',
    });
    expect(mrs[1].author).toBe('hubot');
    expect(mrs[3].author).toBe(''); // deleted account: user is null
    expect(mock.requests.length).toBe(3);
    expect(new URL(mock.requests[0].url, 'http://x').searchParams.get('state')).toBe('all');
    for (const r of mock.requests) expect(r.headers.authorization).toBe(`token ${TOKEN}`);
  });

  it('asks for closed pulls and keeps the merged ones for state=merged', async () => {
    servePulls(mock);
    const mrs = await listMergeRequests(target, TOKEN, { state: 'merged' });
    expect(mrs.map((m) => m.id)).toEqual([6, 3]);
    expect(new URL(mock.requests[0].url, 'http://x').searchParams.get('state')).toBe('closed');
  });

  it('keeps closed-unmerged ones for state=closed', async () => {
    servePulls(mock);
    expect((await listMergeRequests(target, TOKEN, { state: 'closed' })).map((m) => m.id)).toEqual([5]);
  });

  it('filters by source branch (head.ref) and state=opened', async () => {
    servePulls(mock);
    const mrs = await listMergeRequests(target, TOKEN, { state: 'opened', branch: 'fix/typo' });
    expect(mrs.map((m) => m.id)).toEqual([4]);
    expect(new URL(mock.requests[0].url, 'http://x').searchParams.get('state')).toBe('open');
    expect(await listMergeRequests(target, TOKEN, { state: 'all', branch: 'feature/login' })).toHaveLength(2);
    expect(await listMergeRequests(target, TOKEN, { state: 'all', branch: 'nope' })).toEqual([]);
  });
});

describe('github failures', () => {
  it('401 is rejected, and the message does not contain the token', async () => {
    mock.handle((_req, res) => json(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' }));
    const err = await providerError(listBranches(target, TOKEN));
    expect(err.kind).toBe('rejected');
    expect(err.message).not.toContain(TOKEN);
    expect((await providerError(listMergeRequests(target, TOKEN, { state: 'all' }))).kind).toBe('rejected');
  });

  it('403 is rejected', async () => {
    mock.handle((_req, res) => json(res, 403, { message: 'Resource not accessible by personal access token', status: '403' }));
    expect((await providerError(listBranches(target, TOKEN))).kind).toBe('rejected');
  });

  it('403 for an exhausted rate limit is unavailable, not rejected', async () => {
    mock.handle((_req, res) =>
      json(res, 403, { message: 'API rate limit exceeded for user ID 1.' }, { 'x-ratelimit-remaining': '0', 'x-ratelimit-limit': '5000' }),
    );
    expect((await providerError(listBranches(target, TOKEN))).kind).toBe('unavailable');
  });

  it('500 is unavailable (and is not retried)', async () => {
    mock.handle((_req, res) => json(res, 500, { message: 'Server Error' }));
    const err = await providerError(listBranches(target, TOKEN));
    expect(err.kind).toBe('unavailable');
    expect(err.message).toContain('500');
    expect(mock.requests).toHaveLength(1);
  });

  it('404 (unknown repository) is unavailable', async () => {
    mock.handle((_req, res) => json(res, 404, { message: 'Not Found' }));
    expect((await providerError(listMergeRequests(target, TOKEN, { state: 'all' }))).kind).toBe('unavailable');
  });

  it('a closed port is unavailable', async () => {
    const port = await unusedPort();
    const err = await providerError(listBranches({ ...target, apiBaseUrl: `http://127.0.0.1:${port}` }, TOKEN));
    expect(err.kind).toBe('unavailable');
    expect(err.message).toMatch(/ECONNREFUSED/);
  });

  it('a provider that never answers is unavailable within the timeout', async () => {
    mock.handle(hang);
    const started = Date.now();
    const err = await providerError(listMergeRequests(target, TOKEN, { state: 'all' }, { timeoutMs: 500 }));
    const elapsed = Date.now() - started;
    expect(err.kind).toBe('unavailable');
    expect(err.message).toContain('500 ms');
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(2_000);
  });

  it('a full_name that is not owner/repo is refused before any request', async () => {
    expect((await providerError(listBranches({ ...target, fullName: 'just-a-name' }, TOKEN))).kind).toBe('unavailable');
    expect(mock.requests).toHaveLength(0);
  });
});
