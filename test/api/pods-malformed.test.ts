/**
 * Malformed input on the pod and runner endpoints (docs/api.md "Requests", "Paging",
 * "Errors"): table-driven sweeps of POST /pods and of the query and path
 * parameters of every pod and runner endpoint, plus fast-check properties. Each answer must be
 * a 4xx (never 5xx) with the contract's error body and the exact status where the contract fixes
 * it, and no row may be written: every sweep test compares the pod, runner, output and
 * idempotency tables before and after.
 */
import type { LightMyRequestResponse } from 'fastify';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { type ErrorBodyJson, expectError } from '../helpers/errors.ts';
import { insertRunner } from '../helpers/runners.ts';

/** FC_NUM_RUNS=1000 for a deeper local sweep. */
const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 30);
const KiB = 1024;
const MiB = 1024 * KiB;

/** A 4xx with the contract's error body; `status`/`code` when the contract fixes them. */

/** 400 VALIDATION_FAILED whose details name `field`: a body JSON pointer (`/alias`) or a query/path name (`limit`). */
function expectInvalid(res: LightMyRequestResponse, field: string): ErrorBodyJson {
  const body = expectError(res, 400, 'VALIDATION_FAILED');
  const fields = body.details!.map((d) => d.field);
  expect(
    fields.some((f) => f === field || f.startsWith(`${field}/`)),
    `details ${JSON.stringify(fields)} should name ${field}`,
  ).toBe(true);
  return body;
}

// ---------------------------------------------------------------------------------------------
// Tables of bad values
// ---------------------------------------------------------------------------------------------

const NOT_STRING: unknown[] = [3, 0, -1.5, 1e21, true, false, {}, { a: 'b' }, [], ['shell']];
const BAD_IDS: unknown[] = [0, -1, 1.5, 0.1, '1', '', 'abc', true, false, {}, { id: 1 }, [], [1], null, 9_007_199_254_740_992, 1e300];

const CREATE_BAD: Record<string, unknown[]> = {
  agent_slug: [...NOT_STRING, null, '', 'x'.repeat(101)],
  agentfile_layer: [...NOT_STRING, null, 'x'.repeat(64 * KiB + 1)],
  runner_id: BAD_IDS,
  ticket_slug: [...NOT_STRING, null, '', 'S'.repeat(81)],
  alias: [...NOT_STRING, null, 'a'.repeat(101), '🐄'.repeat(101)],
};

const UNKNOWN_FIELDS: [string, unknown][] = [
  ['colour', 'red'],
  ['Agent_slug', 'shell'],
  ['agentSlug', 'shell'],
  ['agent', 'shell'],
  ['prompt', 'do it'],
  ['mode', 'autopilot'],
  ['key', 'p-chosen'],
  ['pod_key', 'p-chosen'],
  ['status', 'running'],
  ['org_id', 2],
  ['runner', 1],
  ['repository_id', 1],
  ['branch', 'main'],
  ['channel_id', 1],
  ['created_at', '2020-01-01T00:00:00.000Z'],
  ['credentials', ['GITHUB_TOKEN']],
];

const NON_OBJECT_JSON = ['[]', '[{"agent_slug":"shell"}]', '"shell"', '""', '3', '0', '-1.5', 'null', 'true', 'false'];

const MALFORMED_JSON = [
  '{',
  '}',
  '{"agent_slug":}',
  '{"agent_slug":"shell",}',
  '{"agent_slug":"shell"} x',
  '{"a":1}{"b":2}',
  "{'agent_slug':'shell'}",
  '{agent_slug:"shell"}',
  '{"agent_slug":"sh\\x"}',
  '{"agent_slug":"a\nb"}',
  '{"runner_id": 01}',
  '{"runner_id": +1}',
  '{"runner_id": 0x10}',
  '{"runner_id": NaN}',
  '{"agent_slug":"unterminated}',
  '   ',
];

