import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { openApiDocument } from '../helpers/openapi.ts';

const expectErrorBody = (response: { statusCode: number; headers: Record<string, unknown>; json(): Record<string, unknown> }, code: string) => {
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const body = response.json();
  expect(body).toMatchObject({ code, error: expect.any(String), request_id: response.headers['x-request-id'] });
  expect((body.error as string).length).toBeGreaterThan(0);
};

describe.each(DATABASES)('API frame on %s', (kind) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('answers unknown routes and methods with the JSON error body', async () => {
    t = await startTestApp(kind);
    for (const [method, url] of [
      ['GET', '/'],
      ['GET', '/api/v1/nothing'],
      ['POST', t.path('/nothing')],
      ['DELETE', t.path('/tickets')],
    ] as const) {
      const response = await t.request({ method, url });
      expect(response.statusCode, `${method} ${url}`).toBe(404);
      expectErrorBody(response, 'NOT_FOUND');
    }
  });

  it('serves health and readiness without a key', async () => {
    t = await startTestApp(kind);
    expect((await t.request({ method: 'GET', url: '/healthz', key: null })).json()).toEqual({ status: 'ok' });
    const ready = await t.request({ method: 'GET', url: '/readyz', key: null });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready' });
  });

  describe('Idempotency-Key', () => {
    const post = (key: string, payload: object, apiKey?: string) =>
      t.request({ method: 'POST', url: t.path('/tickets'), payload, key: apiKey, headers: { 'idempotency-key': key } });

    it('replays the first response for the same key and body, creating one ticket', async () => {
      t = await startTestApp(kind);
      const first = await post('k-1', { type: 'bug', title: 'once' });
      const second = await post('k-1', { type: 'bug', title: 'once' });
      expect(first.statusCode).toBe(201);
      expect(second.statusCode).toBe(201);
      expect(second.body).toBe(first.body);
      expect(second.headers['idempotent-replayed']).toBe('true');
      expect((await t.request({ method: 'GET', url: t.path('/tickets') })).json().total).toBe(1);
    });

    it('is 409 IDEMPOTENCY_MISMATCH for the same key with another body', async () => {
      t = await startTestApp(kind);
      await post('k-2', { type: 'bug', title: 'one' });
      const other = await post('k-2', { type: 'bug', title: 'two' });
      expect(other.statusCode).toBe(409);
      expectErrorBody(other, 'IDEMPOTENCY_MISMATCH');
      expect((await t.request({ method: 'GET', url: t.path('/tickets') })).json().total).toBe(1);
    });

    it('is 409 IDEMPOTENCY_IN_PROGRESS while the first request is still running', async () => {
      t = await startTestApp(kind);
      const { key } = await t.issueKey(['tickets:write']);
      const responses = await Promise.all([1, 2, 3].map(() => post('k-3', { type: 'bug', title: 'slow' }, key)));
      // Exactly one request runs; the ones overlapping it are IN_PROGRESS, any later one replays it.
      const originals = responses.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined);
      expect(originals).toHaveLength(1);
      for (const r of responses) {
        if (r === originals[0]) continue;
        if (r.statusCode === 409) expectErrorBody(r, 'IDEMPOTENCY_IN_PROGRESS');
        else expect(r.body).toBe(originals[0].body);
      }
      expect((await t.request({ method: 'GET', url: t.path('/tickets') })).json().total).toBe(1);
    });

    it('reports IN_PROGRESS for a recorded but unfinished request', async () => {
      t = await startTestApp(kind);
      const keyRow = await t.store.db.selectFrom('api_keys').select('id').executeTakeFirstOrThrow();
      const payload = { type: 'bug', title: 'pending' };
      await t.store.db
        .insertInto('idempotency_keys')
        .values({
          api_key_id: keyRow.id,
          key: 'k-4',
          method_path: 'POST /api/v1/ext/orgs/acme/tickets',
          request_hash: (await import('node:crypto'))
            .createHash('sha256')
            .update('POST /api/v1/ext/orgs/acme/tickets')
            .update('\n')
            .update(JSON.stringify(payload))
            .digest('hex'),
          state: 'in_progress',
          status_code: null,
          response_body: null,
          created_at: Date.now(),
        })
        .execute();
      const response = await post('k-4', payload);
      expect(response.statusCode).toBe(409);
      expectErrorBody(response, 'IDEMPOTENCY_IN_PROGRESS');
    });

    it('keys are per API key, expire after 24 h, and must be at most 255 characters', async () => {
      let clock = Date.now();
      t = await startTestApp(kind, { now: () => clock });
      const other = await t.issueKey(['tickets:write']);
      await post('shared', { type: 'bug', title: 'a' });
      expect((await post('shared', { type: 'bug', title: 'b' }, other.key)).statusCode).toBe(201);
      clock += 24 * 60 * 60 * 1000 + 1;
      expect((await post('shared', { type: 'bug', title: 'c' })).statusCode).toBe(201);
      const tooLong = await post('x'.repeat(256), { type: 'bug', title: 'd' });
      expect(tooLong.statusCode).toBe(400);
      expectErrorBody(tooLong, 'VALIDATION_FAILED');
      expect((await t.request({ method: 'GET', url: t.path('/tickets') })).json().total).toBe(3);
    });

    it('does not store 5xx answers, and is ignored on non-creating routes', async () => {
      t = await startTestApp(kind);
      const put = await t.request({ method: 'PUT', url: t.path('/tickets/ACME-1'), payload: { title: 'x' }, headers: { 'idempotency-key': 'k-5' } });
      expect(put.statusCode).toBe(404);
      const rows = await t.store.db.selectFrom('idempotency_keys').selectAll().execute();
      expect(rows).toHaveLength(0);
    });
  });

  it('rate-limits per key with 429 and Retry-After, other keys unaffected', async () => {
    t = await startTestApp(kind, { rateLimitPerMinute: 3 });
    const other = await t.issueKey(['tickets:read']);
    for (let i = 0; i < 3; i++) expect((await t.request({ method: 'GET', url: t.path('/tickets') })).statusCode).toBe(200);
    const limited = await t.request({ method: 'GET', url: t.path('/tickets') });
    expect(limited.statusCode).toBe(429);
    expectErrorBody(limited, 'RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await t.request({ method: 'GET', url: t.path('/tickets'), key: other.key })).statusCode).toBe(200);
  });

  it('keeps last_used_at without writing on every request', async () => {
    let clock = Date.now();
    t = await startTestApp(kind, { now: () => clock });
    const lastUsed = async () => (await t.store.db.selectFrom('api_keys').select('last_used_at').orderBy('id').executeTakeFirstOrThrow()).last_used_at;
    expect(await lastUsed()).toBeNull();
    await t.request({ method: 'GET', url: t.path('/tickets') });
    await expect.poll(lastUsed).toBe(clock);
    const first = clock;
    clock += 10_000;
    await t.request({ method: 'GET', url: t.path('/tickets') });
    // Bounded on purpose: what is checked is that nothing is written (no event to wait for).
    await new Promise((r) => setTimeout(r, 50));
    expect(await lastUsed()).toBe(first);
    clock += 61_000;
    await t.request({ method: 'GET', url: t.path('/tickets') });
    await expect.poll(lastUsed).toBe(clock);
  });
});

