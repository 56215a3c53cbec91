/**
 * The client's API calls over node:http (src/client/http-call.ts), against a few lines of node:http
 * on loopback: what the server receives (method, path, key, body), the answer as sent, error
 * answers, an unreachable server, the deadline and the caller's abort; and that a call does not go
 * through fetch, whose first use costs a process ~120 ms (docs/cli.md "The typed client").
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, DroverClient, ORG_BASE, UnreachableError } from '../../src/client/index.ts';
import { toResponse } from '../../src/client/http-call.ts';

type Handler = (request: http.IncomingMessage, body: string, response: http.ServerResponse) => void;

let server: http.Server | undefined;
afterEach(async () => {
  if (!server) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server!.close(() => resolve()));
  server = undefined;
});

async function standIn(handle: Handler, timeoutMs?: number): Promise<{ client: DroverClient; port: number }> {
  server = http.createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => handle(request, body, response));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { client: new DroverClient({ server: `http://127.0.0.1:${port}`, org: 'acme', apiKey: 'drv_test', timeoutMs }), port };
}

const TICKET = { id: 7, slug: 'ACME-7', type: 'task', title: 'Ünïcode ✓', description: null, status: 'backlog', priority: 'medium', assignee_id: null, repository_id: null, parent_slug: null, labels: [], created_by: null, updated_by: null, created_at: '2026-11-28T00:00:00.000Z', updated_at: '2026-11-28T00:00:00.000Z' };

describe('API calls over node:http', () => {
  it('sends the method, path, key and JSON body, and gives the answer as sent, without fetch', async () => {
    const seen: { method?: string; url?: string; key?: string | string[]; type?: string; body?: string } = {};
    const { client } = await standIn((request, body, response) => {
      Object.assign(seen, { method: request.method, url: request.url, key: request.headers['x-api-key'], type: request.headers['content-type'], body });
      response.writeHead(201, { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'req-1' }).end(JSON.stringify({ ticket: TICKET }));
    });
    const fetchOfProcess = globalThis.fetch;
    globalThis.fetch = () => Promise.reject(new Error('fetch was used'));
    try {
      const answer = await client.call(client.api.POST(`${ORG_BASE}/tickets`, { params: { path: client.path }, body: { type: 'task', title: 'Ünïcode ✓' } }));
      expect(answer.status).toBe(201);
      expect(answer.data.ticket).toEqual(TICKET);
      expect(answer.raw).toBe(JSON.stringify({ ticket: TICKET }));
    } finally {
      globalThis.fetch = fetchOfProcess;
    }
    expect(seen).toEqual({ method: 'POST', url: '/api/v1/ext/orgs/acme/tickets', key: 'drv_test', type: 'application/json', body: JSON.stringify({ type: 'task', title: 'Ünïcode ✓' }) });
  });

  it('an error answer is an ApiError with its code, sentence and request id', async () => {
    const { client } = await standIn((_request, _body, response) =>
      response.writeHead(404, { 'content-type': 'application/json', 'x-request-id': 'req-2' }).end(JSON.stringify({ error: 'ticket not found', code: 'NOT_FOUND', request_id: 'req-2' })),
    );
    const failed = await client.call(client.api.GET(`${ORG_BASE}/tickets/{slug}`, { params: { path: { ...client.path, slug: 'ACME-404' } } })).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(ApiError);
    expect(failed).toMatchObject({ status: 404, code: 'NOT_FOUND', message: 'ticket not found', requestId: 'req-2' });
  });

  it('a server that is not there is UnreachableError naming the URL and ECONNREFUSED', async () => {
    const { client } = await standIn(() => {});
    server!.close();
    server = undefined;
    const failed = await client.call(client.api.GET(`${ORG_BASE}/tickets`, { params: { path: client.path } })).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(UnreachableError);
    expect((failed as Error).message).toMatch(/^cannot reach http:\/\/127\.0\.0\.1:\d+\/api\/v1\/ext\/orgs\/acme\/tickets: .*ECONNREFUSED/);
  });

  it('no answer within the deadline is UnreachableError "no answer", and the connection is dropped', async () => {
    let closed!: Promise<void>;
    const { client } = await standIn((request) => {
      closed = new Promise((resolve) => request.socket.once('close', () => resolve()));
    }, 300);
    const failed = await client.call(client.api.GET(`${ORG_BASE}/tickets`, { params: { path: client.path } })).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(UnreachableError);
    expect((failed as Error).message).toMatch(/: no answer \(The operation was aborted due to timeout\)$/);
    await closed;
  });

  it("the caller's abort ends the call and drops its connection", async () => {
    const controller = new AbortController();
    let closed!: Promise<void>;
    const { client } = await standIn((request) => {
      closed = new Promise((resolve) => request.socket.once('close', () => resolve()));
      controller.abort();
    });
    const failed = await client.call(client.api.GET(`${ORG_BASE}/tickets`, { params: { path: client.path }, signal: controller.signal })).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(UnreachableError);
    expect((failed as Error).message).toMatch(/no answer \(This operation was aborted\)$/);
    await closed;
  });

  it('an answer without a body (204) becomes a Response with none', async () => {
    const response = toResponse({ status: 204, statusText: 'No Content', headers: [['x-request-id', 'r']], text: '' });
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
    expect(response.headers.get('x-request-id')).toBe('r');
  });
});
