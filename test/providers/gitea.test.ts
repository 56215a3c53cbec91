import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { listBranches, listMergeRequests, type ProviderTarget } from '../../src/domain/repositories/providers/index.ts';
import { hang, json, providerError, startMockProvider, type MockProvider } from './helpers.ts';
import { unusedPort } from '../helpers/ports.ts';

const TOKEN = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678';
const REPO = '/api/v1/repos/team/widget';
let mock: MockProvider;
let target: ProviderTarget;

beforeAll(async () => {
  mock = await startMockProvider();
});
afterAll(async () => {
  await mock.close();
});
beforeEach(() => {
  mock.reset();
  target = { provider: 'gitea', fullName: 'team/widget', url: 'https://gitea.example/team/widget.git', apiBaseUrl: `${mock.origin}/api/v1` };
});

// Shape of GET /repos/{owner}/{repo}/branches items.
const branch = (name: string) => ({
  name,
  commit: { id: 'd'.repeat(40), message: 'commit\n', url: `https://gitea.example/team/widget/commit/${'d'.repeat(40)}` },
  protected: false,
  required_approvals: 0,
  enable_status_check: false,
  user_can_push: true,
  user_can_merge: true,
  effective_branch_protection_name: '',
});

// Shape of GET /repos/{owner}/{repo}/pulls items (trimmed).
function pull(n: number, state: 'open' | 'closed', merged: boolean, head: string, created: string) {
  return {
    id: 500 + n,
    url: `https://gitea.example/team/widget/pulls/${n}`,
    number: n,
    user: { id: 3, login: 'carol', full_name: 'Carol', email: 'carol@example.com' },
    title: `Pull ${n}`,
    body: '',
    state,
    is_locked: false,
    comments: 0,
    html_url: `https://gitea.example/team/widget/pulls/${n}`,
    diff_url: `https://gitea.example/team/widget/pulls/${n}.diff`,
    mergeable: !merged,
    merged,
    merged_at: merged ? created : null,
    merge_commit_sha: merged ? 'e'.repeat(40) : null,
    base: { label: 'main', ref: 'main', sha: 'f'.repeat(40), repo_id: 1 },
    head: { label: head, ref: head, sha: '0'.repeat(40), repo_id: 1 },
    created_at: created,
    updated_at: created,
    closed_at: state === 'closed' ? created : null,
  };
}

const PULLS = [
  pull(4, 'open', false, 'feature/x', '2026-04-04T09:00:00+02:00'),
  pull(3, 'closed', true, 'feature/x', '2026-04-03T07:00:00Z'),
  pull(2, 'closed', false, 'spike', '2026-04-02T07:00:00Z'),
  pull(1, 'open', false, 'spike', '2026-04-01T07:00:00Z'),
];

/** Gitea's Link header (built from page/limit) plus X-Total-Count. */
function paged(url: URL, items: unknown[], per: number) {
  const page = Number(url.searchParams.get('page') ?? '1');
  const pages = Math.max(1, Math.ceil(items.length / per));
  const link = (p: number) => `<${mock.origin}${url.pathname}?limit=${per}&page=${p}>`;
  const rels: string[] = [];
  if (page < pages) rels.push(`${link(page + 1)}; rel="next"`, `${link(pages)}; rel="last"`);
  if (page > 1) rels.push(`${link(1)}; rel="first"`, `${link(page - 1)}; rel="prev"`);
  const headers: Record<string, string> = { 'X-Total-Count': String(items.length) };
  if (rels.length > 0) headers.Link = rels.join(',');
  return { body: items.slice((page - 1) * per, page * per), headers };
}

function servePulls() {
  mock.handle((_req, res, url) => {
    if (url.pathname !== `${REPO}/pulls`) return json(res, 404, { message: 'The target couldn\'t be found.', errors: [] });
    const state = url.searchParams.get('state') ?? 'open';
    const { body, headers } = paged(url, PULLS.filter((p) => state === 'all' || p.state === state), 3); // server caps limit at 3
    json(res, 200, body, headers);
  });
}

