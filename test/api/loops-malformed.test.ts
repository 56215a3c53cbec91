/**
 * Malformed input on every loop endpoint (docs/api.md "Requests",
 * "Paging", "Errors"), under both prefixes: table-driven sweeps plus a fast-check property. Every
 * answer must be a 4xx (never 5xx) with the contract's error body and, where the contract fixes
 * them, the exact status and code; no loop, run or pod may be written (each test compares the
 * tables before and after).
 */
import type { LightMyRequestResponse } from 'fastify';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { type ErrorBodyJson, expectError } from '../helpers/errors.ts';

/** FC_NUM_RUNS=1000 for a deeper local sweep. */
const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 30);
const MiB = 1024 * 1024;
const PREFIXES = ['/api/v1/ext/orgs', '/api/v1/orgs'] as const;

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** A 4xx with the contract's error body; `status`/`code` when the contract fixes them. */

/** 400 VALIDATION_FAILED whose details name `field` (a body pointer like `/name`, or a parameter name). */
function expectInvalid(res: LightMyRequestResponse, field: string): ErrorBodyJson {
  const body = expectError(res, 400, 'VALIDATION_FAILED');
  const fields = (body.details ?? []).map((d) => d.field);
  expect(
    fields.some((f) => f === field || f.startsWith(`${field}/`)),
    `details ${JSON.stringify(fields)} should name ${field} (${res.body})`,
  ).toBe(true);
  return body;
}

// ---------------------------------------------------------------------------------------------
// Tables of bad values
// ---------------------------------------------------------------------------------------------

const NOT_STRING: unknown[] = [3, 0, -1.5, true, false, {}, { a: 'b' }, [], ['x']];
const NOT_INTEGER: unknown[] = [1.5, '1', '', 'abc', true, false, {}, [], [1]];
const BAD_IDS: unknown[] = [0, -1, ...NOT_INTEGER, Number.MAX_SAFE_INTEGER + 2];
const NOT_OBJECT: unknown[] = ['x', 3, true, [], ['a'], [{ a: 1 }]];

/** Per field of POST /loops: values that must be 400 naming the field. */
const CREATE_BAD: Record<string, unknown[]> = {
  name: [...NOT_STRING, null, '', ' ', '\t\n', 'n'.repeat(256)],
  slug: [...NOT_STRING, null, '', 'Upper', 'has space', '-lead', 'a_b', 'ä', 's'.repeat(64), 'a/b'],
  prompt_template: [...NOT_STRING, null, '', 't'.repeat(100_001)],
  description: [...NOT_STRING, null, 'd'.repeat(10_001)],
  agent_slug: [...NOT_STRING, null, '', 'nope', 'SHELL', 'a'.repeat(101)],
  custom_agent_slug: [...NOT_STRING, null, '', 'ghost'],
  prompt_variables: [...NOT_OBJECT, null, { ['k'.repeat(201)]: 1 }],
  repository_id: [...BAD_IDS, null, 424_242],
  runner_id: [...BAD_IDS, null, 424_242],
  branch_name: [...NOT_STRING, null, '', 'b'.repeat(201)],
  execution_mode: [...NOT_STRING, null, '', 'Direct', 'manual', 'autopilot '],
  cron_expression: [...NOT_STRING, null, '', '* * * *', '* * * * * *', '@daily', '60 * * * *', '* 24 * * *', '* * 32 * *', '* * * 13 *', '* * * * 8', 'a b c d e', 'c'.repeat(201)],
  cron_timezone: [...NOT_STRING, null, '', 'Mars/Olympus', '+01:00', 'z'.repeat(101)],
  sandbox_strategy: [...NOT_STRING, null, '', 'shared'],
  session_persistence: [1, 0, 'true', 'false', '', null, {}, []],
  concurrency_policy: [...NOT_STRING, null, '', 'drop', 'SKIP'],
  max_concurrent_runs: [...NOT_INTEGER, null, 0, -1, 101, 1e9],
  timeout_minutes: [...NOT_INTEGER, null, 0, -5, 10_081, 1e12],
  callback_url: [...NOT_STRING, null, '', 'example.com', 'ftp://example.com', 'javascript:alert(1)', 'http://', 'https://a b.example', `https://example.com/${'p'.repeat(2048)}`],
  autopilot_config: [
    ...NOT_OBJECT,
    null,
    { max_iterations: 0 },
    { max_iterations: 1.5 },
    { max_iterations: '3' },
    { max_iterations: 1001 },
    { iteration_timeout_sec: 0 },
    { iteration_timeout_sec: 86_401 },
    { iteration_timeout_sec: null },
    { other: 1 },
  ],
};

