import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { listBranches, listMergeRequests, type ProviderTarget } from '../../src/domain/repositories/providers/index.ts';
import { hang, json, providerError, startMockProvider, type MockProvider } from './helpers.ts';
import { unusedPort } from '../helpers/ports.ts';

const TOKEN = 'glpat-TestToken0123456789';
const PROJECT = '/api/v4/projects/my-group%2Fsub%2Fproject';
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
  target = { provider: 'gitlab', fullName: 'my-group/sub/project', url: 'https://gitlab.example/my-group/sub/project.git', apiBaseUrl: `${mock.origin}/api/v4` };
});

// Shape of GET /projects/:id/repository/branches items.
const branch = (name: string) => ({
  name,
  merged: false,
  protected: name === 'main',
  default: name === 'main',
  developers_can_push: false,
  developers_can_merge: false,
  can_push: true,
  web_url: `https://gitlab.example/my-group/sub/project/-/tree/${name}`,
  commit: { id: 'c'.repeat(40), short_id: 'cccccccc', title: 'commit', created_at: '2026-01-01T00:00:00.000+00:00' },
});

// Shape of GET /projects/:id/merge_requests items (trimmed).
function mr(iid: number, state: string, source: string, created: string, username = 'alice') {
  return {
    id: 90_000 + iid,
    iid,
    project_id: 42,
    title: `MR ${iid}`,
    description: '',
    state,
    created_at: created,
    updated_at: created,
    merged_at: state === 'merged' ? created : null,
    closed_at: state === 'closed' ? created : null,
    target_branch: 'main',
    source_branch: source,
    author: { id: 7, username, name: username.toUpperCase(), state: 'active', avatar_url: null, web_url: `https://gitlab.example/${username}` },
    draft: false,
    merge_status: 'can_be_merged',
    web_url: `https://gitlab.example/my-group/sub/project/-/merge_requests/${iid}`,
  };
}

const MRS = [
  mr(9, 'opened', 'feature/a', '2026-02-09T10:00:00.000Z'),
  mr(8, 'merged', 'feature/a', '2026-02-08T12:00:00.000+02:00', 'bob'), // self-managed instances send offsets
  mr(7, 'closed', 'fix/b', '2026-02-07T10:00:00.000Z'),
  mr(6, 'locked', 'fix/b', '2026-02-06T10:00:00.000Z'),
  mr(5, 'opened', 'fix/b', '2026-02-05T10:00:00.000Z'),
];

/** Offset pagination as GitLab does it: x-page/x-next-page/x-total-pages and a Link header. */
function paginate(url: URL, items: unknown[], per: number): { body: unknown[]; headers: Record<string, string> } {
  const page = Number(url.searchParams.get('page') ?? '1');
  const pages = Math.max(1, Math.ceil(items.length / per));
  const link = (p: number) => {
    const u = new URL(url.toString().replace('http://mock', mock.origin));
    u.searchParams.set('page', String(p));
    return u.toString();
  };
  const rels = [`<${link(1)}>; rel="first"`, `<${link(pages)}>; rel="last"`];
  if (page < pages) rels.unshift(`<${link(page + 1)}>; rel="next"`);
  return {
    body: items.slice((page - 1) * per, page * per),
    headers: {
      Link: rels.join(', '),
      'x-page': String(page),
      'x-next-page': page < pages ? String(page + 1) : '',
      'x-per-page': String(per),
      'x-total': String(items.length),
      'x-total-pages': String(pages),
    },
  };
}

function serveMrs() {
  mock.handle((_req, res, url) => {
    if (url.pathname !== `/api/v4/projects/my-group%2Fsub%2Fproject/merge_requests`) return json(res, 404, { message: '404 Project Not Found' });
    const state = url.searchParams.get('state');
    const source = url.searchParams.get('source_branch');
    const items = MRS.filter((m) => (state === null || m.state === state) && (source === null || m.source_branch === source));
    const { body, headers } = paginate(url, items, 2);
    json(res, 200, body, headers);
  });
}

