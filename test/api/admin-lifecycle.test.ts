/**
 * Administration beyond creating things (docs/decisions.md "Operations"; docs/api.md "Administration"):
 * registration tokens single-use by default, `uses`, list (never the token) and revoke; PATCH of
 * organizations (the default one's prefix `DEF` included); PATCH and DELETE of repositories (token
 * replaced or cleared), users and custom agents, with what a delete does to what references them:
 * refused (409 RESOURCE_IN_USE) while loops or active pods use it, detached otherwise.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bootstrapIfEmpty } from '../../src/domain/admin/bootstrap.ts';
import { hashSecret } from '../../src/domain/auth/keys.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES, createTestStore } from '../helpers/databases.ts';
import { expectError } from '../helpers/errors.ts';
import { insertRunner } from '../helpers/runners.ts';

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

interface RunnerTokenJson {
  id: number;
  prefix: string | null;
  labels: string[];
  uses: number;
  uses_left: number;
  status: string;
  expires_at: string;
  revoked_at: string | null;
  created_at: string;
}

const registration = (token: string, name = 'box') => ({ token, name, labels: [], max_pods: 2, version: '1', os: 'linux', arch: 'x64' });

describe.each(DATABASES)('administration lifecycle on %s', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await startTestApp(kind);
  });
  afterEach(async () => {
    await t?.close();
  });

  const admin = (method: Method, url: string, payload?: unknown) =>
    t.request({ method, url: `/api/v1/admin${url}`, payload: payload as object, key: null, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const ok = <T>(res: LightMyRequestResponse, status = 200): T => {
    expect(res.statusCode, res.body).toBe(status);
    return res.json() as T;
  };
  const register = (token: string, name?: string) => t.request({ method: 'POST', url: '/api/v1/runner/register', key: null, payload: registration(token, name) });
  const issue = async (body: Record<string, unknown> = {}, org = 'acme') =>
    ok<{ token: string; runner_token: RunnerTokenJson }>(await admin('POST', `/orgs/${org}/runner-tokens`, body), 201);

  describe('registration tokens', () => {
    it('are single-use by default: the second registration is refused, the token shows as used', async () => {
      const { token, runner_token } = await issue({ labels: ['gpu'] });
      expect(runner_token).toMatchObject({ prefix: token.slice(0, 12), labels: ['gpu'], uses: 1, uses_left: 1, status: 'active', revoked_at: null });
      expect((await register(token, 'first')).statusCode).toBe(201);
      const again = expectError(await register(token, 'second'), 401, 'INVALID_API_KEY');
      expect(again.error).toMatch(/used up|not valid/);
      const [listed] = ok<{ runner_tokens: RunnerTokenJson[] }>(await admin('GET', '/orgs/acme/runner-tokens')).runner_tokens;
      expect(listed).toMatchObject({ id: runner_token.id, uses: 1, uses_left: 0, status: 'used' });
      expect(await t.store.db.selectFrom('runners').select('name').execute()).toEqual([{ name: 'first' }]);
    });

    it('`uses` makes one reusable that many times, and two registrations cannot share the last use', async () => {
      const { token } = await issue({ uses: 3 });
      expect((await register(token, 'a')).statusCode).toBe(201);
      const racing = await Promise.all([register(token, 'b'), register(token, 'c'), register(token, 'd')]);
      expect(racing.map((r) => r.statusCode).sort()).toEqual([201, 201, 401]);
      expect(await t.store.db.selectFrom('runners').select('id').execute()).toHaveLength(3);
    });

    it.each([[0], [1001], [-1], ['3'], [1.5]])('uses %j → 400 naming /uses', async (uses) => {
      const body = expectError(await admin('POST', '/orgs/acme/runner-tokens', { uses }), 400, 'VALIDATION_FAILED');
      expect(body.details!.map((d) => d.field)).toContain('/uses');
    });

    it('are listed newest first with prefix, labels, uses left and expiry, never the token or its hash', async () => {
      const first = await issue({ uses: 5, expires_in_hours: 2 });
      const second = await issue({ labels: ['eu'] });
      const list = await admin('GET', '/orgs/acme/runner-tokens');
      const { runner_tokens } = ok<{ runner_tokens: RunnerTokenJson[] }>(list);
      expect(runner_tokens.map((r) => r.id)).toEqual([second.runner_token.id, first.runner_token.id]);
      expect(Object.keys(runner_tokens[0]).sort()).toEqual(['created_at', 'expires_at', 'id', 'labels', 'prefix', 'revoked_at', 'status', 'uses', 'uses_left']);
      for (const secret of [first.token, second.token, hashSecret(first.token), hashSecret(second.token)]) expect(list.body).not.toContain(secret);
      // Another org sees none of them.
      await t.createOrg('globex');
      expect(ok<{ runner_tokens: RunnerTokenJson[] }>(await admin('GET', '/orgs/globex/runner-tokens')).runner_tokens).toEqual([]);
      expectError(await admin('GET', '/orgs/nope/runner-tokens'), 404, 'NOT_FOUND');
    });

    it('DELETE revokes: registering with it is refused, runners it registered keep working; twice is harmless', async () => {
      const { token, runner_token } = await issue({ uses: 10 });
      expect((await register(token, 'before')).statusCode).toBe(201);
      expect(ok<{ message: string }>(await admin('DELETE', `/orgs/acme/runner-tokens/${runner_token.id}`)).message).toMatch(/revoked/);
      expectError(await register(token, 'after'), 401, 'INVALID_API_KEY');
      const [listed] = ok<{ runner_tokens: RunnerTokenJson[] }>(await admin('GET', '/orgs/acme/runner-tokens')).runner_tokens;
      expect(listed).toMatchObject({ status: 'revoked', uses_left: 9, revoked_at: expect.any(String) });
      expect((await admin('DELETE', `/orgs/acme/runner-tokens/${runner_token.id}`)).statusCode).toBe(200);
      expect(await t.store.db.selectFrom('runners').select('name').execute()).toEqual([{ name: 'before' }]);
    });

    it('DELETE of an unknown id, another org\'s token or a malformed id: 404 / 400', async () => {
      await t.createOrg('globex');
      const foreign = await issue({}, 'globex');
      expectError(await admin('DELETE', `/orgs/acme/runner-tokens/${foreign.runner_token.id}`), 404, 'NOT_FOUND');
      expectError(await admin('DELETE', '/orgs/acme/runner-tokens/999999'), 404, 'NOT_FOUND');
      expectError(await admin('DELETE', '/orgs/acme/runner-tokens/abc'), 400, 'VALIDATION_FAILED');
      expect((await register(foreign.token)).statusCode).toBe(201);
    });

    it('an expired token lists as expired and is refused', async () => {
      const { token, runner_token } = await issue();
      await t.store.db.updateTable('runner_tokens').set({ expires_at: Date.now() - 1 }).where('id', '=', runner_token.id).execute();
      expectError(await register(token), 401, 'INVALID_API_KEY');
      expect(ok<{ runner_tokens: RunnerTokenJson[] }>(await admin('GET', '/orgs/acme/runner-tokens')).runner_tokens[0].status).toBe('expired');
    });
  });

  describe('PATCH /admin/orgs/{org}', () => {
    it('renames and changes the ticket prefix: new tickets take it, existing slugs stay', async () => {
      const before = ok<{ ticket: { slug: string } }>(await t.request({ method: 'POST', url: t.path('/tickets'), payload: { type: 'bug', title: 'old' } }), 201);
      const { org } = ok<{ org: { name: string; ticket_prefix: string; slug: string } }>(await admin('PATCH', '/orgs/acme', { name: 'Acme Corp', ticket_prefix: 'AC' }));
      expect(org).toMatchObject({ slug: 'acme', name: 'Acme Corp', ticket_prefix: 'AC' });
      const after = ok<{ ticket: { slug: string } }>(await t.request({ method: 'POST', url: t.path('/tickets'), payload: { type: 'bug', title: 'new' } }), 201);
      expect(after.ticket.slug).toBe('AC-1');
      expect(ok<{ ticket: { slug: string } }>(await t.request({ method: 'GET', url: t.path(`/tickets/${before.ticket.slug}`) })).ticket.slug).toBe(before.ticket.slug);
      expect(ok<{ orgs: { slug: string; name: string }[] }>(await admin('GET', '/orgs')).orgs.find((o) => o.slug === 'acme')?.name).toBe('Acme Corp');
    });

    it.each([
      [{}, '/'],
      [{ ticket_prefix: 'lower' }, '/ticket_prefix'],
      [{ ticket_prefix: 'TOOLONGPREFIX' }, '/ticket_prefix'],
      [{ name: '' }, '/name'],
      [{ slug: 'renamed' }, '/slug'],
      [{ name: 3 }, '/name'],
    ])('%j → 400 naming %s', async (payload, field) => {
      const body = expectError(await admin('PATCH', '/orgs/acme', payload), 400, 'VALIDATION_FAILED');
      expect(body.details!.map((d) => d.field)).toContain(field);
    });

    it('an unknown org is 404; the admin token is required', async () => {
      expectError(await admin('PATCH', '/orgs/nope', { name: 'x' }), 404, 'NOT_FOUND');
      expectError(await t.request({ method: 'PATCH', url: '/api/v1/admin/orgs/acme', payload: { name: 'x' } }), 401, 'AUTH_REQUIRED');
    });
  });

  describe('PATCH and DELETE users', () => {
    const createUser = async (email: string) =>
      ok<{ user: { id: number } }>(await admin('POST', '/orgs/acme/users', { name: 'Ann', email }), 201).user.id;

    it('PATCH changes name and email (lower-cased); a taken email is 409', async () => {
      const ann = await createUser('ann@example.com');
      await createUser('bob@example.com');
      expect(ok<{ user: { name: string; email: string } }>(await admin('PATCH', `/orgs/acme/users/${ann}`, { name: 'Ann B', email: 'Ann.B@Example.com' })).user).toMatchObject({
        name: 'Ann B',
        email: 'ann.b@example.com',
      });
      expectError(await admin('PATCH', `/orgs/acme/users/${ann}`, { email: 'bob@example.com' }), 409, 'ALREADY_EXISTS');
      expectError(await admin('PATCH', '/orgs/acme/users/999999', { name: 'x' }), 404, 'NOT_FOUND');
      expectError(await admin('PATCH', `/orgs/acme/users/${ann}`, { email: 'not-an-email' }), 400, 'VALIDATION_FAILED');
    });

    it('DELETE unassigns their tickets (and the ticket reads show it); nothing else goes', async () => {
      const ann = await createUser('ann@example.com');
      const created = ok<{ ticket: { slug: string; assignee_id: number } }>(
        await t.request({ method: 'POST', url: t.path('/tickets'), payload: { type: 'task', title: 'assigned', assignee_id: ann } }),
        201,
      );
      expect(ok<{ ticket: { assignee_id: number | null } }>(await t.request({ method: 'GET', url: t.path(`/tickets/${created.ticket.slug}`) })).ticket.assignee_id).toBe(ann);
      expect(ok<{ message: string }>(await admin('DELETE', `/orgs/acme/users/${ann}`)).message).toMatch(/1 ticket unassigned/);
      const ticket = ok<{ ticket: { assignee_id: number | null } }>(await t.request({ method: 'GET', url: t.path(`/tickets/${created.ticket.slug}`) })).ticket;
      expect(ticket.assignee_id).toBeNull();
      expect(ok<{ total: number }>(await t.request({ method: 'GET', url: t.path('/tickets') })).total).toBe(1);
      expect(ok<{ users: unknown[] }>(await admin('GET', '/orgs/acme/users')).users).toEqual([]);
      expectError(await admin('DELETE', `/orgs/acme/users/${ann}`), 404, 'NOT_FOUND');
    });
  });

  describe('PATCH and DELETE repositories', () => {
    const createRepository = async (extra: Record<string, unknown> = {}) =>
      ok<{ repository: { id: number; has_token: boolean } }>(
        await admin('POST', '/orgs/acme/repositories', { name: 'web', full_name: 'acme/web', provider: 'github', url: 'https://github.com/acme/web.git', ...extra }),
        201,
      ).repository;
    const storedToken = async (id: number) =>
      (await t.store.db.selectFrom('repositories').select('token_encrypted').where('id', '=', id).executeTakeFirstOrThrow()).token_encrypted;

    it('a token can be replaced and cleared, and is never shown', async () => {
      const repo = await createRepository({ token: 'ghp_first' });
      const replaced = await admin('PATCH', `/orgs/acme/repositories/${repo.id}`, { token: 'ghp_second', default_branch: 'trunk' });
      expect(ok<{ repository: { has_token: boolean; default_branch: string } }>(replaced).repository).toMatchObject({ has_token: true, default_branch: 'trunk' });
      expect(replaced.body).not.toContain('ghp_second');
      expect(t.secrets.decrypt((await storedToken(repo.id))!)).toBe('ghp_second');
      const cleared = ok<{ repository: { has_token: boolean } }>(await admin('PATCH', `/orgs/acme/repositories/${repo.id}`, { token: null }));
      expect(cleared.repository.has_token).toBe(false);
      expect(await storedToken(repo.id)).toBeNull();
    });

    it('other fields: checked together with the kept ones; provider is not changeable; names stay unique', async () => {
      const repo = await createRepository({ ticket_prefix: 'WEB' });
      await createRepository({ name: 'api', full_name: 'acme/api' });
      expect(ok<{ repository: { ticket_prefix: string | null; name: string } }>(await admin('PATCH', `/orgs/acme/repositories/${repo.id}`, { ticket_prefix: null, name: 'site' })).repository).toMatchObject({
        ticket_prefix: null,
        name: 'site',
      });
      expectError(await admin('PATCH', `/orgs/acme/repositories/${repo.id}`, { name: 'api' }), 409, 'ALREADY_EXISTS');
      expectError(await admin('PATCH', `/orgs/acme/repositories/${repo.id}`, { provider: 'gitlab' }), 400, 'VALIDATION_FAILED');
      expectError(await admin('PATCH', `/orgs/acme/repositories/${repo.id}`, { full_name: 'no-slash' }), 400, 'VALIDATION_FAILED');
      expectError(await admin('PATCH', `/orgs/acme/repositories/${repo.id}`, { url: 'https://user:pw@github.com/acme/web.git' }), 400, 'VALIDATION_FAILED');
      expectError(await admin('PATCH', `/orgs/acme/repositories/${repo.id}`, {}), 400, 'VALIDATION_FAILED');
      expectError(await admin('PATCH', '/orgs/acme/repositories/999999', { name: 'x' }), 404, 'NOT_FOUND');
      const gitea = await createRepository({ name: 'tea', full_name: 'acme/tea', provider: 'gitea', api_base_url: 'https://gitea.example.com/api/v1' });
      const body = expectError(await admin('PATCH', `/orgs/acme/repositories/${gitea.id}`, { api_base_url: null }), 400, 'VALIDATION_FAILED');
      expect(body.details!.map((d) => d.field)).toContain('/api_base_url');
    });

    it('DELETE is refused (409, naming them) while a loop or an active pod uses it', async () => {
      const repo = await createRepository();
      const loop = await t.request({ method: 'POST', url: t.path('/loops'), payload: { name: 'Uses it', slug: 'uses-it', agent_slug: 'shell', prompt_template: 'echo', repository_id: repo.id } });
      expect(loop.statusCode, loop.body).toBe(201);
      const refused = expectError(await admin('DELETE', `/orgs/acme/repositories/${repo.id}`), 409, 'RESOURCE_IN_USE');
      expect(refused.error).toMatch(/uses-it/);
      expect((await t.request({ method: 'DELETE', url: t.path('/loops/uses-it') })).statusCode).toBe(200);

      await insertRunner(t.store, t.org.id);
      const pod = await t.request({ method: 'POST', url: t.path('/pods'), payload: { agent_slug: 'shell', agentfile_layer: `PROMPT "true"\nREPO ${repo.id}` } });
      expect(pod.statusCode, pod.body).toBe(201);
      const key = (pod.json() as { pod: { pod_key: string } }).pod.pod_key;
      expect(expectError(await admin('DELETE', `/orgs/acme/repositories/${repo.id}`), 409, 'RESOURCE_IN_USE').error).toContain(key);
      expect((await t.request({ method: 'POST', url: t.path(`/pods/${key}/terminate`) })).statusCode).toBe(200);
      // The pod has ended: the repository can go, and the pod keeps the id it ran with.
      expect((await admin('DELETE', `/orgs/acme/repositories/${repo.id}`)).statusCode).toBe(200);
      expect(ok<{ pod: { repository_id: number } }>(await t.request({ method: 'GET', url: t.path(`/pods/${key}`) })).pod.repository_id).toBe(repo.id);
    });

    it('DELETE detaches its tickets and channels; totals and boards stay right', async () => {
      const repo = await createRepository({ ticket_prefix: 'WEB' });
      for (const title of ['one', 'two']) {
        expect((await t.request({ method: 'POST', url: t.path('/tickets'), payload: { type: 'bug', title, repository_id: repo.id } })).statusCode).toBe(201);
      }
      expect((await t.request({ method: 'POST', url: t.path('/tickets'), payload: { type: 'bug', title: 'org-wide' } })).statusCode).toBe(201);
      const channel = await t.request({ method: 'POST', url: t.path('/channels'), payload: { name: 'web-chat', repository_id: repo.id } });
      expect(channel.statusCode, channel.body).toBe(201);
      const channelId = (channel.json() as { channel: { id: number } }).channel.id;

      const deleted = ok<{ message: string }>(await admin('DELETE', `/orgs/acme/repositories/${repo.id}`));
      expect(deleted.message).toMatch(/2 tickets and 1 channels detached/);
      const list = ok<{ tickets: { slug: string; repository_id: number | null }[]; total: number }>(await t.request({ method: 'GET', url: t.path('/tickets') }));
      expect(list.total).toBe(3);
      expect(list.tickets.map((x) => x.repository_id)).toEqual([null, null, null]);
      expect(list.tickets.map((x) => x.slug).filter((s) => s.startsWith('WEB-')).sort()).toEqual(['WEB-1', 'WEB-2']);
      const { board } = ok<{ board: { columns: { status: string; total: number }[] } }>(await t.request({ method: 'GET', url: t.path('/tickets/board') }));
      expect(board.columns.find((c) => c.status === 'backlog')?.total).toBe(3);
      // No count is left on the deleted repository.
      expect(await t.store.db.selectFrom('ticket_counts').select('n').where('repo_key', '=', repo.id).execute()).toEqual([]);
      expect(ok<{ channel: { repository_id: number | null } }>(await t.request({ method: 'GET', url: t.path(`/channels/${channelId}`) })).channel.repository_id).toBeNull();
      expectError(await t.request({ method: 'GET', url: t.path(`/repositories/${repo.id}`) }), 404, 'NOT_FOUND');
      expectError(await admin('DELETE', `/orgs/acme/repositories/${repo.id}`), 404, 'NOT_FOUND');
    });
  });

  describe('PATCH and DELETE custom agents', () => {
    const createAgent = async (slug = 'my-bot') =>
      ok<{ agent: { slug: string } }>(await admin('POST', '/orgs/acme/agents', { slug, name: 'Bot', command: '/usr/bin/bot', args: ['--fast'] }), 201).agent;

    it('PATCH changes name, command, args and prompt position; the slug stays', async () => {
      await createAgent();
      expect(ok<{ agent: Record<string, unknown> }>(await admin('PATCH', '/orgs/acme/agents/my-bot', { command: '/opt/bot', args: [], prompt_position: 'stdin' })).agent).toMatchObject({
        slug: 'my-bot',
        name: 'Bot',
        command: '/opt/bot',
        args: [],
        prompt_position: 'stdin',
      });
      expectError(await admin('PATCH', '/orgs/acme/agents/my-bot', { slug: 'other' }), 400, 'VALIDATION_FAILED');
      expectError(await admin('PATCH', '/orgs/acme/agents/my-bot', { prompt_position: 'middle' }), 400, 'VALIDATION_FAILED');
      expectError(await admin('PATCH', '/orgs/acme/agents/nope', { name: 'x' }), 404, 'NOT_FOUND');
    });

    it('DELETE is refused while a loop names it or a pod running it is active, then goes', async () => {
      await createAgent();
      const loop = await t.request({ method: 'POST', url: t.path('/loops'), payload: { name: 'Bot loop', slug: 'bot-loop', custom_agent_slug: 'my-bot', prompt_template: 'go' } });
      expect(loop.statusCode, loop.body).toBe(201);
      expect(expectError(await admin('DELETE', '/orgs/acme/agents/my-bot'), 409, 'RESOURCE_IN_USE').error).toMatch(/bot-loop/);
      expect((await t.request({ method: 'DELETE', url: t.path('/loops/bot-loop') })).statusCode).toBe(200);

      await insertRunner(t.store, t.org.id);
      const pod = await t.request({ method: 'POST', url: t.path('/pods'), payload: { agent_slug: 'my-bot', agentfile_layer: 'PROMPT "hi"' } });
      expect(pod.statusCode, pod.body).toBe(201);
      const key = (pod.json() as { pod: { pod_key: string } }).pod.pod_key;
      expect(expectError(await admin('DELETE', '/orgs/acme/agents/my-bot'), 409, 'RESOURCE_IN_USE').error).toContain(key);
      expect((await t.request({ method: 'POST', url: t.path(`/pods/${key}/terminate`) })).statusCode).toBe(200);
      expect((await admin('DELETE', '/orgs/acme/agents/my-bot')).statusCode).toBe(200);
      expect(ok<{ agents: unknown[] }>(await admin('GET', '/orgs/acme/agents')).agents).toEqual([]);
      expectError(await admin('DELETE', '/orgs/acme/agents/my-bot'), 404, 'NOT_FOUND');
    });
  });

  it('API keys: created, listed with expires_at, revoked', async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const created = ok<{ api_key: { id: number; expires_at: string } }>(await admin('POST', '/orgs/acme/api-keys', { name: 'ci', scopes: ['tickets:read'], expires_at: expiresAt }), 201);
    expect(created.api_key.expires_at).toBe(expiresAt);
    const listed = ok<{ api_keys: { id: number; expires_at: string | null }[] }>(await admin('GET', '/orgs/acme/api-keys')).api_keys;
    expect(listed.find((k) => k.id === created.api_key.id)?.expires_at).toBe(expiresAt);
    expect((await admin('DELETE', `/orgs/acme/api-keys/${created.api_key.id}`)).statusCode).toBe(200);
  });
});

describe.each(DATABASES)('first start on %s', (kind) => {
  it('the default organization gets the ticket prefix DEF, changeable through PATCH /admin/orgs/default', async () => {
    const { store, cleanup } = await createTestStore(kind);
    try {
      const created = await bootstrapIfEmpty({ store, now: Date.now });
      expect(created?.org).toBe('default');
      const org = await store.db.selectFrom('orgs').selectAll().where('slug', '=', 'default').executeTakeFirstOrThrow();
      expect(org.ticket_prefix).toBe('DEF');
    } finally {
      await cleanup();
    }
    const t = await startTestApp(kind);
    try {
      await t.createOrg('default', 'DEF');
      const res = await t.request({ method: 'PATCH', url: '/api/v1/admin/orgs/default', key: null, payload: { ticket_prefix: 'MAIN' }, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(res.statusCode, res.body).toBe(200);
      expect((res.json() as { org: { ticket_prefix: string } }).org.ticket_prefix).toBe('MAIN');
    } finally {
      await t.close();
    }
  });
});
