/**
 * Every answer the HTTP layer gives on its own carries the contract's error body (docs/api.md,
 * docs/decisions.md): the request timeout (408), oversized headers (431), requests Node's parser refuses (400),
 * unknown methods (404 like an unknown route: `FOO`, `QUERY`, `CONNECT`), `Expect` values other
 * than 100-continue (417). Over a real socket: none of these reach Fastify's request path.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { ALLOWED_ERROR_KEYS, type ErrorBodyJson } from '../helpers/errors.ts';
import { rawExchange, type RawExchange, type RawResponse } from '../helpers/raw-http.ts';

const TIMEOUT_MS = 600;

/** The contract's error body on a raw response: JSON, code, a request id matching x-request-id. */
function expectRawError(response: RawResponse, status: number, code: string): ErrorBodyJson {
  expect(response.status, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json\b/);
  const body = response.json as ErrorBodyJson;
  expect(body, response.body).toBeTypeOf('object');
  expect(body.code).toBe(code);
  expect(body.error.trim().length).toBeGreaterThan(0);
  expect(body.request_id).toMatch(/^req_[0-9a-f]{32}$/);
  expect(response.headers['x-request-id']).toBe(body.request_id);
  for (const key of Object.keys(body)) expect(ALLOWED_ERROR_KEYS).toContain(key);
  if (code === 'VALIDATION_FAILED') expect(body.details?.length).toBeGreaterThan(0);
  return body;
}