describe('gitlab branches', () => {
  it('reads every page with Authorization: Bearer and the URL-encoded project path', async () => {
    mock.handle((_req, res, url) => {
      if (url.pathname !== `/api/v4/projects/my-group%2Fsub%2Fproject/repository/branches`) return json(res, 404, { message: '404 Project Not Found' });
      const { body, headers } = paginate(url, ['main', 'develop', 'feature/a', 'feature/b', 'hotfix'].map(branch), 2);
      json(res, 200, body, headers);
    });
    await expect(listBranches(target, TOKEN)).resolves.toEqual(['main', 'develop', 'feature/a', 'feature/b', 'hotfix']);
    expect(mock.requests).toHaveLength(3);
    for (const r of mock.requests) {
      expect(r.url.startsWith(`${PROJECT}/repository/branches?`)).toBe(true);
      expect(r.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(r.headers['private-token']).toBeUndefined();
    }
    expect(new URL(mock.requests[2].url, 'http://x').searchParams.get('page')).toBe('3');
  });

  it('accepts an instance root as api_base_url and a GitLab under a sub-path', async () => {
    mock.handle((_req, res) => json(res, 200, [branch('main')]));
    await listBranches({ ...target, apiBaseUrl: `${mock.origin}/` }, TOKEN);
    await listBranches({ ...target, apiBaseUrl: `${mock.origin}/gitlab/api/v4/` }, TOKEN);
    expect(mock.requests.map((r) => r.url.split('?')[0])).toEqual([
      `${PROJECT}/repository/branches`,
      `/gitlab${PROJECT}/repository/branches`,
    ]);
  });
});

describe('gitlab merge requests', () => {
  it('maps states (locked → closed), normalises timestamps to UTC ms, newest first, across pages', async () => {
    serveMrs();
    const mrs = await listMergeRequests(target, TOKEN, { state: 'all' });
    expect(mrs.map((m) => [m.id, m.state])).toEqual([
      [9, 'opened'],
      [8, 'merged'],
      [7, 'closed'],
      [6, 'closed'],
      [5, 'opened'],
    ]);
    expect(mrs[1]).toEqual({
      id: 8,
      title: 'MR 8',
      state: 'merged',
      source_branch: 'feature/a',
      target_branch: 'main',
      author: 'bob',
      url: 'https://gitlab.example/my-group/sub/project/-/merge_requests/8',
      created_at: '2026-02-08T10:00:00.000Z',
    });
    expect(mock.requests).toHaveLength(3);
    const q = new URL(mock.requests[0].url, 'http://x').searchParams;
    expect(q.get('state')).toBeNull();
    for (const r of mock.requests) expect(r.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('passes state and source_branch to GitLab', async () => {
    serveMrs();
    const mrs = await listMergeRequests(target, TOKEN, { state: 'opened', branch: 'fix/b' });
    expect(mrs.map((m) => m.id)).toEqual([5]);
    const q = new URL(mock.requests[0].url, 'http://x').searchParams;
    expect(q.get('state')).toBe('opened');
    expect(q.get('source_branch')).toBe('fix/b');
    expect((await listMergeRequests(target, TOKEN, { state: 'merged' })).map((m) => m.id)).toEqual([8]);
    expect((await listMergeRequests(target, TOKEN, { state: 'all', branch: 'feature/a' })).map((m) => m.id)).toEqual([9, 8]);
  });
});

describe('gitlab failures', () => {
  it('401 is rejected, and the message does not contain the token', async () => {
    mock.handle((_req, res) => json(res, 401, { message: '401 Unauthorized' }));
    const err = await providerError(listBranches(target, TOKEN));
    expect(err.kind).toBe('rejected');
    expect(err.message).not.toContain(TOKEN);
    expect((await providerError(listMergeRequests(target, TOKEN, { state: 'all' }))).kind).toBe('rejected');
  });

  it('403 is rejected', async () => {
    mock.handle((_req, res) => json(res, 403, { message: '403 Forbidden' }));
    expect((await providerError(listBranches(target, TOKEN))).kind).toBe('rejected');
  });

  it('500 is unavailable', async () => {
    mock.handle((_req, res) => json(res, 500, { message: '500 Internal Server Error' }));
    const err = await providerError(listMergeRequests(target, TOKEN, { state: 'all' }));
    expect(err.kind).toBe('unavailable');
    expect(err.message).toContain('500');
  });

  it('502 is unavailable after gitbeaker’s short retries, well within the budget', async () => {
    mock.handle((_req, res) => json(res, 502, { message: 'Bad Gateway' }));
    const started = Date.now();
    expect((await providerError(listBranches(target, TOKEN))).kind).toBe('unavailable');
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('404 is unavailable', async () => {
    mock.handle((_req, res) => json(res, 404, { message: '404 Project Not Found' }));
    expect((await providerError(listBranches(target, TOKEN))).kind).toBe('unavailable');
  });

  it('a closed port is unavailable', async () => {
    const port = await unusedPort();
    const err = await providerError(listBranches({ ...target, apiBaseUrl: `http://127.0.0.1:${port}/api/v4` }, TOKEN));
    expect(err.kind).toBe('unavailable');
    expect(err.message).toMatch(/ECONNREFUSED/);
  });

  it('a provider that never answers is unavailable within the timeout', async () => {
    mock.handle(hang);
    const started = Date.now();
    const err = await providerError(listBranches(target, TOKEN, { timeoutMs: 500 }));
    const elapsed = Date.now() - started;
    expect(err.kind).toBe('unavailable');
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(2_000);
  });

  it('an answer that is not a list is unavailable', async () => {
    mock.handle((_req, res) => json(res, 200, { message: 'surprise' }));
    expect((await providerError(listBranches(target, TOKEN))).kind).toBe('unavailable');
  });
});
