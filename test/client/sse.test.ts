/**
 * The client's reading of the two event streams of docs/events.md (src/client/sse.ts): framing,
 * resuming after a break (Last-Event-ID for events, the byte offset for a pod's output), the
 * `reset` and `end` events, and error answers.
 *
 * The streams themselves (GET /events, GET /pods/:key/output/stream) are built on another branch;
 * until they are merged, a few lines of node:http here speak the contract's wire format, so that
 * what the CLI's streaming commands rely on is checked. The end-to-end checks of `events`,
 * `channels tail`, `pods logs -f` and `pods run --follow` against the real server come with them.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, DroverClient } from '../../src/client/index.ts';
import { followEvents, followOutput, readSse } from '../../src/client/sse.ts';

type Handler = (request: http.IncomingMessage, response: http.ServerResponse, attempt: number) => void;

let server: http.Server | undefined;
afterEach(async () => {
  if (!server) return;
  server.closeAllConnections(); // streams left open by a test
  await new Promise<void>((resolve) => server!.close(() => resolve()));
  server = undefined;
});

/** A stand-in server; `handle` gets each request with its attempt number (1, 2, …). */
async function standIn(handle: Handler): Promise<{ client: DroverClient; requests: http.IncomingMessage[] }> {
  const requests: http.IncomingMessage[] = [];
  server = http.createServer((request, response) => {
    requests.push(request);
    handle(request, response, requests.length);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { client: new DroverClient({ server: `http://127.0.0.1:${port}`, org: 'acme', apiKey: 'drv_test' }), requests };
}

/** Drops the connection a moment after what was written has been sent. */
const breakLater = (response: http.ServerResponse) => () => setTimeout(() => response.destroy(), 50);
const sse = (response: http.ServerResponse) => response.writeHead(200, { 'content-type': 'text/event-stream' });
const event = (id: number, type: string, data: unknown) => `id: ${id}\nevent: ${type}\ndata: ${JSON.stringify({ id, type, created_at: '2026-11-24T10:00:00.000Z', data })}\n\n`;

async function collect<T>(stream: AsyncGenerator<T>, count: number): Promise<T[]> {
  const items: T[] = [];
  for await (const item of stream) {
    items.push(item);
    if (items.length === count) break;
  }
  return items;
}

describe('reading the event streams of docs/events.md', () => {
  it('splits events however the bytes arrive, keepalive comments and multi-line data included', async () => {
    const body = `: keepalive\n\nid: 1\nevent: ticket.created\ndata: {"a":\ndata: 1}\n\nid: 2\nevent: pod.updated\ndata: é${'x'.repeat(10)}\n\n`;
    const bytes = Buffer.from(body, 'utf8');
    const chunks = [bytes.subarray(0, 7), bytes.subarray(7, 40), bytes.subarray(40, 69), bytes.subarray(69)];
    const response = new Response(new ReadableStream({ start: (c) => (chunks.forEach((chunk) => c.enqueue(chunk)), c.close()) }));
    const messages = [];
    for await (const message of readSse(response)) messages.push(message);
    expect(messages).toEqual([
      { id: '1', event: 'ticket.created', data: '{"a":\n1}' },
      { id: '2', event: 'pod.updated', data: `é${'x'.repeat(10)}` },
    ]);
  });

  it('events: sends the key and the filters, resumes after a break with Last-Event-ID, passes reset on', async () => {
    const { client, requests } = await standIn((request, response, attempt) => {
      sse(response);
      if (attempt === 1) {
        // The connection breaks mid-stream, once both events have gone out.
        response.write(event(7, 'ticket.created', { ticket: { slug: 'ACME-1' } }) + event(8, 'ticket.updated', { ticket: { slug: 'ACME-1' } }), breakLater(response));
      } else {
        response.write(`event: reset\ndata: {}\n\n${event(9, 'ticket.deleted', { ticket: { slug: 'ACME-1' } })}`);
      }
    });
    const retries: string[] = [];
    const stream = followEvents(client, { types: 'ticket.*', ticket_slug: 'ACME-1' }, { retryMs: 10, onRetry: (reason) => retries.push(reason) });
    const events = await collect(stream, 4);
    expect(events.map((e) => ('id' in e && typeof e.id === 'number' ? `${e.type}#${e.id}` : e.type))).toEqual(['ticket.created#7', 'ticket.updated#8', 'reset', 'ticket.deleted#9']);
    expect(retries).toHaveLength(1);
    expect(requests[0].url).toBe('/api/v1/ext/orgs/acme/events?types=ticket.*&ticket_slug=ACME-1');
    expect(requests[0].headers['x-api-key']).toBe('drv_test');
    expect(requests[0].headers.accept).toBe('text/event-stream');
    expect(requests[0].headers['last-event-id']).toBeUndefined();
    expect(requests[1].headers['last-event-id']).toBe('8');
  });

  it('events: an error answer (403 for a type the key may not read) is an ApiError, not retried', async () => {
    const { client, requests } = await standIn((_request, response) => {
      response.writeHead(403, { 'content-type': 'application/json', 'x-request-id': 'req_x' });
      response.end(JSON.stringify({ error: 'this API key lacks the pods:read scope', code: 'INSUFFICIENT_SCOPE', request_id: 'req_x', required_scopes: ['pods:read'] }));
    });
    const failure = await collect(followEvents(client, { types: 'pod.*' }, { retryMs: 10 }), 1).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({ status: 403, code: 'INSUFFICIENT_SCOPE', requestId: 'req_x', requiredScopes: ['pods:read'] });
    expect(requests).toHaveLength(1);
  });

  it('output: from an offset, resumed after a break from the byte after the last received, repeated bytes skipped, until end', async () => {
    const { client, requests } = await standIn((request, response, attempt) => {
      sse(response);
      const data = (offset: number, text: string) => `event: output\ndata: ${JSON.stringify({ offset, data: text })}\n\n`;
      if (attempt === 1) {
        response.write(data(5, 'héllo\n') + data(12, 'wor'), breakLater(response));
      } else {
        // The server answers from a little earlier than asked: the client drops what it had.
        response.end(data(13, 'orld\n') + `event: end\ndata: ${JSON.stringify({ status: 'completed', exit_code: 0 })}\n\n`);
      }
    });
    const items = await collect(followOutput(client, 'p-abc', { offset: 5, retryMs: 10 }), 10);
    expect(items).toEqual([
      { type: 'output', offset: 5, data: 'héllo\n' },
      { type: 'output', offset: 12, data: 'wor' },
      { type: 'output', offset: 15, data: 'ld\n' },
      { type: 'end', status: 'completed', exit_code: 0 },
    ]);
    expect(requests.map((r) => r.url)).toEqual(['/api/v1/ext/orgs/acme/pods/p-abc/output/stream?offset=5', '/api/v1/ext/orgs/acme/pods/p-abc/output/stream?offset=15']);
  });

  it('stops when aborted, without another attempt', async () => {
    const { client, requests } = await standIn((_request, response) => {
      sse(response);
      response.write(event(1, 'pod.created', { pod: { key: 'p-1' } }));
    });
    const controller = new AbortController();
    const seen: unknown[] = [];
    const failure = await (async () => {
      for await (const item of followEvents(client, {}, { signal: controller.signal, retryMs: 10 })) {
        seen.push(item);
        controller.abort();
      }
    })().catch((error: unknown) => error);
    expect(seen).toHaveLength(1);
    expect(failure === undefined || (failure as Error).name === 'AbortError').toBe(true);
    expect(requests).toHaveLength(1);
  });
});
