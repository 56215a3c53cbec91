/**
 * Repositories (docs/api.md "Repositories", "Administration"): registering them through the admin API, the
 * org API's list and detail, and branches and merge requests read live from a provider — a
 * local mock HTTP server standing in for GitHub, GitLab and Gitea, and a real bare repository
 * for plain `git`.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type { ServerResponse } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { unusedPort } from '../helpers/ports.ts';
import { hang, json, startMockProvider, type MockProvider } from '../providers/helpers.ts';

const TIMEOUT_MS = 1_500;
const STORED_TOKEN = 'ghp_StoredToken_0123456789abcdefXYZ';
const CALLER_TOKEN = 'ghp_CallerToken_9876543210fedcbaQRS';

let mock: MockProvider;
let tmp: string;
let bare: string;

/** Runs git for the fixture with a clean, predictable configuration. */
function git(cwd: string, ...args: string[]): void {
  execFileSync(
    'git',
    ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'commit.gpgsign=false', '-c', 'init.defaultBranch=main', ...args],
    { cwd, stdio: 'pipe', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: os.devNull, GIT_TERMINAL_PROMPT: '0' } },
  );
}

beforeAll(async () => {
  mock = await startMockProvider();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-repos-api-'));
  bare = path.join(tmp, 'app.git');
  const work = path.join(tmp, 'work');
  fs.mkdirSync(work);
  git(tmp, 'init', '--bare', '-q', bare);
  git(work, 'init', '-q');
  fs.writeFileSync(path.join(work, 'README.md'), 'hello\n');
  git(work, 'add', 'README.md');
  git(work, 'commit', '-q', '-m', 'first');
  git(work, 'branch', 'develop');
  git(work, 'push', '-q', bare, 'main', 'develop', 'HEAD:refs/heads/feature/x', 'HEAD:refs/tags/v1');
});