/** PUT: these may be cleared with null; slug is not writable at all. */
const NULLABLE_ON_UPDATE = ['description', 'agent_slug', 'custom_agent_slug', 'repository_id', 'runner_id', 'branch_name', 'cron_expression', 'callback_url'];
const UPDATE_BAD: Record<string, unknown[]> = Object.fromEntries(
  Object.entries(CREATE_BAD)
    .filter(([field]) => field !== 'slug')
    .map(([field, values]) => [field, NULLABLE_ON_UPDATE.includes(field) ? values.filter((v) => v !== null) : values]),
);

const UNKNOWN_FIELDS = ['foo', 'Name', 'id', 'org_id', 'status', 'next_run_at', 'created_at', 'callback_secret', 'total_runs', 'variables', 'agent', 'schedule'];

const NON_OBJECT_JSON = ['[]', '[{"name":"x"}]', '"x"', '""', '3', '-1.5', 'null', 'true', 'false'];
const MALFORMED_JSON = ['{', '}', '{"a":}', '{"name":"x",}', '[1,]', "{'name':'x'}", '{name:"x"}', '{"a":1} x', '{"a":1}{"b":2}', 'NaN', '{"n": 01}', '{"name":"unterminated}', '   '];
const INVALID_UTF8: Buffer[] = [
  Buffer.from([0xff]),
  Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28]), Buffer.from('","prompt_template":"x"}')]),
  Buffer.concat([Buffer.from('{"variables":{"a":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}}')]),
  Buffer.concat([Buffer.from('{"description":"'), Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]), Buffer.from('"}')]),
];
const PROTO_BODIES = [
  '{"name":"x","prompt_template":"x","__proto__":{"polluted":true}}',
  '{"name":"x","prompt_template":"x","prompt_variables":{"__proto__":{"polluted":true}}}',
  '{"variables":{"__proto__":{"polluted":true}}}',
  '{"variables":{"constructor":{"prototype":{"polluted":true}}}}',
  '{"name":"x","prompt_template":"x","\\u005f_proto__":{"polluted":true}}',
];
const WRONG_CONTENT_TYPES = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=xyz', 'application/xml', 'text/json', 'application/octet-stream'];

const BAD_LIMITS = ['abc', '0', '-1', '1.5', '', ' 1', '1 ', '0x10', '1e1', 'Infinity', 'NaN', 'true', '-99999999999999999999'];
const BAD_OFFSETS = ['-1', 'abc', '1.5', '', '0x10', '1e1', '-0.5', '99999999999999999999'];
const BAD_RUN_IDS = ['abc', '0', '-1', '1.5', '1e3', '0x10', '%20', '%201', '1%20', '99999999999999999999', '9007199254740993', 'null', 'true', '+1', '1,2'];
const BAD_STATUSES = ['open', 'PENDING', 'active', '', 'done', 'canceled', 'pending,running'];