describe('answers of the HTTP layer, over a socket', () => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    t = await startTestApp('sqlite', { requestTimeoutMs: TIMEOUT_MS });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await t?.close();
  });
  const open: RawExchange[] = [];
  afterEach(() => {
    for (const exchange of open.splice(0)) exchange.destroy();
  });

  const exchange = (data: string) => {
    const opened = rawExchange(port, data);
    open.push(opened);
    return opened;
  };
  const request = (head: string, body = '') => exchange(`${head.split('\n').join('\r\n')}\r\n\r\n${body}`);

  describe('request timeout (408)', () => {
    it('a body that has not fully arrived in time: 408 REQUEST_TIMEOUT in the error body, socket closed', async () => {
      const body = JSON.stringify({ token: 'drvreg_x', name: 'slow', labels: [], max_pods: 1, version: '1', os: 'linux', arch: 'x64' });
      const slow = request(`POST /api/v1/runner/register HTTP/1.1\nHost: x\nContent-Type: application/json\nContent-Length: ${body.length}`, body.slice(0, 10));
      // Trickle a byte at a time, never finishing.
      const trickle = setInterval(() => slow.write(' '), 100);
      try {
        const response = await slow.response;
        expectRawError(response, 408, 'REQUEST_TIMEOUT');
        expect(response.headers.connection).toBe('close');
        expect(await slow.closed).toBeGreaterThanOrEqual(TIMEOUT_MS);
      } finally {
        clearInterval(trickle);
      }
      // No runner was registered and the server goes on.
      expect((await t.request({ method: 'GET', url: '/healthz', key: null })).statusCode).toBe(200);
    });

    it('headers that never end: 408 as well', async () => {
      const slow = exchange('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ');
      expectRawError(await slow.response, 408, 'REQUEST_TIMEOUT');
      await slow.closed;
    });

    it('an idle keep-alive connection is not cut by the request timeout', async () => {
      const ex = request('GET /healthz HTTP/1.1\nHost: x');
      expect((await ex.response).status).toBe(200);
      const second = new Promise<string>((resolve) => {
        let text = '';
        ex.socket.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          if (text.includes('"status":"ok"')) resolve(text);
        });
      });
      await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 2));
      expect(ex.socket.destroyed).toBe(false);
      ex.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(await second).toMatch(/^HTTP\/1\.1 200/);
    });
  });

  describe('headers too large (431)', () => {
    it('request line and headers beyond 64 KiB: 431 HEADERS_TOO_LARGE in the error body', async () => {
      const ex = request(`GET /healthz HTTP/1.1\nHost: x\nX-Big: ${'a'.repeat(70 * 1024)}`);
      expectRawError(await ex.response, 431, 'HEADERS_TOO_LARGE');
      await ex.closed;
    });

    it('a schema-valid 4,096-character non-ASCII access_token fits (the route answers, not the HTTP layer)', async () => {
      const token = encodeURIComponent('€'.repeat(4096));
      expect(token.length).toBeGreaterThan(16 * 1024); // Node's default limit would answer 431
      const ex = request(`GET ${t.path('/repositories/999/branches')}?access_token=${token} HTTP/1.1\nHost: x\nX-API-Key: ${t.key}`);
      const response = await ex.response;
      expectRawError(response, 404, 'NOT_FOUND');
      expect((response.json as ErrorBodyJson).error).toMatch(/repository/);
    });
  });

  describe("requests Node's parser refuses", () => {
    it.each([
      ['a header line without a colon', 'GET /healthz HTTP/1.1\nHost x', 'headers'],
      ['an unknown HTTP version', 'GET /healthz HTTP/7.1\nHost: x', 'request'],
      ['Content-Length and Transfer-Encoding both', 'POST /healthz HTTP/1.1\nHost: x\nContent-Length: 3\nTransfer-Encoding: chunked', 'Transfer-Encoding'],
      ['a malformed Content-Length', 'POST /healthz HTTP/1.1\nHost: x\nContent-Length: 1x', 'Content-Length'],
    ])('%s: 400 VALIDATION_FAILED', async (_what, head, field) => {
      const ex = request(head);
      const body = expectRawError(await ex.response, 400, 'VALIDATION_FAILED');
      expect(body.details!.map((d) => d.field)).toContain(field);
      await ex.closed;
    });

    it('Expect other than 100-continue: 417 EXPECTATION_FAILED', async () => {
      const ex = request('GET /healthz HTTP/1.1\nHost: x\nExpect: something-else');
      expectRawError(await ex.response, 417, 'EXPECTATION_FAILED');
    });
  });

  describe('the runner link path without a WebSocket upgrade', () => {
    it('GET /api/v1/runner/connect: 401 without a credential, 404 in the error body with one', async () => {
      const none = request('GET /api/v1/runner/connect HTTP/1.1\nHost: x');
      expectRawError(await none.response, 401, 'AUTH_REQUIRED');
      const token = await t.request({ method: 'POST', url: '/api/v1/admin/orgs/acme/runner-tokens', key: null, payload: {}, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      const registered = await t.request({
        method: 'POST',
        url: '/api/v1/runner/register',
        key: null,
        payload: { token: (token.json() as { token: string }).token, name: 'plain', labels: [], max_pods: 1, version: '1', os: 'linux', arch: 'x64' },
      });
      const credential = (registered.json() as { credential: string }).credential;
      const plain = request(`GET /api/v1/runner/connect HTTP/1.1\nHost: x\nAuthorization: Bearer ${credential}`);
      const body = expectRawError(await plain.response, 404, 'NOT_FOUND');
      expect(body.error).toMatch(/WebSocket/);
    });
  });

  describe('unknown methods are answered like unknown routes (404), before anything else', () => {
    it.each(['FOO', 'BREW', 'CONNECT'])('%s: 404 NOT_FOUND', async (method) => {
      const ex = request(`${method} ${t.path('/tickets')} HTTP/1.1\nHost: x`);
      expectRawError(await ex.response, 404, 'NOT_FOUND');
    });

    it.each(['QUERY', 'PROPFIND', 'TRACE'])('%s (known to the parser, not routed): 404 NOT_FOUND without a key, without a content type', async (method) => {
      const ex = request(`${method} ${t.path('/tickets')} HTTP/1.1\nHost: x`);
      expectRawError(await ex.response, 404, 'NOT_FOUND');
    });
  });
});
