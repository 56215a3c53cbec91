import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { DATABASES } from '../helpers/databases.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';

/** The scope matrix and malformed-input sweep of the eleven loop endpoints, under both prefixes. */

const PREFIXES = [(org: string) => `/api/v1/ext/orgs/${org}`, (org: string) => `/api/v1/orgs/${org}`];

function expectError(response: LightMyRequestResponse, status: number, code: string) {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.json()).toMatchObject({ code, error: expect.any(String), request_id: response.headers['x-request-id'] });
}

describe.each(DATABASES)('loops: security and malformed input on %s', (kind) => {
  let t: TestApp;
  let otherKey: string;
  const counts = async () => {
    const loops = await t.store.db.selectFrom('loops').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const runs = await t.store.db.selectFrom('loop_runs').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return [Number(loops.n), Number(runs.n)];
  };

  beforeAll(async () => {
    t = await startTestApp(kind);
    const created = await t.request({ method: 'POST', url: t.path('/loops'), payload: { name: 'Main', slug: 'main', agent_slug: 'shell', prompt_template: 'echo {{ x }}', prompt_variables: { x: 1 } } });
    expect(created.statusCode, created.body).toBe(201);
    const trigger = await t.request({ method: 'POST', url: t.path('/loops/main/trigger') });
    expect(trigger.statusCode, trigger.body).toBe(201);
    const other = await t.createOrg('other');
    otherKey = (await t.issueKey(['loops:write'], { org: other })).key;
    const theirs = await t.request({ method: 'POST', url: t.path('/loops', 'other'), key: otherKey, payload: { name: 'Theirs', slug: 'theirs', agent_slug: 'shell', prompt_template: 'x' } });
    expect(theirs.statusCode, theirs.body).toBe(201);
  });
  afterAll(async () => t.close());

  const endpoints = [
    { method: 'GET', path: '/loops', scope: 'loops:read' },
    { method: 'POST', path: '/loops', scope: 'loops:write', payload: { name: 'N', prompt_template: 'x', agent_slug: 'shell' } },
    { method: 'GET', path: '/loops/main', scope: 'loops:read' },
    { method: 'PUT', path: '/loops/main', scope: 'loops:write', payload: { description: 'changed' } },
    { method: 'DELETE', path: '/loops/main', scope: 'loops:write' },
    { method: 'POST', path: '/loops/main/enable', scope: 'loops:write' },
    { method: 'POST', path: '/loops/main/disable', scope: 'loops:write' },
    { method: 'POST', path: '/loops/main/trigger', scope: 'loops:write' },
    { method: 'GET', path: '/loops/main/runs', scope: 'loops:read' },
    { method: 'GET', path: '/loops/main/runs/1', scope: 'loops:read' },
    { method: 'POST', path: '/loops/main/runs/1/cancel', scope: 'loops:write' },
  ] as const;

  it.each(PREFIXES.map((p, i) => [i === 0 ? '/api/v1/ext/orgs' : '/api/v1/orgs', p] as const))('under %s: 401, 403 and 404 come in order and write nothing', async (_label, prefix) => {
    const before = await counts();
    const revoked = await t.issueKey(['loops:write']);
    await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/orgs/acme/api-keys/${revoked.id}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const readOnly = await t.issueKey(['loops:read']);
    const unrelated = await t.issueKey(['pods:write']);
    for (const e of endpoints) {
      const base = { method: e.method, url: prefix('acme') + e.path, payload: 'payload' in e ? e.payload : undefined };
      expectError(await t.request({ ...base, key: null }), 401, 'AUTH_REQUIRED');
      expectError(await t.request({ ...base, key: revoked.key }), 401, 'INVALID_API_KEY');
      expectError(await t.request({ ...base, key: otherKey }), 404, 'NOT_FOUND');
      const denied = await t.request({ ...base, key: unrelated.key });
      expectError(denied, 403, 'INSUFFICIENT_SCOPE');
      expect(denied.json().required_scopes).toEqual([e.scope]);
      if (e.scope === 'loops:write') expectError(await t.request({ ...base, key: readOnly.key }), 403, 'INSUFFICIENT_SCOPE');
    }
    expect(await counts()).toEqual(before);
    for (const path of ['/loops/theirs', '/loops/theirs/runs', '/loops/theirs/trigger']) {
      expectError(await t.request({ method: path.endsWith('trigger') ? 'POST' : 'GET', url: prefix('acme') + path }), 404, 'NOT_FOUND');
    }
  });

  it('answers loops:read keys without the callback secret and loops:write keys with it', async () => {
    const { key } = await t.issueKey(['loops:read']);
    expect((await t.request({ method: 'GET', url: t.path('/loops/main'), key })).json().loop).not.toHaveProperty('callback_secret');
    expect((await t.request({ method: 'GET', url: t.path('/loops/main') })).json().loop.callback_secret).toMatch(/^whsec_/);
  });

  it.each([
    [{ prompt_template: 'x' }, '/name'],
    [{ name: 'x' }, '/prompt_template'],
    [{ name: 3, prompt_template: 'x' }, '/name'],
    [{ name: 'x'.repeat(256), prompt_template: 'x' }, '/name'],
    [{ name: 'x', prompt_template: 'x', agent_slug: 3 }, '/agent_slug'],
    [{ name: 'x', prompt_template: 'x', agent_slug: 'shell', custom_agent_slug: 'mine' }, '/custom_agent_slug'],
    [{ name: 'x', prompt_template: 'x', agent_slug: 'nope' }, '/agent_slug'],
    [{ name: 'x', prompt_template: 'x', cron_expression: '* * * * * *' }, '/cron_expression'],
    [{ name: 'x', prompt_template: 'x', cron_expression: '@hourly' }, '/cron_expression'],
    [{ name: 'x', prompt_template: 'x', cron_expression: '61 * * * *' }, '/cron_expression'],
    [{ name: 'x', prompt_template: 'x', cron_expression: '* * * * *', cron_timezone: 'Mars/Olympus' }, '/cron_timezone'],
    [{ name: 'x', prompt_template: 'x', max_concurrent_runs: 0 }, '/max_concurrent_runs'],
    [{ name: 'x', prompt_template: 'x', max_concurrent_runs: 101 }, '/max_concurrent_runs'],
    [{ name: 'x', prompt_template: 'x', timeout_minutes: 10081 }, '/timeout_minutes'],
    [{ name: 'x', prompt_template: 'x', concurrency_policy: 'drop' }, '/concurrency_policy'],
    [{ name: 'x', prompt_template: 'x', callback_url: 'ftp://example.com' }, '/callback_url'],
    [{ name: 'x', prompt_template: 'x', prompt_variables: [] }, '/prompt_variables'],
    [{ name: 'x', prompt_template: 'x', repository_id: 999 }, '/repository_id'],
    [{ name: 'x', prompt_template: 'x', slug: 'Bad Slug' }, '/slug'],
    [{ name: 'x', prompt_template: 'x', autopilot_config: { max_iterations: 0 } }, '/autopilot_config/max_iterations'],
    [{ name: 'x', prompt_template: 'x', extra: true }, '/extra'],
  ])('POST /loops %j → 400 naming %s, nothing written', async (payload, field) => {
    const before = await counts();
    const response = await t.request({ method: 'POST', url: t.path('/loops'), payload });
    expectError(response, 400, 'VALIDATION_FAILED');
    expect(response.json().details.map((d: { field: string }) => d.field)).toContain(field);
    expect(await counts()).toEqual(before);
  });

  it('rejects bad trigger bodies and missing template values without recording a run', async () => {
    const before = await counts();
    for (const payload of [{ variables: [] }, { variables: 'x' }, { vars: {} }]) {
      expectError(await t.request({ method: 'POST', url: t.path('/loops/main/trigger'), payload }), 400, 'VALIDATION_FAILED');
    }
    await t.request({ method: 'PUT', url: t.path('/loops/main'), payload: { prompt_variables: {} } });
    const missing = await t.request({ method: 'POST', url: t.path('/loops/main/trigger'), payload: { variables: {} } });
    expectError(missing, 400, 'VALIDATION_FAILED');
    expect(missing.json().error).toContain('x');
    expect(await counts()).toEqual(before);
    await t.request({ method: 'PUT', url: t.path('/loops/main'), payload: { prompt_variables: { x: 1 } } });
  });

  it.each([
    ['/loops?limit=0', 'limit'],
    ['/loops?offset=-1', 'offset'],
    ['/loops?bogus=1', 'bogus'],
    ['/loops/main/runs?limit=abc', 'limit'],
    ['/loops/main/runs?status=open', 'status'],
    ['/loops/main/runs/abc', 'run_id'],
    ['/loops/main/runs/-1', 'run_id'],
  ])('GET %s → 400 naming %s', async (path, field) => {
    const response = await t.request({ method: 'GET', url: t.path(path) });
    expectError(response, 400, 'VALIDATION_FAILED');
    expect(response.json().details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it('refuses non-object JSON, invalid UTF-8, other content types and oversized bodies', async () => {
    const before = await counts();
    const send = (payload: string | Buffer, contentType = 'application/json') =>
      t.request({ method: 'POST', url: t.path('/loops'), payload, headers: { 'content-type': contentType } });
    for (const body of ['[]', '"x"', 'null']) expectError(await send(body), 400, 'VALIDATION_FAILED');
    expectError(await send('{"name":'), 400, 'INVALID_JSON');
    expectError(await send(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])), 400, 'INVALID_JSON');
    expectError(await send('name=x', 'application/x-www-form-urlencoded'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectError(await send(JSON.stringify({ name: 'x', prompt_template: 'y'.repeat(1024 * 1024) })), 413, 'PAYLOAD_TOO_LARGE');
    expect(await counts()).toEqual(before);
  });
});
