/**
 * Bodies the contract refuses at the door (docs/api.md, docs/api.md, docs/decisions.md): JSON nested deeper than 64 levels is 400
 * VALIDATION_FAILED, never 500, on an unauthenticated route and an authenticated one, with or
 * without an Idempotency-Key (the walks that used to recurse over such bodies overflowed the
 * stack); `callback_url` values `new URL` refuses are 400; routes that do not exist are 404 before
 * any body is looked at.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { expectError } from '../helpers/errors.ts';

/** `{"a":{"a":…{"a":<leaf>}…}}`, `levels` objects deep. */
const nestedObjects = (levels: number, leaf = '1') => '{"a":'.repeat(levels) + leaf + '}'.repeat(levels);
/** `[[…[leaf]…]]`, `levels` arrays deep. */
const nestedArrays = (levels: number, leaf = '1') => '['.repeat(levels) + leaf + ']'.repeat(levels);

describe.each(DATABASES)('body limits on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(async () => {
    await t?.close();
  });

  const register = (payload: string) =>
    t.request({ method: 'POST', url: '/api/v1/runner/register', key: null, payload, headers: { 'content-type': 'application/json' } });

  describe('JSON deeper than 64 levels', () => {
    it('200,000 levels holding \\u0000, unauthenticated register route: 400 VALIDATION_FAILED, not 500', async () => {
      const body = `{"token":"x","name":"n","labels":[],"max_pods":1,"version":"1","os":"linux","arch":"x64","deep":${nestedArrays(200_000, '"\\u0000"')}}`;
      const res = await register(body);
      const error = expectError(res, 400, 'VALIDATION_FAILED');
      expect(error.error).toMatch(/64 levels/);
      // The pointer names the first array past the limit: /deep/0/0/…
      expect(error.details![0].field).toBe('/deep' + '/0'.repeat(63));
      // Objects nest the same way.
      const objects = expectError(await register(nestedObjects(100_000)), 400, 'VALIDATION_FAILED');
      expect(objects.details![0].field).toBe('/a'.repeat(64));
      expect(await t.store.db.selectFrom('runners').select('id').execute()).toHaveLength(0);
    });

    it('arrays count as levels too; 65 levels are refused, 64 pass the depth check', async () => {
      expectError(await register(nestedArrays(65)), 400, 'VALIDATION_FAILED');
      const body65 = expectError(await register(`{"x":${nestedArrays(64)}}`), 400, 'VALIDATION_FAILED');
      expect(body65.error).toMatch(/64 levels/);
      // 64 levels in all: the schema answers (unknown field / not a registration), not the depth rule.
      const body64 = expectError(await register(`{"x":${nestedArrays(63)}}`), 400, 'VALIDATION_FAILED');
      expect(body64.error).not.toMatch(/64 levels/);
    });

    it('brackets inside strings do not count', async () => {
      const res = await register(JSON.stringify({ token: '['.repeat(100_000), name: '{'.repeat(50) }));
      const error = expectError(res, 400, 'VALIDATION_FAILED');
      expect(error.error).not.toMatch(/64 levels/);
    });

    it('200,000 levels in loop trigger variables with an Idempotency-Key: 400, nothing recorded', async () => {
      const created = await t.request({
        method: 'POST',
        url: t.path('/loops'),
        payload: { name: 'Deep', slug: 'deep', agent_slug: 'shell', prompt_template: 'echo {{ x }}', prompt_variables: { x: '1' } },
      });
      expect(created.statusCode, created.body).toBe(201);
      for (const url of [t.path('/loops/deep/trigger'), `/api/v1/orgs/${t.org.slug}/loops/deep/trigger`]) {
        const res = await t.request({
          method: 'POST',
          url,
          payload: `{"variables":{"x":${nestedArrays(200_000, '"\\u0000"')}}}`,
          headers: { 'content-type': 'application/json', 'idempotency-key': 'deep-1' },
        });
        const error = expectError(res, 400, 'VALIDATION_FAILED');
        expect(error.details![0].field.startsWith('/variables/x/0/0')).toBe(true);
      }
      expect(await t.store.db.selectFrom('idempotency_keys').select('key').execute()).toHaveLength(0);
      expect(await t.store.db.selectFrom('loop_runs').select('id').execute()).toHaveLength(0);
    });

    it('an authenticated create with a deep body and a bad key is still 401 first (contract order)', async () => {
      const res = await t.request({
        method: 'POST',
        url: t.path('/tickets'),
        key: 'drv_' + 'x'.repeat(40),
        payload: `{"type":"bug","title":${nestedArrays(100_000)}}`,
        headers: { 'content-type': 'application/json' },
      });
      expectError(res, 401, 'INVALID_API_KEY');
    });
  });

  describe('callback_url must parse as a URL', () => {
    it.each(['http://[', 'http://%zz', 'http://a:b:c', 'https://exa mple.com/', 'http://[::1', 'http://:80/'])(
      '%s → 400 naming callback_url on create and on update',
      async (url) => {
        const create = await t.request({
          method: 'POST',
          url: t.path('/loops'),
          payload: { name: 'Hook', agent_slug: 'shell', prompt_template: 'echo', callback_url: url },
        });
        const error = expectError(create, 400, 'VALIDATION_FAILED');
        expect(error.details!.map((d) => d.field)).toContain('/callback_url');

        const slug = `hook-${Math.random().toString(36).slice(2, 8)}`;
        const ok = await t.request({ method: 'POST', url: t.path('/loops'), payload: { name: 'Hook', slug, agent_slug: 'shell', prompt_template: 'echo' } });
        expect(ok.statusCode, ok.body).toBe(201);
        const update = await t.request({ method: 'PUT', url: t.path(`/loops/${slug}`), payload: { callback_url: url } });
        expect(expectError(update, 400, 'VALIDATION_FAILED').details!.map((d) => d.field)).toContain('/callback_url');
      },
    );

    it('a valid URL is still accepted', async () => {
      const res = await t.request({
        method: 'POST',
        url: t.path('/loops'),
        payload: { name: 'Hook', agent_slug: 'shell', prompt_template: 'echo', callback_url: 'https://hooks.example.com:8443/drover?x=1' },
      });
      expect(res.statusCode, res.body).toBe(201);
    });
  });

  describe('unknown routes and methods: 404 before anything else', () => {
    it.each([
      ['QUERY', t => t.path('/tickets'), {}],
      ['QUERY', t => t.path('/tickets'), { 'content-type': 'text/plain' }],
      ['PROPFIND', t => t.path('/tickets'), {}],
      ['POST', () => '/api/v1/nothing', { 'content-type': 'text/plain' }],
      ['POST', t => t.path('/nothing'), { 'content-type': 'application/json' }],
    ] as [string, (t: TestApp) => string, Record<string, string>][])('%s %s (no key) → 404 NOT_FOUND', async (method, url, headers) => {
      const res = await t.request({ method: method as 'GET', url: url(t), key: null, headers, payload: headers['content-type'] ? '{{{not json' : undefined });
      expectError(res, 404, 'NOT_FOUND');
    });
  });
});