describe('gitea branches', () => {
  it('reads every page (Link header), with Authorization: token', async () => {
    mock.handle((_req, res, url) => {
      if (url.pathname !== `${REPO}/branches`) return json(res, 404, { message: 'not found' });
      const { body, headers } = paged(url, ['main', 'dev', 'feature/x', 'spike', 'release/1.0'].map(branch), 2);
      json(res, 200, body, headers);
    });
    await expect(listBranches(target, TOKEN)).resolves.toEqual(['main', 'dev', 'feature/x', 'spike', 'release/1.0']);
    expect(mock.requests.map((r) => new URL(r.url, 'http://x').searchParams.get('page'))).toEqual(['1', '2', '3']);
    for (const r of mock.requests) {
      expect(r.url.startsWith(`${REPO}/branches?`)).toBe(true);
      expect(new URL(r.url, 'http://x').searchParams.get('limit')).toBe('50');
      expect(r.headers.authorization).toBe(`token ${TOKEN}`);
    }
  });

  it('without a Link header, keeps going while pages are full', async () => {
    const names = Array.from({ length: 53 }, (_, i) => `b${i}`);
    mock.handle((_req, res, url) => {
      const page = Number(url.searchParams.get('page'));
      json(res, 200, names.slice((page - 1) * 50, page * 50).map(branch));
    });
    await expect(listBranches(target, TOKEN)).resolves.toEqual(names);
    expect(mock.requests).toHaveLength(2);
  });

  it('needs api_base_url (no public default) and sends nothing without it', async () => {
    const err = await providerError(listBranches({ ...target, apiBaseUrl: null }, TOKEN));
    expect(err.kind).toBe('unavailable');
    expect(err.message).toBe('gitea repositories need api_base_url');
    expect(mock.requests).toHaveLength(0);
  });
});

describe('gitea merge requests', () => {
  it('maps open/closed/merged, newest first, across pages', async () => {
    servePulls();
    const mrs = await listMergeRequests(target, TOKEN, { state: 'all' });
    expect(mrs.map((m) => [m.id, m.state])).toEqual([
      [4, 'opened'],
      [3, 'merged'],
      [2, 'closed'],
      [1, 'opened'],
    ]);
    expect(mrs[0]).toEqual({
      id: 4,
      title: 'Pull 4',
      state: 'opened',
      source_branch: 'feature/x',
      target_branch: 'main',
      author: 'carol',
      url: 'https://gitea.example/team/widget/pulls/4',
      created_at: '2026-04-04T07:00:00.000Z',
    });
    expect(mock.requests).toHaveLength(2);
    expect(new URL(mock.requests[0].url, 'http://x').searchParams.get('state')).toBe('all');
    for (const r of mock.requests) expect(r.headers.authorization).toBe(`token ${TOKEN}`);
  });

  it('state=merged asks for closed pulls and keeps the merged ones; state=closed the others', async () => {
    servePulls();
    expect((await listMergeRequests(target, TOKEN, { state: 'merged' })).map((m) => m.id)).toEqual([3]);
    expect(new URL(mock.requests[0].url, 'http://x').searchParams.get('state')).toBe('closed');
    expect((await listMergeRequests(target, TOKEN, { state: 'closed' })).map((m) => m.id)).toEqual([2]);
  });

  it('filters by source branch', async () => {
    servePulls();
    expect((await listMergeRequests(target, TOKEN, { state: 'opened', branch: 'spike' })).map((m) => m.id)).toEqual([1]);
    expect(new URL(mock.requests[0].url, 'http://x').searchParams.get('state')).toBe('open');
    expect((await listMergeRequests(target, TOKEN, { state: 'all', branch: 'feature/x' })).map((m) => m.id)).toEqual([4, 3]);
  });
});

describe('gitea failures', () => {
  it('401 is rejected, and the message does not contain the token', async () => {
    mock.handle((_req, res) => json(res, 401, { message: 'user does not exist [uid: 0, name: ]', url: 'https://gitea.example/api/swagger' }));
    const err = await providerError(listBranches(target, TOKEN));
    expect(err.kind).toBe('rejected');
    expect(err.message).not.toContain(TOKEN);
  });

  it('403 is rejected', async () => {
    mock.handle((_req, res) => json(res, 403, { message: 'token does not have at least one of required scope(s): [read:repository]' }));
    expect((await providerError(listMergeRequests(target, TOKEN, { state: 'all' }))).kind).toBe('rejected');
  });

  it('500 is unavailable', async () => {
    mock.handle((_req, res) => json(res, 500, { message: 'internal error' }));
    expect((await providerError(listBranches(target, TOKEN))).kind).toBe('unavailable');
  });

  it('a closed port is unavailable', async () => {
    const port = await unusedPort();
    const err = await providerError(listBranches({ ...target, apiBaseUrl: `http://127.0.0.1:${port}/api/v1` }, TOKEN));
    expect(err.kind).toBe('unavailable');
    expect(err.message).toMatch(/ECONNREFUSED/);
  });

  it('a provider that never answers is unavailable within the timeout', async () => {
    mock.handle(hang);
    const started = Date.now();
    const err = await providerError(listMergeRequests(target, TOKEN, { state: 'all' }, { timeoutMs: 500 }));
    const elapsed = Date.now() - started;
    expect(err.kind).toBe('unavailable');
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(2_000);
  });

  it('a provider that paginates forever is cut off', async () => {
    mock.handle((_req, res, url) => json(res, 200, [branch(`b${url.searchParams.get('page')}`)], { Link: `<${mock.origin}/next>; rel="next"` }));
    const err = await providerError(listBranches(target, TOKEN));
    expect(err.kind).toBe('unavailable');
    expect(err.message).toContain('more than 100 pages');
    expect(mock.requests).toHaveLength(100);
  });
});