afterAll(async () => {
  await mock.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** Serves `items` two per page with a `Link: rel="next"` (GitHub, GitLab and Gitea all read it). */
function paged(res: ServerResponse, url: URL, items: unknown[]): void {
  const page = Number(url.searchParams.get('page') ?? '1');
  const pages = Math.max(1, Math.ceil(items.length / 2));
  const headers: Record<string, string> = { 'x-page': String(page), 'x-total-pages': String(pages), 'x-next-page': page < pages ? String(page + 1) : '' };
  if (page < pages) {
    const next = new URL(`${mock.origin}${url.pathname}${url.search}`);
    next.searchParams.set('page', String(page + 1));
    headers.Link = `<${next.toString()}>; rel="next"`;
  }
  json(res, 200, items.slice((page - 1) * 2, page * 2), headers);
}

const BRANCH_NAMES = ['main', 'develop', 'feature/login', 'fix/typo', 'release/1.0'];

// GitHub pull requests (GET /repos/{owner}/{repo}/pulls), trimmed to what is read plus a little.
function pull(n: number, state: 'open' | 'closed', head: string, created: string, mergedAt: string | null) {
  return {
    number: n,
    id: 1000 + n,
    state,
    title: `PR ${n}`,
    user: { login: 'octocat' },
    created_at: created,
    merged_at: mergedAt,
    head: { ref: head },
    base: { ref: 'main' },
    html_url: `https://github.example/acme/web/pull/${n}`,
  };
}
const PULLS = [
  pull(4, 'open', 'feature/login', '2026-03-04T10:00:00Z', null),
  pull(3, 'closed', 'feature/login', '2026-03-03T10:00:00Z', '2026-03-03T11:00:00Z'),
  pull(2, 'closed', 'fix/typo', '2026-03-02T10:00:00Z', null),
  pull(1, 'open', 'fix/typo', '2026-03-01T10:00:00Z', null),
];

/**
 * Removes what a test of this file may have written (tickets and their numbering, repositories,
 * organizations besides the app's own), so the next test sees what a fresh app has.
 */
async function forgetAll(t: TestApp): Promise<void> {
  await t.store.transaction(async (trx) => {
    await trx.deleteFrom('ticket_labels').execute();
    await trx.deleteFrom('tickets').execute();
    await trx.deleteFrom('ticket_sequences').execute();
    await trx.deleteFrom('ticket_counts').execute();
    await trx.deleteFrom('repositories').execute();
    await trx.deleteFrom('api_keys').where('org_id', '!=', t.org.id).execute();
    await trx.deleteFrom('orgs').where('id', '!=', t.org.id).execute();
  });
}

describe.each(DATABASES)('repositories API on %s', (kind) => {
  // One app for the file (a fresh app per test cost a schema and every migration each, 4–8 s on
  // PostgreSQL): each test starts from what a fresh app has, as `forgetAll` puts it back.
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind, { providerTimeoutMs: TIMEOUT_MS });
  });
  afterAll(async () => t.close());
  beforeEach(() => mock.reset());
  afterEach(async () => forgetAll(t));

  const adminCall = (method: 'GET' | 'POST', url: string, payload?: unknown, token: string | null = ADMIN_TOKEN) =>
    t.app.inject({
      method,
      url: `/api/v1/admin${url}`,
      headers: token === null ? {} : { authorization: `Bearer ${token}` },
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });

  const register = async (body: Record<string, unknown>, org = 'acme') => {
    const response = await adminCall('POST', `/orgs/${org}/repositories`, body);
    expect(response.statusCode, response.body).toBe(201);
    return response.json().repository as { id: number; [k: string]: unknown };
  };

  const github = (extra: Record<string, unknown> = {}) =>
    register({ name: 'web', full_name: 'acme/web', provider: 'github', url: 'https://github.example/acme/web.git', api_base_url: `${mock.origin}/api/v3`, ...extra });

  const repositoryCount = async () =>
    Number((await t.store.db.selectFrom('repositories').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  describe('POST /api/v1/admin/orgs/{org}/repositories', () => {
    it('registers a repository with defaults and answers with the admin view', async () => {
      const response = await adminCall('POST', '/orgs/acme/repositories', {
        name: 'web',
        full_name: 'acme/web',
        provider: 'github',
        url: 'https://github.com/acme/web.git',
      });
      expect(response.statusCode).toBe(201);
      expect(response.json()).toEqual({
        repository: {
          id: expect.any(Number),
          name: 'web',
          full_name: 'acme/web',
          provider: 'github',
          url: 'https://github.com/acme/web.git',
          default_branch: 'main',
          ticket_prefix: null,
          api_base_url: null,
          has_token: false,
          created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        },
      });
    });

    it('keeps every optional field; the admin list shows them newest first', async () => {
      await register({ name: 'first', full_name: 'acme/first', provider: 'git', url: bare });
      const second = await register({
        name: 'second',
        full_name: 'group/sub/project',
        provider: 'gitlab',
        url: 'git@gitlab.example:group/sub/project.git',
        default_branch: 'develop',
        ticket_prefix: 'SEC',
        api_base_url: 'https://gitlab.example/api/v4',
        token: 'glpat-secret',
      });
      expect(second).toMatchObject({ default_branch: 'develop', ticket_prefix: 'SEC', api_base_url: 'https://gitlab.example/api/v4', has_token: true });
      const list = await adminCall('GET', '/orgs/acme/repositories');
      expect(list.statusCode).toBe(200);
      expect(list.json().repositories.map((r: { name: string }) => r.name)).toEqual(['second', 'first']);
    });

    it.each([
      ['https://github.com/acme/web.git', 'github'],
      ['http://git.internal:8080/acme/web.git', 'gitea'],
      ['ssh://git@github.com/acme/web.git', 'github'],
      ['git@github.com:acme/web.git', 'github'],
      // Local paths and file:// URLs must name a git repository: people-hygiene.test.ts.
      ['ssh://git@host:2222/srv/web.git', 'git'],
    ])('accepts the clone URL %s for %s', async (url, provider) => {
      await register({ name: 'r', full_name: 'acme/web', provider, url, ...(provider === 'gitea' ? { api_base_url: 'https://gitea.example/api/v1' } : {}) });
    });

    it.each([
      [{ full_name: 'acme/web', provider: 'github', url: 'https://x/y' }, '/name'],
      [{ name: '   ', full_name: 'acme/web', provider: 'github', url: 'https://x/y' }, '/name'],
      [{ name: 'web', provider: 'github', url: 'https://x/y' }, '/full_name'],
      [{ name: 'web', full_name: 'acme/web', url: 'https://x/y' }, '/provider'],
      [{ name: 'web', full_name: 'acme/web', provider: 'bitbucket', url: 'https://x/y' }, '/provider'],
      [{ name: 'web', full_name: 'acme/web', provider: 'github' }, '/url'],
      [{ name: 'web', full_name: 'acme/web', provider: 'github', url: '' }, '/url'],
      [{ name: 'web', full_name: 'acme/web', provider: 'github', url: 'not a url' }, '/url'],
      [{ name: 'web', full_name: 'acme/web', provider: 'github', url: 'ftp://github.com/acme/web' }, '/url'],
      [{ name: 'web', full_name: 'acme/web', provider: 'github', url: 'https://user:ghp_x@github.com/acme/web.git' }, '/url'],
      [{ name: 'web', full_name: 'acme/web', provider: 'github', url: 'https://ghp_x@github.com/acme/web.git' }, '/url'],
      [{ name: 'web', full_name: 'acme/web', provider: 'github', url: '/srv/git/web.git' }, '/url'],
      [{ name: 'web', full_name: 'acme/web', provider: 'github', url: 'file:///srv/git/web.git' }, '/url'],
      [{ name: 'web', full_name: 'acme/web', provider: 'git', url: '--upload-pack=touch /tmp/x' }, '/url'],
      [{ name: 'web', full_name: 'acme/web', provider: 'git', url: 'relative/path.git' }, '/url'],
      [{ name: 'web', full_name: 'just-a-name', provider: 'github', url: 'https://x/y' }, '/full_name'],
      [{ name: 'web', full_name: 'a/b/c', provider: 'gitea', url: 'https://x/y', api_base_url: 'https://g/api/v1' }, '/full_name'],
      [{ name: 'web', full_name: 'project', provider: 'gitlab', url: 'https://x/y' }, '/full_name'],
      [{ name: 'web', full_name: 'acme/web', provider: 'github', url: 'https://x/y', api_base_url: 'ftp://api.example' }, '/api_base_url'],
      [{ name: 'web', full_name: 'acme/web', provider: 'github', url: 'https://x/y', api_base_url: 'not a url' }, '/api_base_url'],
      [{ name: 'web', full_name: 'acme/web', provider: 'github', url: 'https://x/y', api_base_url: 'https://api.example/?token=1' }, '/api_base_url'],
      [{ name: 'web', full_name: 'acme/web', provider: 'git', url: '/srv/web.git', api_base_url: 'https://api.example' }, '/api_base_url'],
      [{ name: 'web', full_name: 'acme/web', provider: 'gitea', url: 'https://x/y' }, '/api_base_url'],
      [{ name: 'web', full_name: 'acme/web', provider: 'github', url: 'https://x/y', ticket_prefix: 'web' }, '/ticket_prefix'],
      [{ name: 'web', full_name: 'acme/web', provider: 'github', url: 'https://x/y', ticket_prefix: 'TOOLONGPREFIX' }, '/ticket_prefix'],
      [{ name: 'web', full_name: 'acme/web', provider: 'github', url: 'https://x/y', default_branch: 'has space' }, '/default_branch'],
      [{ name: 'web', full_name: 'acme/web', provider: 'github', url: 'https://x/y', default_branch: '-x' }, '/default_branch'],
      [{ name: 'web', full_name: 'acme/web', provider: 'github', url: 'https://x/y', token: '' }, '/token'],
      [{ name: 'web', full_name: 'acme/web', provider: 'github', url: 'https://x/y', token: 'x'.repeat(4097) }, '/token'],
      [{ name: 'web', full_name: 'acme/web', provider: 'github', url: 'https://x/y', token: 'two words' }, '/token'],
      [{ name: 'web', full_name: 'acme/web', provider: 'github', url: 'https://x/y', token: 42 }, '/token'],
      [{ name: 'web', full_name: 'acme/web', provider: 'github', url: 'https://x/y', secret: 'x' }, '/secret'],
    ])('rejects %j naming %s, writing nothing', async (payload, field) => {
      const response = await adminCall('POST', '/orgs/acme/repositories', payload);
      expect(response.statusCode, response.body).toBe(400);
      const body = response.json();
      expect(body.code).toBe('VALIDATION_FAILED');
      expect(body.details.map((d: { field: string }) => d.field)).toContain(field);
      expect(await repositoryCount()).toBe(0);
    });

    it('reports every problem of the body at once', async () => {
      const response = await adminCall('POST', '/orgs/acme/repositories', {
        name: 'web',
        full_name: 'nope',
        provider: 'github',
        url: 'ftp://x',
        api_base_url: 'mailto:x',
        token: 'ok-token',
      });
      expect(response.statusCode).toBe(400);
      expect(response.json().details.map((d: { field: string }) => d.field)).toEqual(['/full_name', '/url', '/api_base_url']);
    });

    it('refuses a token with whitespace by the schema, which states the rule', async () => {
      const response = await adminCall('POST', '/orgs/acme/repositories', { name: 'web', full_name: 'a/b', provider: 'github', url: 'https://github.com/a/b.git', token: 'a b' });
      expect(response.statusCode).toBe(400);
      expect(response.json().details).toEqual([{ field: '/token', message: 'token must not contain whitespace or control characters' }]);
    });

    it('refuses a second repository of the same name in the org (409), not in another org', async () => {
      await register({ name: 'web', full_name: 'acme/web', provider: 'github', url: 'https://x/y' });
      const again = await adminCall('POST', '/orgs/acme/repositories', { name: 'web', full_name: 'acme/other', provider: 'github', url: 'https://x/z' });
      expect(again.statusCode).toBe(409);
      expect(again.json().code).toBe('ALREADY_EXISTS');
      await t.createOrg('other');
      await register({ name: 'web', full_name: 'acme/web', provider: 'github', url: 'https://x/y' }, 'other');
    });

    it('404s for an unknown organization (create and list)', async () => {
      const create = await adminCall('POST', '/orgs/nope/repositories', { name: 'web', full_name: 'acme/web', provider: 'github', url: 'https://x/y' });
      expect(create.statusCode).toBe(404);
      expect(create.json().code).toBe('NOT_FOUND');
      expect((await adminCall('GET', '/orgs/nope/repositories')).statusCode).toBe(404);
      expect(await repositoryCount()).toBe(0);
    });

    it('requires the admin token (401), an API key will not do', async () => {
      const body = { name: 'web', full_name: 'acme/web', provider: 'github', url: 'https://x/y' };
      for (const [token, code] of [
        [null, 'AUTH_REQUIRED'],
        ['wrong-admin-token', 'INVALID_API_KEY'],
        [t.key, 'INVALID_API_KEY'],
      ] as const) {
        for (const response of [await adminCall('POST', '/orgs/acme/repositories', body, token), await adminCall('GET', '/orgs/acme/repositories', undefined, token)]) {
          expect(response.statusCode).toBe(401);
          expect(response.json().code).toBe(code);
        }
      }
      expect(await repositoryCount()).toBe(0);
    });

    it('stores the token encrypted and never shows it, in any response', async () => {
      const bodies: string[] = [];
      const keep = (r: LightMyRequestResponse) => {
        bodies.push(r.body, JSON.stringify(r.headers));
        return r;
      };
      const created = keep(
        await adminCall('POST', '/orgs/acme/repositories', {
          name: 'web',
          full_name: 'acme/web',
          provider: 'github',
          url: 'https://github.example/acme/web.git',
          api_base_url: `${mock.origin}/api/v3`,
          token: STORED_TOKEN,
        }),
      );
      expect(created.statusCode).toBe(201);
      const { id } = created.json().repository;
      expect(created.json().repository.has_token).toBe(true);

      const row = await t.store.db.selectFrom('repositories').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      expect(row.token_encrypted).not.toBeNull();
      expect(row.token_encrypted).not.toContain(STORED_TOKEN);
      expect(row.token_encrypted).toMatch(/^v1:/);
      expect(t.secrets.decrypt(row.token_encrypted!)).toBe(STORED_TOKEN);
      expect(JSON.stringify(row).includes(STORED_TOKEN)).toBe(false);

      keep(await adminCall('GET', '/orgs/acme/repositories'));
      keep(await t.request({ method: 'GET', url: t.path('/repositories') }));
      keep(await t.request({ method: 'GET', url: t.path(`/repositories/${id}`) }));
      mock.handle((_req, res) => json(res, 200, []));
      keep(await t.request({ method: 'GET', url: t.path(`/repositories/${id}/merge-requests`) }));
      mock.handle((_req, res) => json(res, 401, { message: 'Bad credentials' }));
      const refused = keep(await t.request({ method: 'GET', url: t.path(`/repositories/${id}/merge-requests`) }));
      expect(refused.statusCode).toBe(502);
      mock.handle((_req, res) => json(res, 500, { message: `echo ${STORED_TOKEN}` }));
      keep(await t.request({ method: 'GET', url: t.path(`/repositories/${id}/merge-requests`) }));
      keep(await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' }));
      expect(bodies.length).toBeGreaterThan(10);
      for (const body of bodies) expect(body).not.toContain(STORED_TOKEN);
      // The provider did receive it, in the Authorization header.
      expect(mock.requests.some((r) => r.headers.authorization === `token ${STORED_TOKEN}`)).toBe(true);
    });

    it("gives tickets of the repository the repository's ticket prefix", async () => {
      const web = await register({ name: 'web', full_name: 'acme/web', provider: 'github', url: 'https://x/y', ticket_prefix: 'WEB' });
      const plain = await register({ name: 'api', full_name: 'acme/api', provider: 'github', url: 'https://x/z' });
      const slugs: string[] = [];
      for (const repository_id of [web.id, web.id, plain.id, undefined]) {
        const response = await t.request({ method: 'POST', url: t.path('/tickets'), payload: { type: 'task', title: 'x', repository_id } });
        expect(response.statusCode, response.body).toBe(201);
        slugs.push(response.json().ticket.slug);
      }
      expect(slugs).toEqual(['WEB-1', 'WEB-2', 'ACME-1', 'ACME-2']);
    });
  });

  describe('GET /repositories and /repositories/:id', () => {
    it('lists newest first with exactly the spec fields, and gets one', async () => {
      const a = await register({ name: 'a', full_name: 'acme/a', provider: 'github', url: 'https://github.com/acme/a.git', token: STORED_TOKEN, ticket_prefix: 'AAA' });
      const b = await register({ name: 'b', full_name: 'grp/b', provider: 'gitlab', url: 'https://gitlab.com/grp/b.git', default_branch: 'trunk' });
      const list = await t.request({ method: 'GET', url: t.path('/repositories') });
      expect(list.statusCode).toBe(200);
      const { repositories } = list.json();
      expect(repositories.map((r: { id: number }) => r.id)).toEqual([b.id, a.id]);
      for (const r of repositories) expect(Object.keys(r).sort()).toEqual(['created_at', 'default_branch', 'full_name', 'id', 'name', 'provider', 'url']);
      expect(repositories[0]).toEqual({
        id: b.id,
        name: 'b',
        full_name: 'grp/b',
        provider: 'gitlab',
        url: 'https://gitlab.com/grp/b.git',
        default_branch: 'trunk',
        created_at: b.created_at,
      });
      const one = await t.request({ method: 'GET', url: t.path(`/repositories/${a.id}`) });
      expect(one.statusCode).toBe(200);
      expect(one.json()).toEqual({ repository: repositories[1] });
    });

    it('is empty for an org without repositories, and does not show other orgs', async () => {
      await t.createOrg('other');
      await register({ name: 'theirs', full_name: 'o/t', provider: 'github', url: 'https://x/y' }, 'other');
      const list = await t.request({ method: 'GET', url: t.path('/repositories') });
      expect(list.json()).toEqual({ repositories: [] });
    });

    it('400s for ids that are not positive integers, 404s for unknown and foreign ones', async () => {
      await t.createOrg('other');
      const theirs = await register({ name: 'theirs', full_name: 'o/t', provider: 'github', url: 'https://x/y' }, 'other');
      for (const id of ['abc', '1.5', '0', '-1']) {
        const response = await t.request({ method: 'GET', url: t.path(`/repositories/${id}`) });
        expect(response.statusCode, id).toBe(400);
        expect(response.json().code).toBe('VALIDATION_FAILED');
        expect(response.json().details[0].field).toBe('id');
      }
      for (const id of [theirs.id, 999_999]) {
        const response = await t.request({ method: 'GET', url: t.path(`/repositories/${id}`) });
        expect(response.statusCode).toBe(404);
        expect(response.json()).toMatchObject({ code: 'NOT_FOUND', error: 'repository not found' });
      }
    });
  });

  describe('GET /repositories/:id/branches', () => {
    const branches = (id: number, query = `?access_token=${CALLER_TOKEN}`, headers: Record<string, string> = {}) =>
      t.request({ method: 'GET', url: t.path(`/repositories/${id}/branches${query}`), headers });

    it('github: reads every page with the caller token, which is not stored', async () => {
      const repo = await github({ token: STORED_TOKEN });
      mock.handle((_req, res, url) => {
        if (!url.pathname.startsWith('/api/v3/repos/acme/web/branches')) return json(res, 404, { message: 'Not Found' });
        paged(res, url, BRANCH_NAMES.map((name) => ({ name, commit: { sha: 'a'.repeat(40) }, protected: false })));
      });
      const response = await branches(repo.id);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toEqual({ branches: BRANCH_NAMES });
      expect(mock.requests).toHaveLength(3);
      for (const r of mock.requests) expect(r.headers.authorization).toBe(`token ${CALLER_TOKEN}`);
      const row = await t.store.db.selectFrom('repositories').selectAll().where('id', '=', repo.id).executeTakeFirstOrThrow();
      expect(t.secrets.decrypt(row.token_encrypted!)).toBe(STORED_TOKEN);
      expect(JSON.stringify(row)).not.toContain(CALLER_TOKEN);
    });

    it('gitlab: URL-encoded project path, Bearer token, every page', async () => {
      const repo = await register({
        name: 'gl',
        full_name: 'grp/sub/proj',
        provider: 'gitlab',
        url: 'https://gitlab.example/grp/sub/proj.git',
        api_base_url: `${mock.origin}/api/v4`,
      });
      mock.handle((_req, res, url) => {
        if (url.pathname !== '/api/v4/projects/grp%2Fsub%2Fproj/repository/branches') return json(res, 404, { message: '404 Project Not Found' });
        paged(res, url, BRANCH_NAMES.map((name) => ({ name, merged: false, protected: false, default: name === 'main' })));
      });
      const response = await branches(repo.id);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json().branches).toEqual(BRANCH_NAMES);
      expect(mock.requests).toHaveLength(3);
      for (const r of mock.requests) expect(r.headers.authorization).toBe(`Bearer ${CALLER_TOKEN}`);
    });

    it('gitea: every page, Authorization: token', async () => {
      const repo = await register({ name: 'gt', full_name: 'team/widget', provider: 'gitea', url: 'https://gitea.example/team/widget.git', api_base_url: `${mock.origin}/api/v1` });
      mock.handle((_req, res, url) => {
        if (url.pathname !== '/api/v1/repos/team/widget/branches') return json(res, 404, { message: 'not found' });
        paged(res, url, BRANCH_NAMES.map((name) => ({ name, commit: { id: 'd'.repeat(40) } })));
      });
      const response = await branches(repo.id);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json().branches).toEqual(BRANCH_NAMES);
      expect(mock.requests).toHaveLength(3);
      for (const r of mock.requests) expect(r.headers.authorization).toBe(`token ${CALLER_TOKEN}`);
    });

    it('git: lists the heads of a real bare repository given as a path', async () => {
      const repo = await register({ name: 'local', full_name: 'acme/local', provider: 'git', url: bare });
      const response = await branches(repo.id);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toEqual({ branches: ['develop', 'feature/x', 'main'] });
    });

    it('git: a path that is no longer a repository is 502', async () => {
      // Registration checks the path (400 when it is no repository): this one goes away afterwards.
      const gone = path.join(tmp, 'gone.git');
      execFileSync('git', ['init', '--quiet', '--bare', gone]);
      const repo = await register({ name: 'local', full_name: 'acme/local', provider: 'git', url: gone });
      fs.rmSync(gone, { recursive: true, force: true });
      const response = await branches(repo.id);
      expect(response.statusCode).toBe(502);
      expect(response.json().code).toBe('PROVIDER_ERROR');
    });

    it('requires an access token (400), before looking anything up', async () => {
      const repo = await github();
      for (const query of ['', '?access_token=']) {
        const response = await branches(repo.id, query);
        expect(response.statusCode).toBe(400);
        expect(response.json().code).toBe('VALIDATION_FAILED');
        expect(response.json().details[0].field).toBe('access_token');
      }
      expect((await branches(999_999, '')).statusCode).toBe(400);
      expect(mock.requests).toHaveLength(0);
    });

    it('takes the token from X-Git-Access-Token, which wins over the query', async () => {
      const repo = await github();
      mock.handle((_req, res) => json(res, 200, [{ name: 'main' }]));
      expect((await branches(repo.id, '', { 'x-git-access-token': 'header-token' })).statusCode).toBe(200);
      expect((await branches(repo.id, '?access_token=query-token', { 'x-git-access-token': 'header-token' })).statusCode).toBe(200);
      expect((await branches(repo.id, '?access_token=query-token')).statusCode).toBe(200);
      expect(mock.requests.map((r) => r.headers.authorization)).toEqual(['token header-token', 'token header-token', 'token query-token']);
    });

    it.each([401, 403])('a token the provider refuses (HTTP %i) is 400 "access token rejected by provider"', async (status) => {
      const repo = await github();
      mock.handle((_req, res) => json(res, status, { message: 'Bad credentials' }));
      const response = await branches(repo.id);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ code: 'VALIDATION_FAILED', error: 'access token rejected by provider' });
      expect(response.body).not.toContain(CALLER_TOKEN);
    });

    it('a provider failure (HTTP 500) is 502 PROVIDER_ERROR', async () => {
      for (const repo of [
        await github(),
        await register({ name: 'gl', full_name: 'g/p', provider: 'gitlab', url: 'https://x/y', api_base_url: `${mock.origin}/api/v4` }),
        await register({ name: 'gt', full_name: 'g/p', provider: 'gitea', url: 'https://x/y', api_base_url: `${mock.origin}/api/v1` }),
      ]) {
        mock.handle((_req, res) => json(res, 500, { message: 'Server Error' }));
        const response = await branches(repo.id);
        expect(response.statusCode).toBe(502);
        expect(response.json().code).toBe('PROVIDER_ERROR');
        expect(response.json().error).toMatch(/^could not list branches: .*500/);
        expect(response.body).not.toContain(CALLER_TOKEN);
      }
    });

    it('an unreachable provider (closed port) is 502', async () => {
      const port = await unusedPort();
      const repo = await github({ api_base_url: `http://127.0.0.1:${port}` });
      const response = await branches(repo.id);
      expect(response.statusCode).toBe(502);
      expect(response.json().code).toBe('PROVIDER_ERROR');
    });

    it('a provider that never answers is 502 within the configured budget', async () => {
      const repo = await github();
      mock.handle(hang);
      const started = Date.now();
      const response = await branches(repo.id);
      const elapsed = Date.now() - started;
      expect(response.statusCode).toBe(502);
      expect(response.json().code).toBe('PROVIDER_ERROR');
      expect(response.json().error).toContain(`${TIMEOUT_MS} ms`);
      expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
      expect(elapsed).toBeLessThan(TIMEOUT_MS + 3_000);
    });
  });

  describe('GET /repositories/:id/merge-requests', () => {
    const mergeRequests = (id: number, query = '') => t.request({ method: 'GET', url: t.path(`/repositories/${id}/merge-requests${query}`) });

    function servePulls() {
      mock.handle((_req, res, url) => {
        if (!url.pathname.startsWith('/api/v3/repos/acme/web/pulls')) return json(res, 404, { message: 'Not Found' });
        const state = url.searchParams.get('state') ?? 'open';
        paged(res, url, PULLS.filter((p) => state === 'all' || p.state === state));
      });
    }

    it('reads them live with the stored token, newest first, all states by default', async () => {
      const repo = await github({ token: STORED_TOKEN });
      servePulls();
      const response = await mergeRequests(repo.id);
      expect(response.statusCode, response.body).toBe(200);
      const { merge_requests } = response.json();
      expect(merge_requests.map((m: { id: number; state: string }) => [m.id, m.state])).toEqual([
        [4, 'opened'],
        [3, 'merged'],
        [2, 'closed'],
        [1, 'opened'],
      ]);
      expect(merge_requests[0]).toEqual({
        id: 4,
        title: 'PR 4',
        state: 'opened',
        source_branch: 'feature/login',
        target_branch: 'main',
        author: 'octocat',
        url: 'https://github.example/acme/web/pull/4',
        created_at: '2026-03-04T10:00:00.000Z',
      });
      expect(mock.requests.length).toBeGreaterThan(1);
      for (const r of mock.requests) expect(r.headers.authorization).toBe(`token ${STORED_TOKEN}`);
    });

    it('filters by state and by source branch', async () => {
      const repo = await github({ token: STORED_TOKEN });
      servePulls();
      const ids = async (query: string) => {
        const response = await mergeRequests(repo.id, query);
        expect(response.statusCode, response.body).toBe(200);
        return response.json().merge_requests.map((m: { id: number }) => m.id);
      };
      expect(await ids('?state=opened')).toEqual([4, 1]);
      expect(await ids('?state=merged')).toEqual([3]);
      expect(await ids('?state=closed')).toEqual([2]);
      expect(await ids('?state=all&branch=fix/typo')).toEqual([2, 1]);
      expect(await ids('?state=opened&branch=feature%2Flogin')).toEqual([4]);
      expect(await ids('?branch=nope')).toEqual([]);
    });

    it('gitlab: passes state and source_branch to the provider', async () => {
      const repo = await register({ name: 'gl', full_name: 'grp/proj', provider: 'gitlab', url: 'https://x/y', api_base_url: `${mock.origin}/api/v4`, token: 'glpat-stored' });
      mock.handle((_req, res) =>
        json(res, 200, [
          {
            iid: 5,
            title: 'MR 5',
            state: 'opened',
            source_branch: 'feature/a',
            target_branch: 'main',
            author: { username: 'alice' },
            web_url: 'https://gitlab.example/grp/proj/-/merge_requests/5',
            created_at: '2026-02-05T10:00:00.000Z',
          },
        ]),
      );
      const response = await mergeRequests(repo.id, '?state=opened&branch=feature/a');
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json().merge_requests).toEqual([
        { id: 5, title: 'MR 5', state: 'opened', source_branch: 'feature/a', target_branch: 'main', author: 'alice', url: 'https://gitlab.example/grp/proj/-/merge_requests/5', created_at: '2026-02-05T10:00:00.000Z' },
      ]);
      const sent = new URL(mock.requests[0].url, 'http://x');
      expect(sent.searchParams.get('state')).toBe('opened');
      expect(sent.searchParams.get('source_branch')).toBe('feature/a');
      expect(mock.requests[0].headers.authorization).toBe('Bearer glpat-stored');
    });

    it('a git repository has none, and nothing is called', async () => {
      const repo = await register({ name: 'local', full_name: 'acme/local', provider: 'git', url: bare, token: STORED_TOKEN });
      const response = await mergeRequests(repo.id, '?state=opened');
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ merge_requests: [] });
    });

    it('a repository without a token has none, and no request is made', async () => {
      const repo = await github();
      servePulls();
      const response = await mergeRequests(repo.id);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ merge_requests: [] });
      expect(mock.requests).toHaveLength(0);
    });

    it('a stored token the provider refuses is 502, saying so', async () => {
      const repo = await github({ token: STORED_TOKEN });
      mock.handle((_req, res) => json(res, 401, { message: 'Bad credentials' }));
      const response = await mergeRequests(repo.id);
      expect(response.statusCode).toBe(502);
      expect(response.json().code).toBe('PROVIDER_ERROR');
      expect(response.json().error).toMatch(/refused the repository's stored token/);
      expect(response.body).not.toContain(STORED_TOKEN);
    });

    it('a failing or silent provider is 502', async () => {
      const repo = await github({ token: STORED_TOKEN });
      mock.handle((_req, res) => json(res, 503, { message: 'down' }));
      const failed = await mergeRequests(repo.id);
      expect(failed.statusCode).toBe(502);
      expect(failed.json().error).toMatch(/^could not list merge requests: .*503/);
      mock.handle(hang);
      const started = Date.now();
      const silent = await mergeRequests(repo.id);
      expect(silent.statusCode).toBe(502);
      expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 3_000);
    });

    it('404s for unknown and foreign repositories, 400s for a bad state', async () => {
      await t.createOrg('other');
      const theirs = await register({ name: 'theirs', full_name: 'o/t', provider: 'github', url: 'https://x/y', token: STORED_TOKEN }, 'other');
      expect((await mergeRequests(theirs.id)).statusCode).toBe(404);
      expect((await mergeRequests(999_999)).statusCode).toBe(404);
      const bad = await mergeRequests(theirs.id, '?state=open');
      expect(bad.statusCode).toBe(400);
      expect(bad.json().details[0].field).toBe('state');
      expect(mock.requests).toHaveLength(0);
    });
  });
});