describe('OpenAPI', () => {
  it('matches the committed docs/openapi.json (run `npm run openapi` after changing a schema)', async () => {
    const committed = JSON.parse(fs.readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8'));
    expect(await openApiDocument()).toEqual(committed);
  });

  it('is OpenAPI 3.1 with every ticket operation and the shared error body', async () => {
    const doc = (await openApiDocument()) as { openapi: string; paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, unknown> } };
    expect(doc.openapi).toBe('3.1.0');
    const base = '/api/v1/ext/orgs/{org}';
    expect(Object.keys(doc.paths[`${base}/tickets`]).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths[`${base}/tickets/{slug}`]).sort()).toEqual(['delete', 'get', 'put']);
    expect(Object.keys(doc.paths[`${base}/tickets/{slug}/status`])).toEqual(['patch']);
    expect(Object.keys(doc.paths[`${base}/tickets/board`])).toEqual(['get']);
    expect(doc.components.schemas).toHaveProperty('ErrorBody');
  });

  it('is served at /api/v1/openapi.json and rendered at /docs', async () => {
    const t = await startTestApp('sqlite');
    try {
      const json = await t.request({ method: 'GET', url: '/api/v1/openapi.json', key: null });
      expect(json.statusCode).toBe(200);
      expect(json.json().openapi).toBe('3.1.0');
      const docs = await t.request({ method: 'GET', url: '/docs', key: null });
      expect(docs.statusCode).toBe(200);
      expect(docs.headers['content-type']).toMatch(/text\/html/);
    } finally {
      await t.close();
    }
  });
});