const INVALID_UTF8: Buffer[] = [
  Buffer.from([0xff]),
  Buffer.concat([Buffer.from('{"agent_slug":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]),
  Buffer.concat([Buffer.from('{"agent_slug":"shell","alias":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]),
  Buffer.concat([Buffer.from('{"agent_slug":"shell","agentfile_layer":"PROMPT \\"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('\\""}')]),
  Buffer.concat([Buffer.from('{"agent_slug":"shell","alias":"'), Buffer.from([0xe2, 0x82]), Buffer.from('"}')]),
  Buffer.from([0xfe, 0xff, 0x00, 0x7b, 0x00, 0x7d]),
];

const PROTO_BODIES = [
  '{"agent_slug":"shell","__proto__":{"polluted":true}}',
  '{"agent_slug":"shell","constructor":{"prototype":{"polluted":true}}}',
  '{"agent_slug":"shell","\\u005f_proto__":{"polluted":true}}',
];

const WRONG_CONTENT_TYPES = [
  'text/plain',
  'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'application/xml',
  'text/json',
  'application/jsonx',
  'application/octet-stream',
];

/** Bad query strings of the paged pod lists (GET /pods and GET /runners/:id/pods), with the parameter named. */
const LIST_BAD_QUERIES: [string, string][] = [
  ['limit=0', 'limit'],
  ['limit=-1', 'limit'],
  ['limit=abc', 'limit'],
  ['limit=1.5', 'limit'],
  ['limit=', 'limit'],
  ['limit=1e2', 'limit'],
  ['limit=0x10', 'limit'],
  ['limit=true', 'limit'],
  ['limit=1&limit=2', 'limit'],
  ['offset=-1', 'offset'],
  ['offset=x', 'offset'],
  ['offset=0.5', 'offset'],
  ['offset=', 'offset'],
  ['offset=9007199254740992', 'offset'],
  ['status=bogus', 'status'],
  ['status=RUNNING', 'status'],
  ['status=', 'status'],
  ['status=active', 'status'],
  ['status=running&status=failed', 'status'],
  ['foo=1', 'foo'],
  ['page=2', 'page'],
  ['Limit=5', 'Limit'],
  ['runner_id=abc', 'runner_id'],
];

const OUTPUT_BAD_QUERIES: [string, string][] = [
  ['tail_bytes=0', 'tail_bytes'],
  ['tail_bytes=-1', 'tail_bytes'],
  ['tail_bytes=abc', 'tail_bytes'],
  ['tail_bytes=1.5', 'tail_bytes'],
  ['tail_bytes=', 'tail_bytes'],
  ['tail_bytes=1048577', 'tail_bytes'],
  ['tail_bytes=1e3', 'tail_bytes'],
  ['tail=10', 'tail'],
  ['limit=10', 'limit'],
];

const BAD_RUNNER_IDS = ['abc', '-1', '0', '1.5', '1e3', '0x10', '%20', '%201', '+1', '9007199254740992', '99999999999999999999', 'null', 'true'];

// ---------------------------------------------------------------------------------------------

describe.each(DATABASES)('malformed pod and runner requests on %s', (kind) => {
  let t: TestApp;
  let runnerId: number;
  let podKey: string;

  const snapshot = async () => {
    const db = t.store.db;
    const [pods, runners, output, idempotency] = await Promise.all([
      db.selectFrom('pods').selectAll().orderBy('id').execute(),
      db.selectFrom('runners').selectAll().orderBy('id').execute(),
      db.selectFrom('pod_output_chunks').selectAll().orderBy('pod_id').orderBy('start_offset').execute(),
      db.selectFrom('idempotency_keys').select(['api_key_id', 'key', 'state']).orderBy('api_key_id').orderBy('key').execute(),
    ]);
    return { counts: { pods: pods.length, runners: runners.length, output: output.length, idempotency: idempotency.length }, pods, runners, output, idempotency };
  };

  const post = (payload: unknown, headers: Record<string, string> = {}) => t.request({ method: 'POST', url: t.path('/pods'), payload: payload as object, headers });
  const raw = (payload: string | Buffer, contentType: string | null = 'application/json', url = t.path('/pods')) =>
    t.request({ method: 'POST', url, payload, headers: contentType === null ? {} : { 'content-type': contentType } });
  const get = (path: string) => t.request({ method: 'GET', url: t.path(path) });

  beforeAll(async () => {
    t = await startTestApp(kind);
    runnerId = await insertRunner(t.store, t.org.id, { name: 'sweeper' });
    const created = await post({ agent_slug: 'shell', agentfile_layer: 'PROMPT "fixture"' });
    expect(created.statusCode, created.body).toBe(201);
    podKey = (created.json() as { pod: { pod_key: string } }).pod.pod_key;
  });

  afterAll(async () => {
    await t?.close();
  });

  describe('rejected requests write nothing', () => {
    let before: Awaited<ReturnType<typeof snapshot>>;

    beforeEach(async () => {
      before = await snapshot();
    });

    afterEach(async () => {
      const after = await snapshot();
      expect(after.counts).toEqual(before.counts);
      expect(after).toEqual(before);
    });

    describe('POST /pods: wrong JSON types and out-of-range values', () => {
      it.each(Object.keys(CREATE_BAD))('a bad %s → 400 naming it', async (field) => {
        for (const value of CREATE_BAD[field]) {
          const base: Record<string, unknown> = field === 'agent_slug' ? {} : { agent_slug: 'shell' };
          expectInvalid(await post({ ...base, [field]: value }), `/${field}`);
        }
      });

      it('agent_slug: 3 → 400 "agent_slug must be a string" (the contract\'s own example)', async () => {
        const body = expectInvalid(await post({ agent_slug: 3 }), '/agent_slug');
        expect(body.error).toBe('agent_slug must be a string');
        expect(body.details).toEqual([{ field: '/agent_slug', message: 'agent_slug must be a string' }]);
      });

      it('runner_id: "1" → 400 "runner_id must be an integer" (bodies are not coerced)', async () => {
        const body = expectInvalid(await post({ agent_slug: 'shell', runner_id: String(runnerId) }), '/runner_id');
        expect(body.details!.find((d) => d.field === '/runner_id')!.message).toBe('runner_id must be an integer');
      });

      it('without agent_slug (or a preset), or with an empty object → 400 "give agent_slug or preset"', async () => {
        for (const payload of [{}, { alias: 'x' }, { agentfile_layer: 'PROMPT "x"' }]) {
          const body = expectInvalid(await post(payload), '/agent_slug');
          expect(body.details!.map((d) => d.message)).toContain('agent_slug give agent_slug or preset');
        }
      });

      it('reports every bad field at once', async () => {
        const body = expectError(await post({ agent_slug: 3, runner_id: '1', alias: 'a'.repeat(101), ticket_slug: [], bogus: 1 }), 400, 'VALIDATION_FAILED');
        const fields = body.details!.map((d) => d.field);
        for (const f of ['/agent_slug', '/runner_id', '/alias', '/ticket_slug', '/bogus']) expect(fields).toContain(f);
        expect(body.error).toMatch(/\(and \d+ more\)$/);
      });

      it('values the schema accepts but the organization does not → 400 naming them', async () => {
        expectInvalid(await post({ agent_slug: 'no-such-agent' }), '/agent_slug');
        expectInvalid(await post({ agent_slug: 'shell', runner_id: 999_999 }), '/runner_id');
        expectInvalid(await post({ agent_slug: 'shell', ticket_slug: 'ACME-999' }), '/ticket_slug');
        expectInvalid(await post({ agent_slug: 'shell', agentfile_layer: 'REPO nowhere' }), '/agentfile_layer');
        expectInvalid(await post({ agent_slug: 'shell', agentfile_layer: 'CONFIG channel_id = 999999' }), '/agentfile_layer');
      });

      it('an agentfile_layer over 64 KiB, by characters or by UTF-8 bytes → 400 naming it', async () => {
        expectInvalid(await post({ agent_slug: 'shell', agentfile_layer: 'x'.repeat(64 * KiB + 1) }), '/agentfile_layer');
        expectInvalid(await post({ agent_slug: 'shell', agentfile_layer: `PROMPT "${'€'.repeat(30_000)}"` }), '/agentfile_layer');
        expectInvalid(await post({ agent_slug: 'shell', agentfile_layer: '\n'.repeat(2001) + 'PROMPT "x"' }), '/agentfile_layer');
      });

      it('a NUL character anywhere in the body → 400 VALIDATION_FAILED', async () => {
        for (const payload of [
          '{"agent_slug":"shell","alias":"a\\u0000b"}',
          '{"agent_slug":"sh\\u0000ell"}',
          '{"agent_slug":"shell","agentfile_layer":"PROMPT \\"x\\u0000\\""}',
        ]) {
          expectError(await raw(payload), 400, 'VALIDATION_FAILED');
        }
        // Through an agentfile escape instead of a JSON one.
        expectInvalid(await post({ agent_slug: 'shell', agentfile_layer: 'PROMPT "x\\u0000y"' }), '/agentfile_layer');
      });

      it('property: one field of a wrong JSON type → 400 naming it', async () => {
        const wrongType = fc.oneof(
          fc.integer(),
          fc.double({ noNaN: true, noDefaultInfinity: true }),
          fc.boolean(),
          fc.constant(null),
          fc.array(fc.string(), { maxLength: 3 }),
          fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), fc.string(), { maxKeys: 3 }),
        );
        const stringField = fc.constantFrom('agent_slug', 'agentfile_layer', 'ticket_slug', 'alias');
        await fc.assert(
          fc.asyncProperty(stringField, wrongType, async (field, value) => {
            expectInvalid(await post({ agent_slug: 'shell', [field]: value }), `/${field}`);
          }),
          { numRuns: NUM_RUNS },
        );
        const badRunnerId = fc.oneof(
          fc.string(),
          fc.boolean(),
          fc.constant(null),
          fc.integer({ max: 0 }),
          fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d)),
          fc.array(fc.integer({ min: 1 }), { maxLength: 2 }),
        );
        await fc.assert(
          fc.asyncProperty(badRunnerId, async (value) => {
            expectInvalid(await post({ agent_slug: 'shell', runner_id: value }), '/runner_id');
          }),
          { numRuns: NUM_RUNS },
        );
      });
    });

    describe('POST /pods: unknown fields', () => {
      it.each(UNKNOWN_FIELDS)('unknown field %s → 400 naming it', async (field, value) => {
        const body = expectInvalid(await post({ agent_slug: 'shell', [field]: value }), `/${field}`);
        expect(body.details!.find((d) => d.field === `/${field}`)!.message).toMatch(/not a known field/);
      });

      it('property: any unknown top-level field → 400 naming it', async () => {
        const known = new Set(['agent_slug', 'agentfile_layer', 'runner_id', 'ticket_slug', 'alias']);
        const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,20}$/).filter((n) => !known.has(n) && n !== '__proto__' && n !== 'constructor');
        // A value holding a `__proto__` or `constructor` key anywhere is refused before validation,
        // as INVALID_JSON (the prototype-pollution test below): the property is about the rest.
        const value = fc.jsonValue().filter((v) => !/"(__proto__|constructor)":/.test(JSON.stringify(v)));
        await fc.assert(
          fc.asyncProperty(name, value, async (field, fieldValue) => {
            expectInvalid(await post({ agent_slug: 'shell', [field]: fieldValue }), `/${field}`);
          }),
          { numRuns: NUM_RUNS },
        );
      });
    });

    describe('POST /pods: bodies that are not JSON objects', () => {
      it.each(NON_OBJECT_JSON)('non-object JSON %s → 400 VALIDATION_FAILED', async (payload) => {
        expectError(await raw(payload), 400, 'VALIDATION_FAILED');
      });

      it.each(MALFORMED_JSON)('malformed JSON %j → 400 INVALID_JSON', async (payload) => {
        expectError(await raw(payload), 400, 'INVALID_JSON');
      });

      it('invalid UTF-8 → 400 INVALID_JSON', async () => {
        for (const payload of INVALID_UTF8) expectError(await raw(payload), 400, 'INVALID_JSON');
      });

      it('prototype-pollution keys → 400, and nothing is polluted', async () => {
        for (const payload of PROTO_BODIES) expectError(await raw(payload), 400);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      });

      it('no body at all → 400 VALIDATION_FAILED; an empty JSON body → 400', async () => {
        expectError(await t.request({ method: 'POST', url: t.path('/pods') }), 400, 'VALIDATION_FAILED');
        expectError(await raw(''), 400);
      });

      it.each(WRONG_CONTENT_TYPES)('content type %s → 415 UNSUPPORTED_MEDIA_TYPE', async (contentType) => {
        expectError(await raw('{"agent_slug":"shell"}', contentType), 415, 'UNSUPPORTED_MEDIA_TYPE');
      });

      it('a JSON body without a content type → 415 or 400, never a pod', async () => {
        const res = await t.request({ method: 'POST', url: t.path('/pods'), payload: '{"agent_slug":"shell"}', headers: { 'content-type': '' } });
        expectError(res);
      });

      it('a body over 1 MiB → 413 PAYLOAD_TOO_LARGE', async () => {
        expectError(await raw(JSON.stringify({ agent_slug: 'shell', agentfile_layer: 'x'.repeat(MiB) })), 413, 'PAYLOAD_TOO_LARGE');
        expectError(await raw(JSON.stringify({ agent_slug: 'shell', alias: 'y'.repeat(2 * MiB) })), 413, 'PAYLOAD_TOO_LARGE');
      });

      it('a body just under 1 MiB but with an oversized agentfile_layer → 400, not 413', async () => {
        expectInvalid(await post({ agent_slug: 'shell', agentfile_layer: 'x'.repeat(MiB - 100) }), '/agentfile_layer');
      });

      it('an Idempotency-Key on a refused create stores no key (a malformed body is not replayed)', async () => {
        expectError(await raw('{"agent_slug":', 'application/json'), 400, 'INVALID_JSON');
        expectInvalid(await post({ agent_slug: 3 }, { 'idempotency-key': 'malformed-1' }), '/agent_slug');
        expectError(await post({ agent_slug: 'shell' }, { 'idempotency-key': '' }), 400, 'VALIDATION_FAILED');
      });
    });

    describe('query parameters', () => {
      it.each(LIST_BAD_QUERIES)('GET /pods?%s → 400 naming %s', async (query, param) => {
        expectInvalid(await get(`/pods?${query}`), param);
      });

      it.each(LIST_BAD_QUERIES)('GET /runners/:id/pods?%s → 400 naming %s', async (query, param) => {
        expectInvalid(await get(`/runners/${runnerId}/pods?${query}`), param);
        // Query errors come before the lookup: 400 for a runner that does not exist, too.
        expectInvalid(await get(`/runners/999999/pods?${query}`), param);
      });

      it.each(OUTPUT_BAD_QUERIES)('GET /pods/:key/output?%s → 400 naming %s', async (query, param) => {
        expectInvalid(await get(`/pods/${podKey}/output?${query}`), param);
        expectInvalid(await get(`/pods/p-doesnotexist00/output?${query}`), param);
      });

      it('the contract\'s examples: limit=abc, limit=0, limit=-1, offset=-1 are 400; limit=1000 is clamped', async () => {
        for (const q of ['limit=abc', 'limit=0', 'limit=-1', 'offset=-1']) {
          expectInvalid(await get(`/pods?${q}`), q.split('=')[0]);
          expectInvalid(await get(`/runners/${runnerId}/pods?${q}`), q.split('=')[0]);
        }
        const clamped = await get('/pods?limit=1000');
        expect(clamped.statusCode, clamped.body).toBe(200);
        expect((clamped.json() as { limit: number }).limit).toBe(100);
        expect(((await get(`/runners/${runnerId}/pods?limit=1000`)).json() as { limit: number }).limit).toBe(100);
      });

      it('good values of every parameter are accepted', async () => {
        for (const path of [
          '/pods?limit=1&offset=0&status=initializing',
          '/pods?limit=100&offset=9007199254740991',
          `/runners/${runnerId}/pods?status=terminated&limit=50&offset=3`,
          `/pods/${podKey}/output?tail_bytes=1`,
          `/pods/${podKey}/output?tail_bytes=1048576`,
        ]) {
          const res = await get(path);
          expect(res.statusCode, `${path}: ${res.body}`).toBe(200);
        }
      });
    });

    describe('path parameters', () => {
      it.each(BAD_RUNNER_IDS)('GET /runners/%s and /runners/%s/pods → 400 naming id', async (id) => {
        expectInvalid(await get(`/runners/${id}`), 'id');
        expectInvalid(await get(`/runners/${id}/pods`), 'id');
      });

      it('a well-formed runner id that does not exist → 404', async () => {
        expectError(await get('/runners/999999'), 404, 'NOT_FOUND');
        expectError(await get('/runners/9007199254740991/pods'), 404, 'NOT_FOUND');
      });

      it('a pod key over 64 characters → 400 naming key; a well-formed unknown key → 404', async () => {
        const long = 'p-' + 'a'.repeat(63);
        expectInvalid(await get(`/pods/${long}`), 'key');
        expectInvalid(await get(`/pods/${long}/output`), 'key');
        expectInvalid(await t.request({ method: 'POST', url: t.path(`/pods/${long}/terminate`) }), 'key');
        for (const key of ['p-unknown', 'P-UPPER', 'not%20a%20key', '%E2%9C%93', 'a'.repeat(64)]) {
          expectError(await get(`/pods/${key}`), 404, 'NOT_FOUND');
          expectError(await t.request({ method: 'POST', url: t.path(`/pods/${key}/terminate`) }), 404, 'NOT_FOUND');
        }
      });

      it('a NUL or a malformed escape in the path → 400', async () => {
        // Not about one parameter, so no details are required.
        expectError(await get('/pods/p-%00'), 400, 'VALIDATION_FAILED');
        expectError(await get('/runners/1%00'), 400, 'VALIDATION_FAILED');
        expectError(await get('/pods/%E0%A4%A'), 400, undefined);
      });

      it('a pod key case variant of a real one → 404 and the pod is untouched', async () => {
        expectError(await t.request({ method: 'POST', url: t.path(`/pods/${podKey.toUpperCase()}/terminate`) }), 404, 'NOT_FOUND');
        expectError(await get(`/pods/${podKey}%20`), 404, 'NOT_FOUND');
      });
    });
  });

  it('after the whole sweep the fixture pod is still the only pod, still initializing', async () => {
    const pods = await t.store.db.selectFrom('pods').select(['key', 'status']).execute();
    expect(pods).toEqual([{ key: podKey, status: 'initializing' }]);
  });
});
