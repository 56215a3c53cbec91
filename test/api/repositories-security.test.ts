/**
 * The security matrix of the four repository endpoints (docs/api.md "Authentication",
 * "Errors", "Requests"): keys, scopes, foreign organizations and repositories,
 * a sweep of malformed ids and query strings, malformed admin bodies, and that no access token —
 * the caller's or the stored one — ever reaches a log line.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/protocol/scopes.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { unusedPort } from '../helpers/ports.ts';
import { hang, json, startMockProvider, type MockProvider } from '../providers/helpers.ts';
import { expectError } from '../helpers/errors.ts';
import { securityMatrix } from '../helpers/security-matrix.ts';

const CALLER_TOKEN = 'ghp_CallerToken_0123456789';

interface Endpoint {
  name: string;
  /** Path below /orgs/{org} for repository `id`, with whatever query the call needs to succeed. */
  path: (id: number | string, extraQuery?: string) => string;
  addressesRepository: boolean;
}

const withQuery = (base: string, query: string[], extra?: string) => {
  const all = [...query, ...(extra ? [extra] : [])];
  return all.length ? `${base}?${all.join('&')}` : base;
};

const ENDPOINTS: Endpoint[] = [
  { name: 'GET /repositories', path: (_id, extra) => withQuery('/repositories', [], extra), addressesRepository: false },
  { name: 'GET /repositories/:id', path: (id, extra) => withQuery(`/repositories/${id}`, [], extra), addressesRepository: true },
  {
    name: 'GET /repositories/:id/branches',
    path: (id, extra) => withQuery(`/repositories/${id}/branches`, [`access_token=${CALLER_TOKEN}`], extra),
    addressesRepository: true,
  },
  {
    name: 'GET /repositories/:id/merge-requests',
    path: (id, extra) => withQuery(`/repositories/${id}/merge-requests`, [], extra),
    addressesRepository: true,
  },
];

/** The contract's error body (docs/api.md "Errors"), and the status and code. */

let mock: MockProvider;
beforeAll(async () => {
  mock = await startMockProvider();
});
afterAll(async () => {
  await mock.close();
});

