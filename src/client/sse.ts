/**
 * Server-Sent Events from the API (docs/events.md), read with eventsource-parser: the event stream
 * (`GET /events`, resumed with Last-Event-ID) and a pod's output stream
 * (`GET /pods/:key/output/stream`, resumed by byte offset until its `end` event).
 *
 * A stream that breaks (the server restarts, the connection drops) is opened again, after 1 s
 * doubling up to 10 s, from where it stopped, so a follower sees each event once and in order.
 * An error answer (401, 403, 404, 400…) is not retried: it is thrown as an ApiError.
 */
import { createParser } from 'eventsource-parser';
import { ApiError, UnreachableError, type DroverClient } from './index.ts';

export interface SseMessage {
  id: string | undefined;
  event: string;
  data: string;
}

/** The envelope of every event of `GET /events`. */
export interface DroverEvent {
  id: number;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

/** An `output` event of a pod's output stream, and its final `end` event. */
export type OutputEvent = { type: 'output'; offset: number; data: string } | { type: 'end'; status: string; exit_code: number | null };

const utf8 = new TextEncoder();

/** The events of one open text/event-stream response, as they arrive. */
export async function* readSse(response: Response): AsyncGenerator<SseMessage> {
  const queue: SseMessage[] = [];
  const parser = createParser({ onEvent: (m) => queue.push({ id: m.id, event: m.event ?? 'message', data: m.data }) });
  const decoder = new TextDecoder();
  if (!response.body) return;
  for await (const chunk of response.body) {
    parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
    while (queue.length > 0) yield queue.shift()!;
  }
}

export interface ReconnectOptions {
  signal?: AbortSignal;
  /** Called before each new attempt after a break, with why. */
  onRetry?(reason: string, delayMs: number): void;
  /** First delay after a break (default 1 s; doubles up to 10 s). */
  retryMs?: number;
}

/** Opens `url` as an event stream; an error answer is thrown as an ApiError. */
async function open(client: DroverClient, url: string, headers: Record<string, string>, signal?: AbortSignal): Promise<Response> {
  const response = await client.send(url, { headers: client.headers({ accept: 'text/event-stream', ...headers }), signal }, null);
  if (!response.ok) {
    const text = await response.text();
    let body = null;
    try {
      body = JSON.parse(text);
    } catch {
      // not the error body (a proxy's page): the status says enough
    }
    throw new ApiError(response.status, body, response.headers.get('x-request-id'));
  }
  return response;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/**
 * Reads an event stream for as long as the caller takes events, reconnecting after breaks.
 * `connect(lastId)` opens it again from after the last event seen.
 */
async function* resilient(
  connect: (lastId: string | undefined) => Promise<Response>,
  options: ReconnectOptions,
  startId?: string,
): AsyncGenerator<SseMessage> {
  let lastId = startId;
  let delay = options.retryMs ?? 1000;
  while (!options.signal?.aborted) {
    let reason: string;
    try {
      const response = await connect(lastId);
      delay = options.retryMs ?? 1000;
      for await (const message of readSse(response)) {
        if (message.id !== undefined) lastId = message.id;
        yield message;
      }
      reason = 'the stream ended';
    } catch (error) {
      if (error instanceof ApiError || options.signal?.aborted) throw error;
      reason = error instanceof UnreachableError ? error.message : `the stream broke (${(error as Error).message})`;
    }
    if (options.signal?.aborted) return;
    options.onRetry?.(reason, delay);
    await sleep(delay, options.signal);
    delay = Math.min(delay * 2, 10_000);
  }
}

export interface EventFilters {
  types?: string;
  channel_id?: number;
  pod_key?: string;
  loop_slug?: string;
  ticket_slug?: string;
}

function eventsUrl(client: DroverClient, filters: EventFilters): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) if (value !== undefined) query.set(name, String(value));
  return `${client.server}/api/v1/ext/orgs/${encodeURIComponent(client.org)}/events${query.size > 0 ? `?${query}` : ''}`;
}

/**
 * `GET /events` opened now (resolved once the server has answered, so every event from then on
 * reaches it), read without reconnecting: for callers that wait a bounded time and read the state
 * they wait on after subscribing (the MCP waits), so nothing that happens in between is missed.
 */
export async function openEvents(client: DroverClient, filters: EventFilters, signal: AbortSignal): Promise<AsyncGenerator<DroverEvent>> {
  const response = await open(client, eventsUrl(client, filters), {}, signal);
  return (async function* events() {
    for await (const message of readSse(response)) if (message.event !== 'reset') yield JSON.parse(message.data) as DroverEvent;
  })();
}

/** `GET /events` from after `lastEventId` (or from now), live, resumed across breaks. */
export async function* followEvents(client: DroverClient, filters: EventFilters, options: ReconnectOptions & { lastEventId?: string } = {}): AsyncGenerator<DroverEvent | { type: 'reset'; id?: string }> {
  const url = eventsUrl(client, filters);
  const connect = (lastId: string | undefined) => open(client, url, lastId === undefined ? {} : { 'last-event-id': lastId }, options.signal);
  for await (const message of resilient(connect, options, options.lastEventId)) {
    if (message.event === 'reset') {
      yield { type: 'reset', id: message.id };
      continue;
    }
    yield JSON.parse(message.data) as DroverEvent;
  }
}

/**
 * A pod's output from byte `offset`, live, until its `end` event (the last thing yielded). After a
 * break it resumes from the byte after the last output received.
 */
export async function* followOutput(client: DroverClient, podKey: string, options: ReconnectOptions & { offset?: number } = {}): AsyncGenerator<OutputEvent> {
  let next = options.offset ?? 0;
  const base = `${client.server}/api/v1/ext/orgs/${encodeURIComponent(client.org)}/pods/${encodeURIComponent(podKey)}/output/stream`;
  const connect = () => open(client, `${base}?offset=${next}`, {}, options.signal);
  for await (const message of resilient(connect, options)) {
    if (message.event === 'output') {
      const event = JSON.parse(message.data) as { offset: number; data: string };
      const bytes = utf8.encode(event.data);
      // After a reconnect the server may repeat bytes already yielded: skip up to `next`.
      const skip = Math.max(0, next - event.offset);
      next = Math.max(next, event.offset + bytes.length);
      if (skip < bytes.length) yield { type: 'output', offset: event.offset + skip, data: skip === 0 ? event.data : new TextDecoder().decode(bytes.subarray(skip)) };
    } else if (message.event === 'end') {
      const end = JSON.parse(message.data) as { status: string; exit_code: number | null };
      yield { type: 'end', status: end.status, exit_code: end.exit_code };
      return;
    }
  }
}