describe.each(DATABASES)('loops: malformed input on %s', (kind) => {
  describe.each(PREFIXES)('under %s/{org}', (prefix) => {
    let t: TestApp;
    let runId: number;
    let before: Awaited<ReturnType<typeof snapshot>>;
    const url = (path: string) => `${prefix}/acme${path}`;
    const send = (method: Method, path: string, payload?: unknown, headers?: Record<string, string>) =>
      t.request({ method, url: url(path), headers, ...(payload === undefined ? {} : { payload: payload as string }) });
    const json = (method: Method, path: string, body: unknown) => send(method, path, JSON.stringify(body), { 'content-type': 'application/json' });
    const raw = (method: Method, path: string, body: string | Buffer, contentType = 'application/json') => send(method, path, body, { 'content-type': contentType });

    const snapshot = async () => ({
      loops: await t.store.db.selectFrom('loops').selectAll().orderBy('id').execute(),
      runs: await t.store.db.selectFrom('loop_runs').selectAll().orderBy('id').execute(),
      pods: await t.store.db.selectFrom('pods').select('key').execute(),
    });

    /** Endpoints that take a JSON body, with a good body to start from. */
    const BODY_ENDPOINTS: { name: string; method: Method; path: string; good: Record<string, unknown> }[] = [
      { name: 'POST /loops', method: 'POST', path: '/loops', good: { name: 'Good', prompt_template: 'x', agent_slug: 'shell' } },
      { name: 'PUT /loops/main', method: 'PUT', path: '/loops/main', good: { description: 'good' } },
      { name: 'POST /loops/main/trigger', method: 'POST', path: '/loops/main/trigger', good: { variables: { x: 'y' } } },
    ];
    /** Endpoints without a body. */
    const BODYLESS: { method: Method; path: string }[] = [
      { method: 'POST', path: '/loops/main/enable' },
      { method: 'POST', path: '/loops/main/disable' },
      { method: 'POST', path: '/loops/main/runs/:run/cancel' },
      { method: 'DELETE', path: '/loops/main' },
    ];
    const ALL_ENDPOINTS: { method: Method; path: string }[] = [
      { method: 'GET', path: '/loops' },
      { method: 'GET', path: '/loops/main' },
      { method: 'GET', path: '/loops/main/runs' },
      { method: 'GET', path: '/loops/main/runs/:run' },
      ...BODY_ENDPOINTS,
      ...BODYLESS,
    ];
    const fill = (path: string) => path.replace(':run', String(runId));

    beforeAll(async () => {
      t = await startTestApp(kind);
      const created = await t.request({
        method: 'POST',
        url: url('/loops'),
        payload: { name: 'Main', slug: 'main', agent_slug: 'shell', prompt_template: 'echo {{ x }}', prompt_variables: { x: 1 }, concurrency_policy: 'queue', max_concurrent_runs: 5 },
      });
      expect(created.statusCode, created.body).toBe(201);
      const run = await t.request({ method: 'POST', url: url('/loops/main/trigger') });
      expect(run.statusCode, run.body).toBe(201);
      runId = (run.json() as { run: { id: number } }).run.id;
    });
    afterAll(async () => {
      await t?.close();
    });
    beforeEach(async () => {
      before = await snapshot();
    });
    afterEach(async () => {
      expect(await snapshot(), 'a refused request wrote something').toEqual(before);
    });

    describe('POST /loops: wrong values per field → 400 naming the field', () => {
      const cases = Object.entries(CREATE_BAD).flatMap(([field, values]) => values.map((value) => [field, JSON.stringify(value).slice(0, 60), value] as const));
      it.each(cases)('%s = %s', async (field, _shown, value) => {
        expectInvalid(await json('POST', '/loops', { name: 'N', prompt_template: 'x', [field]: value }), `/${field}`);
      });
    });

    describe('PUT /loops/:slug: wrong values per field → 400 naming the field', () => {
      const cases = Object.entries(UPDATE_BAD).flatMap(([field, values]) => values.map((value) => [field, JSON.stringify(value).slice(0, 60), value] as const));
      it.each(cases)('%s = %s', async (field, _shown, value) => {
        expectInvalid(await json('PUT', '/loops/main', { [field]: value }), `/${field}`);
      });
    });

    it('agent_slug: 3 is 400 "agent_slug must be a string" (the spec example sends a number)', async () => {
      const body = expectInvalid(await json('POST', '/loops', { name: 'N', prompt_template: 'x', agent_slug: 3 }), '/agent_slug');
      expect(body.details!.find((d) => d.field === '/agent_slug')!.message).toBe('agent_slug must be a string');
    });

    it('a bad body is 400 before an unknown loop is 404 (docs/api.md "Authentication")', async () => {
      expectInvalid(await json('PUT', '/loops/no-such-loop', { max_concurrent_runs: 0 }), '/max_concurrent_runs');
      expectInvalid(await json('POST', '/loops/no-such-loop/trigger', { variables: [] }), '/variables');
      expectInvalid(await json('POST', '/loops/no-such-loop/trigger', { variables: { a: JSON.parse('['.repeat(40) + ']'.repeat(40)) } }), '/variables');
      expectInvalid(await json('POST', '/loops/no-such-loop/enable', { force: true }), '/force');
      expectInvalid(await send('GET', '/loops/no-such-loop/runs?limit=0'), 'limit');
      expectInvalid(await send('GET', '/loops/no-such-loop/runs/abc'), 'run_id');
    });

    it('several bad fields are all named at once', async () => {
      const body = expectError(await json('POST', '/loops', { name: '', prompt_template: 3, max_concurrent_runs: 0, bogus: 1 }), 400, 'VALIDATION_FAILED');
      const fields = body.details!.map((d) => d.field);
      for (const f of ['/name', '/prompt_template', '/max_concurrent_runs', '/bogus']) expect(fields).toContain(f);
    });

    it.each(UNKNOWN_FIELDS)('unknown field %s → 400 naming it (create and update)', async (field) => {
      expectInvalid(await json('POST', '/loops', { name: 'N', prompt_template: 'x', [field]: 'v' }), `/${field}`);
      if (field !== 'variables') expectInvalid(await json('PUT', '/loops/main', { [field]: 'v' }), `/${field}`);
    });

    it.each(['name', 'prompt_template'])('POST /loops without %s → 400 "is required"', async (field) => {
      const body = { name: 'N', prompt_template: 'x' } as Record<string, unknown>;
      delete body[field];
      const res = expectInvalid(await json('POST', '/loops', body), `/${field}`);
      expect(res.error).toContain('required');
    });

    describe('trigger bodies', () => {
      it.each([...NOT_OBJECT, null].map((v) => [JSON.stringify(v), v] as const))('variables = %s → 400 naming /variables', async (_shown, value) => {
        expectInvalid(await json('POST', '/loops/main/trigger', { variables: value }), '/variables');
      });
      it.each([{ vars: {} }, { variables: {}, extra: 1 }, { Variables: {} }, { x: 'y' }])('%j → 400 naming the unknown field', async (body) => {
        expectError(await json('POST', '/loops/main/trigger', body), 400, 'VALIDATION_FAILED');
      });
      it('a variable name of more than 200 characters → 400 (200 is fine)', async () => {
        const body = expectInvalid(await json('POST', '/loops/main/trigger', { variables: { ['v'.repeat(201)]: 1 } }), '/variables');
        expect(body.error).toContain('200');
        const ok = await json('POST', '/loops/main/trigger', { variables: { ['v'.repeat(200)]: 1 } });
        expect(ok.statusCode, ok.body).toBe(201);
        before = await snapshot();
      });
      it('placeholders named like Object.prototype members have no value unless given', async () => {
        const l = await json('POST', '/loops', { name: 'Proto', slug: 'proto', agent_slug: 'shell', prompt_template: '{{constructor}} {{ toString }} {{__proto__}} {{hasOwnProperty}}' });
        expect(l.statusCode, l.body).toBe(201);
        const res = expectError(await send('POST', '/loops/proto/trigger'), 400, 'VALIDATION_FAILED');
        for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) expect(res.error).toContain(name);
        expect((await send('DELETE', '/loops/proto')).statusCode).toBe(200);
      });
    });

    describe('bodies that are not a JSON object', () => {
      it.each(BODY_ENDPOINTS.flatMap((e) => NON_OBJECT_JSON.map((b) => [e.name, b, e] as const)))('%s with %s → 400', async (_name, body, e) => {
        expectError(await raw(e.method, e.path, body), 400, 'VALIDATION_FAILED');
      });
      it.each(BODY_ENDPOINTS.flatMap((e) => MALFORMED_JSON.map((b) => [e.name, b, e] as const)))('%s with malformed JSON %j → 400 INVALID_JSON', async (_name, body, e) => {
        // Whitespace only counts as "no body" nowhere: it is not JSON.
        expectError(await raw(e.method, e.path, body), 400, ['INVALID_JSON', 'VALIDATION_FAILED']);
      });
      it.each(BODY_ENDPOINTS.flatMap((e) => INVALID_UTF8.map((b, i) => [e.name, i, e, b] as const)))('%s with invalid UTF-8 #%i → 400 INVALID_JSON', async (_name, _i, e, body) => {
        expectError(await raw(e.method, e.path, body), 400, 'INVALID_JSON');
      });
      it.each(BODY_ENDPOINTS.flatMap((e) => PROTO_BODIES.map((b) => [e.name, b, e] as const)))('%s with prototype keys %s → 400', async (_name, body, e) => {
        expectError(await raw(e.method, e.path, body), 400);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      });
      it.each(BODY_ENDPOINTS.flatMap((e) => WRONG_CONTENT_TYPES.map((c) => [e.name, c, e] as const)))('%s as %s → 415 UNSUPPORTED_MEDIA_TYPE', async (_name, contentType, e) => {
        expectError(await raw(e.method, e.path, JSON.stringify(e.good), contentType), 415, 'UNSUPPORTED_MEDIA_TYPE');
      });
      it.each(BODY_ENDPOINTS.map((e) => [e.name, e] as const))('%s over 1 MiB → 413 PAYLOAD_TOO_LARGE', async (_name, e) => {
        const big = JSON.stringify({ ...e.good, description: 'd'.repeat(MiB) });
        expectError(await raw(e.method, e.path, big), 413, 'PAYLOAD_TOO_LARGE');
      });
      it('PUT without a body → 400', async () => {
        expectError(await send('PUT', '/loops/main'), 400, 'VALIDATION_FAILED');
        expectError(await raw('PUT', '/loops/main', ''), 400, 'VALIDATION_FAILED');
      });
      it('POST /loops without a body → 400', async () => {
        expectError(await send('POST', '/loops'), 400, 'VALIDATION_FAILED');
      });
      it('a U+0000 in a string → 400', async () => {
        const inName = expectError(await raw('POST', '/loops', '{"name":"a\\u0000b","prompt_template":"x"}'), 400, 'VALIDATION_FAILED');
        expect(inName.details?.map((d) => d.field)).toEqual(['/name']);
        const inVariable = expectError(await raw('POST', '/loops/main/trigger', '{"variables":{"x/y":"a\\u0000b"}}'), 400, 'VALIDATION_FAILED');
        expect(inVariable.details?.map((d) => d.field)).toEqual(['/variables/x~1y']);
      });
    });

    describe('deeply nested JSON values', () => {
      const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
      it.each([
        ['POST /loops prompt_variables', 'POST', '/loops', (v: string) => `{"name":"Deep","prompt_template":"x","agent_slug":"shell","prompt_variables":{"a":${v}}}`],
        ['PUT prompt_variables', 'PUT', '/loops/main', (v: string) => `{"prompt_variables":{"x":${v}}}`],
        ['trigger variables', 'POST', '/loops/main/trigger', (v: string) => `{"variables":{"x":${v}}}`],
      ] as const)('%s 100,000 levels deep → 400 naming the field, never a 5xx', async (name, method, path, body) => {
        const field = name.startsWith('trigger') ? '/variables' : '/prompt_variables';
        for (const depth of [33, 1_000, 100_000]) expectInvalid(await raw(method, path, body(nested(depth))), field);
      });
      it('30 levels are fine', async () => {
        const res = await raw('POST', '/loops', `{"name":"Deep","slug":"deep","prompt_template":"{{a}}","agent_slug":"shell","prompt_variables":{"a":${nested(30)}}}`);
        expect(res.statusCode, res.body).toBe(201);
        expect((await send('DELETE', '/loops/deep')).statusCode).toBe(200);
      });
    });

    describe('bodyless endpoints', () => {
      it.each(BODYLESS.flatMap((e) => NON_OBJECT_JSON.map((b) => [`${e.method} ${e.path}`, b, e] as const)))('%s with %s → 400', async (_name, body, e) => {
        expectError(await raw(e.method, fill(e.path), body), 400);
      });
      it.each(BODYLESS.map((e) => [`${e.method} ${e.path}`, e] as const))('%s with malformed JSON, invalid UTF-8, a wrong type or > 1 MiB → 4xx', async (_name, e) => {
        expectError(await raw(e.method, fill(e.path), '{"a":'), 400, 'INVALID_JSON');
        expectError(await raw(e.method, fill(e.path), INVALID_UTF8[0]), 400, 'INVALID_JSON');
        expectError(await raw(e.method, fill(e.path), 'x=1', 'application/x-www-form-urlencoded'), 415, 'UNSUPPORTED_MEDIA_TYPE');
        expectError(await raw(e.method, fill(e.path), JSON.stringify({ a: 'x'.repeat(MiB) })), 413, 'PAYLOAD_TOO_LARGE');
      });
      it.each(BODYLESS.map((e) => [`${e.method} ${e.path}`, e] as const))('%s with an unknown body field → 400 naming it', async (_name, e) => {
        expectInvalid(await json(e.method, fill(e.path), { force: true }), '/force');
      });
    });

    describe('query parameters', () => {
      it.each(BAD_LIMITS)('GET /loops?limit=%j → 400 naming limit', async (v) => {
        expectInvalid(await send('GET', `/loops?limit=${encodeURIComponent(v)}`), 'limit');
      });
      it.each(BAD_OFFSETS)('GET /loops?offset=%j → 400 naming offset', async (v) => {
        expectInvalid(await send('GET', `/loops?offset=${encodeURIComponent(v)}`), 'offset');
      });
      it.each(BAD_LIMITS)('GET /loops/main/runs?limit=%j → 400 naming limit', async (v) => {
        expectInvalid(await send('GET', `/loops/main/runs?limit=${encodeURIComponent(v)}`), 'limit');
      });
      it.each(BAD_OFFSETS)('GET /loops/main/runs?offset=%j → 400 naming offset', async (v) => {
        expectInvalid(await send('GET', `/loops/main/runs?offset=${encodeURIComponent(v)}`), 'offset');
      });
      it.each(BAD_STATUSES)('GET /loops/main/runs?status=%j → 400 naming status', async (v) => {
        expectInvalid(await send('GET', `/loops/main/runs?status=${encodeURIComponent(v)}`), 'status');
      });
      it.each([
        ['/loops?bogus=1', 'bogus'],
        ['/loops?status=enabled', 'status'],
        ['/loops?page=2', 'page'],
        ['/loops/main/runs?bogus=1', 'bogus'],
        ['/loops/main/runs?run_id=1', 'run_id'],
        ['/loops/main/runs?Status=pending', 'Status'],
      ])('GET %s → 400 naming the unknown parameter %s', async (path, name) => {
        const body = expectInvalid(await send('GET', path), name);
        expect(body.error).toContain('not a known parameter');
      });
      it.each(['/loops?limit=1&limit=2', '/loops/main/runs?status=pending&status=queued', '/loops/main/runs?offset=1&offset=2'])('GET %s (a repeated parameter) → 400', async (path) => {
        expectError(await send('GET', path), 400, 'VALIDATION_FAILED');
      });
      it('valid values still work: limit above the maximum is clamped, booleans-free endpoints accept plain integers', async () => {
        expect((await send('GET', '/loops?limit=1&offset=0')).statusCode).toBe(200);
        const runs = await send('GET', '/loops/main/runs?limit=101&offset=0&status=pending');
        expect(runs.statusCode, runs.body).toBe(200);
        expect((runs.json() as { limit: number }).limit).toBe(100);
      });
    });

    describe('path parameters', () => {
      it.each(BAD_RUN_IDS.flatMap((id) => [[`GET /runs/${id}`, 'GET', `/loops/main/runs/${id}`] as const, [`POST /runs/${id}/cancel`, 'POST', `/loops/main/runs/${id}/cancel`] as const]))(
        '%s → 400 naming run_id',
        async (_name, method, path) => {
          expectInvalid(await send(method, path), 'run_id');
        },
      );
      it.each(['GET', 'POST'] as const)('%s on a well-formed run id that does not exist → 404', async (method) => {
        const path = method === 'GET' ? '/loops/main/runs/9007199254740991' : '/loops/main/runs/9007199254740991/cancel';
        expectError(await send(method, path), 404, 'NOT_FOUND');
      });
      it.each([
        ['an unknown slug', 'no-such-loop'],
        ['upper case', 'MAIN'],
        ['encoded characters', 'ma%20in'],
        ['unicode', '%C3%A4'],
        ['dots', '..'],
      ])('a slug with %s → 404 (or 400), never 5xx', async (_label, slug) => {
        for (const [method, path] of [
          ['GET', `/loops/${slug}`],
          ['PUT', `/loops/${slug}`],
          ['DELETE', `/loops/${slug}`],
          ['POST', `/loops/${slug}/enable`],
          ['POST', `/loops/${slug}/trigger`],
          ['GET', `/loops/${slug}/runs`],
          ['GET', `/loops/${slug}/runs/${runId}`],
          ['POST', `/loops/${slug}/runs/${runId}/cancel`],
        ] as const) {
          const res = method === 'PUT' ? await json(method, path, { description: 'x' }) : await send(method, path);
          expectError(res, undefined, ['NOT_FOUND', 'VALIDATION_FAILED']);
        }
      });
      it('an over-long slug or a %00 in the path → 400 or 404, never 5xx', async () => {
        expectError(await send('GET', `/loops/${'s'.repeat(64)}`), undefined, ['NOT_FOUND', 'VALIDATION_FAILED']);
        expectError(await send('GET', `/loops/${'s'.repeat(5_000)}`), undefined, ['NOT_FOUND', 'VALIDATION_FAILED']);
        expect(expectError(await send('GET', '/loops/main%00'), 400, 'VALIDATION_FAILED').details).toEqual([
          { field: 'path', message: expect.stringContaining('U+0000') },
        ]);
        expect(expectError(await send('GET', '/loops?status=a%00'), 400, 'VALIDATION_FAILED').details?.map((d) => d.field)).toEqual(['status']);
        expect(expectError(await send('GET', '/loops?x%00=1'), 400, 'VALIDATION_FAILED').details?.map((d) => d.field)).toEqual(['query']);
        expectError(await send('POST', '/loops/ma%00in/trigger'), 400, 'VALIDATION_FAILED');
      });
    });

    describe('unknown routes and methods', () => {
      it.each([
        ['GET', '/loops/main/bogus'],
        ['POST', '/loops/main/pause'],
        ['GET', '/loops/main/runs/1/logs'],
        ['PATCH', '/loops/main'],
        ['POST', '/loops/main'],
        ['PUT', '/loops'],
        ['DELETE', '/loops'],
        ['GET', '/loops/main/trigger'],
        ['GET', '/loops/main/runs/1/cancel'],
      ] as const)('%s %s → 404/405 with the JSON error body', async (method, path) => {
        const res = await t.request({ method, url: url(path) });
        expectError(res, undefined, ['NOT_FOUND', 'METHOD_NOT_ALLOWED']);
      });
      it('the /api/v1/orgs prefix serves loops only', async () => {
        const res = await t.request({ method: 'GET', url: '/api/v1/orgs/acme/pods' });
        expectError(res, 404, 'NOT_FOUND');
      });
    });

    it('property: any JSON object sent to the body endpoints is answered without a 5xx', async () => {
      const value = fc.jsonValue({ maxDepth: 3 });
      const field = fc.constantFrom(...Object.keys(CREATE_BAD), 'variables', 'x');
      const body = fc.dictionary(field, value, { maxKeys: 6 });
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...BODY_ENDPOINTS), body, async (e, payload) => {
          // Keep the loop in place: no name change is harmful, but a good PUT may turn the loop off or rename nothing.
          const res = await json(e.method, e.path, payload);
          expect(res.statusCode, res.body).toBeLessThan(500);
          if (res.statusCode >= 400) expectError(res);
        }),
        { numRuns: NUM_RUNS },
      );
      // Valid bodies may have written; put the fixture back as the snapshot had it.
      before = await snapshot();
    });

    it('every endpoint answers a good request (the sweep above is not vacuous)', async () => {
      for (const e of ALL_ENDPOINTS) {
        const path = fill(e.path);
        const good = 'good' in e ? (e as { good: Record<string, unknown> }).good : undefined;
        const res = good ? await json(e.method, path, good) : await send(e.method, path);
        expect(res.statusCode, `${e.method} ${path}: ${res.body}`).toBeLessThan(300);
      }
      before = await snapshot();
    });
  });
});