describe.each(DATABASES)('repository endpoints security on %s', (kind) => {
  let t: TestApp;
  const clock = Date.parse('2026-03-01T12:00:00.000Z');
  let repoId: number;
  let foreignRepoId: number;
  let globexKey: string;
  let noReposKey: string;

  const admin = (method: 'GET' | 'POST', url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({
      method,
      url: `/api/v1/admin${url}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers },
      ...(payload === undefined ? {} : { payload: payload as string }),
    });

  const register = async (org: string, name: string): Promise<number> => {
    const res = await admin('POST', `/orgs/${org}/repositories`, {
      name,
      full_name: 'acme/web',
      provider: 'github',
      url: 'https://github.example/acme/web.git',
      api_base_url: `${mock.origin}/api/v3`,
      token: 'ghp_stored_token',
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().repository.id;
  };

  const send = (ep: Endpoint, options: { id?: number | string; org?: string; key?: string | null; headers?: Record<string, string>; query?: string } = {}) =>
    t.request({ method: 'GET', url: t.path(ep.path(options.id ?? repoId, options.query), options.org), key: options.key, headers: options.headers });

  const repositoryCount = async () =>
    Number((await t.store.db.selectFrom('repositories').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  beforeAll(async () => {
    t = await startTestApp(kind, { now: () => clock, providerTimeoutMs: 2_000 });
    const globex = await t.createOrg('globex');
    globexKey = (await t.issueKey(SCOPES, { org: globex })).key;
    noReposKey = (await t.issueKey(SCOPES.filter((s) => s !== 'repos:read'))).key;
    repoId = await register('acme', 'web');
    foreignRepoId = await register('globex', 'theirs');
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(() => {
    mock.reset();
    mock.handle((_req, res) => json(res, 200, []));
  });

  securityMatrix<number>(
    ENDPOINTS.map((ep) => ({ ...ep, method: 'GET', scope: 'repos:read', path: (id: number) => ep.path(id), success: 200, addresses: ep.addressesRepository, changes: false })),
    {
      app: () => t,
      now: () => clock,
      foreign: () => ({ org: 'globex', key: globexKey, target: foreignRepoId }),
      target: () => repoId,
      missing: 999_999,
      probe: () => '/repositories',
      snapshot: repositoryCount,
      // The provider is never asked on a refused request.
      untouched: () => expect(mock.requests).toHaveLength(0),
    },
  );

  describe.each(ENDPOINTS)('$name', (ep) => {
    if (ep.addressesRepository) {
      it.each(['abc', '-1', '0', '1.5', '1e400', '99999999999999999999', '%20', 'null'])('id %s → 400 VALIDATION_FAILED naming id', async (id) => {
        const body = expectError(await send(ep, { id }), 400, 'VALIDATION_FAILED');
        expect(body.details!.map((d) => d.field)).toContain('id');
        expect(mock.requests).toHaveLength(0);
      });
    }

    it('an unknown query parameter → 400 naming it', async () => {
      for (const query of ['foo=1', 'limit=10', 'access-token=x']) {
        const body = expectError(await send(ep, { query }), 400, 'VALIDATION_FAILED');
        expect(body.details!.map((d) => d.field)).toContain(query.split('=')[0]);
      }
      expect(mock.requests).toHaveLength(0);
    });
  });

  describe('malformed query strings', () => {
    const branches = ENDPOINTS[2];
    const mergeRequests = ENDPOINTS[3];
    const branchesPath = (query: string) => t.path(`/repositories/${repoId}/branches${query}`);

    it.each([
      ['?access_token=' + 'x'.repeat(4097), 'access_token'],
      ['?access_token=', 'access_token'],
      ['', 'access_token'],
      ['?access_token=two%20words', 'access_token'],
      ['?access_token=a%0Ab', 'access_token'],
      ['?access_token=a&access_token=b', 'access_token'],
    ])('branches%s → 400 naming %s', async (query, field) => {
      const body = expectError(await t.request({ method: 'GET', url: branchesPath(query) }), 400, 'VALIDATION_FAILED');
      expect(body.details!.map((d) => d.field)).toContain(field);
      expect(body.error).not.toMatch(/xxxx|two words/);
      expect(mock.requests).toHaveLength(0);
    });

    it('an oversized or empty X-Git-Access-Token → 400', async () => {
      for (const value of ['x'.repeat(4097), '']) {
        const res = await t.request({ method: 'GET', url: branchesPath(''), headers: { 'x-git-access-token': value } });
        expectError(res, 400, 'VALIDATION_FAILED');
      }
      expect(mock.requests).toHaveLength(0);
      // 4096 characters is still a token.
      expect((await t.request({ method: 'GET', url: branchesPath(''), headers: { 'x-git-access-token': 'x'.repeat(4096) } })).statusCode).toBe(200);
    });

    it.each(['open', 'ALL', '', 'merged,closed'])('merge-requests state=%s → 400 naming state', async (state) => {
      const body = expectError(await send(mergeRequests, { query: `state=${state}` }), 400, 'VALIDATION_FAILED');
      expect(body.details!.map((d) => d.field)).toContain('state');
    });

    it('merge-requests with an empty, oversized or repeated branch → 400 naming branch', async () => {
      for (const query of ['branch=', `branch=${'b'.repeat(256)}`, 'branch=a&branch=b']) {
        const body = expectError(await send(mergeRequests, { query }), 400, 'VALIDATION_FAILED');
        expect(body.details!.map((d) => d.field)).toContain('branch');
      }
      expect(mock.requests).toHaveLength(0);
    });

    it('a malformed query does not hide the 401/403/404 before it', async () => {
      expectError(await send(branches, { key: null, query: 'foo=1' }), 401, 'AUTH_REQUIRED');
      expectError(await send(mergeRequests, { key: noReposKey, query: 'state=bogus' }), 403, 'INSUFFICIENT_SCOPE');
      expectError(await send(branches, { key: globexKey, id: 'abc' }), 404, 'NOT_FOUND');
    });
  });

  describe('POST /api/v1/admin/orgs/{org}/repositories with malformed bodies', () => {
    const url = '/orgs/acme/repositories';
    const json = { 'content-type': 'application/json' };

    it.each([
      { name: 'invalid JSON', payload: '{"name": "x",', status: 400, code: 'INVALID_JSON' },
      { name: 'an empty body', payload: '', status: 400, code: 'VALIDATION_FAILED' },
      { name: 'a JSON array', payload: '[]', status: 400, code: 'VALIDATION_FAILED' },
      { name: 'a JSON string', payload: '"web"', status: 400, code: 'VALIDATION_FAILED' },
      { name: 'JSON null', payload: 'null', status: 400, code: 'VALIDATION_FAILED' },
      { name: 'wrong types', payload: '{"name": 3, "full_name": ["a"], "provider": true, "url": {}}', status: 400, code: 'VALIDATION_FAILED' },
      { name: 'nulls', payload: '{"name": "web", "full_name": "acme/web", "provider": "github", "url": "https://x/y", "token": null}', status: 400, code: 'VALIDATION_FAILED' },
      { name: 'an oversized url', payload: JSON.stringify({ name: 'web', full_name: 'acme/web', provider: 'github', url: `https://x/${'y'.repeat(3000)}` }), status: 400, code: 'VALIDATION_FAILED' },
      { name: 'an unknown field', payload: JSON.stringify({ name: 'web', full_name: 'acme/web', provider: 'github', url: 'https://x/y', access_token: 'x' }), status: 400, code: 'VALIDATION_FAILED' },
    ])('$name → $status $code, nothing written', async ({ payload, status, code }) => {
      const before = await repositoryCount();
      expectError(await admin('POST', url, payload, json), status, code);
      expect(await repositoryCount()).toBe(before);
    });

    it('a body that is not JSON → 415, nothing written', async () => {
      const before = await repositoryCount();
      expectError(await admin('POST', url, 'name=web', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
      expect(await repositoryCount()).toBe(before);
    });
  });
});

describe.each(DATABASES)('repository tokens never reach the log, on %s', (kind) => {
  const lines: string[] = [];
  let t: TestApp;

  beforeAll(async () => {
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(chunk.toString('utf8'));
        callback();
      },
    });
    t = await startTestApp(kind, { logger: pino({ level: 'trace' }, stream), providerTimeoutMs: 500 });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('not the caller token, nor the stored token, on success or on any failure', async () => {
    const secret = 'SECRET-abc';
    const stored = 'SECRET-stored-xyz';
    const adminHeaders = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const create = async (body: Record<string, unknown>) => {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/orgs/acme/repositories', headers: adminHeaders, payload: body });
      return res;
    };
    const github = (await create({ name: 'gh', full_name: 'acme/web', provider: 'github', url: 'https://x/y', api_base_url: `${mock.origin}/api/v3`, token: stored })).json().repository.id;
    const gitlab = (await create({ name: 'gl', full_name: 'g/p', provider: 'gitlab', url: 'https://x/y', api_base_url: `${mock.origin}/api/v4`, token: stored })).json().repository.id;
    const gitHttp = (await create({ name: 'git', full_name: 'a/b', provider: 'git', url: `${mock.origin}/repo.git` })).json().repository.id;
    const port = await unusedPort();
    const down = (await create({ name: 'down', full_name: 'acme/web', provider: 'github', url: 'https://x/y', api_base_url: `http://127.0.0.1:${port}` })).json().repository.id;
    // Invalid admin bodies carrying a token.
    expect((await create({ name: 'bad', full_name: 'acme/web', provider: 'github', url: 'ftp://x', token: stored })).statusCode).toBe(400);
    expect((await create({ name: 'bad', full_name: 'acme/web', provider: 'github', url: 'https://x/y', token: `${stored} x` })).statusCode).toBe(400);

    const get = (url: string, headers: Record<string, string> = {}) => t.request({ method: 'GET', url: t.path(url), headers });
    const statuses: number[] = [];
    for (const [handler, repos] of [
      [(_req: unknown, res: Parameters<typeof json>[0]) => json(res, 500, { message: `boom ${secret} ${stored}` }), [github, gitlab, gitHttp]],
      [(_req: unknown, res: Parameters<typeof json>[0]) => json(res, 401, { message: 'Bad credentials' }), [github, gitlab, gitHttp]],
      [hang, [github, gitHttp]],
    ] as const) {
      mock.handle(handler);
      for (const id of repos) {
        statuses.push((await get(`/repositories/${id}/branches?access_token=${secret}`)).statusCode);
        statuses.push((await get(`/repositories/${id}/branches`, { 'x-git-access-token': secret })).statusCode);
        statuses.push((await get(`/repositories/${id}/merge-requests?state=opened`)).statusCode);
      }
    }
    statuses.push((await get(`/repositories/${down}/branches?access_token=${secret}`)).statusCode);
    statuses.push((await get(`/repositories/${github}/branches?access_token=${secret}&foo=1`)).statusCode);
    statuses.push((await get(`/repositories/${github}/branches?access_token=${secret}%20x`)).statusCode);
    statuses.push((await get(`/repositories/abc/branches?access_token=${secret}`)).statusCode);
    statuses.push((await t.request({ method: 'GET', url: t.path(`/repositories/${github}/branches?access_token=${secret}`), key: null })).statusCode);
    mock.handle((_req, res) => json(res, 200, [{ name: 'main' }]));
    statuses.push((await get(`/repositories/${github}/branches?access_token=${secret}`)).statusCode);
    // Another spelling of the parameter name must be redacted too.
    statuses.push((await get(`/repositories/${github}/branches?access%5Ftoken=${secret}`)).statusCode);

    expect(new Set(statuses)).toEqual(new Set([200, 400, 401, 502]));
    expect(mock.requests.some((r) => r.headers.authorization === `token ${secret}`)).toBe(true);
    expect(mock.requests.some((r) => r.headers.authorization === `token ${stored}`)).toBe(true);

    const output = lines.join('');
    expect(lines.length).toBeGreaterThan(statuses.length); // one line per request, plus error lines
    expect(output).toContain('access_token=%5Bredacted%5D');
    expect(output).toContain('"code":"PROVIDER_ERROR"'); // the 502s were logged (as warnings: only INTERNAL is an error), with their messages
    expect(output).toContain('github did not answer within 500 ms');
    expect(output).not.toContain('SECRET');
    expect(output).not.toContain(Buffer.from(`x-access-token:${secret}`).toString('base64'));
  });
});
