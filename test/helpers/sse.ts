import { readSse, type SseMessage } from '../../src/client/sse.ts';

/** An open text/event-stream read into `messages` as they arrive; `close()` aborts it. */
export interface OpenStream {
  status: number;
  /** The JSON error body of a refused stream. */
  error: { code: string; required_scopes?: string[]; details?: { field: string }[] } | null;
  messages: SseMessage[];
  /** Resolves once `count` messages (other than keepalive comments, which the parser drops) have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<SseMessage[]>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

export async function openStream(url: string, headers: Record<string, string>): Promise<OpenStream> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const messages: SseMessage[] = [];
  const error = response.ok ? null : ((await response.json()) as OpenStream['error']);
  const waiters: { count: number; resolve: () => void }[] = [];
  const settle = () => {
    for (const waiter of [...waiters]) {
      if (messages.length < waiter.count) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };
  const ended =
    response.ok && response.headers.get('content-type')?.startsWith('text/event-stream')
      ? (async () => {
          try {
            for await (const message of readSse(response)) {
              messages.push(message);
              settle();
            }
          } catch {
            // aborted by close()
          }
        })()
      : Promise.resolve();
  return {
    status: response.status,
    error,
    messages,
    ended,
    async waitFor(count, timeoutMs = 20_000) {
      if (messages.length < count) {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`got ${messages.length} of ${count} events: ${messages.map((m) => m.event).join(', ')}`)), timeoutMs);
          waiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
        });
      }
      return messages.slice(0, count);
    },
    close: () => controller.abort(),
  };
}

export interface ParsedEvent {
  id: number;
  type: string;
  created_at: string;
  /** The resource: the event's `data` holds it under one key, the type's first word (checked here). */
  data: Record<string, unknown>;
}

/** An event of `GET /events`, its resource taken out of `data` (`{"ticket": {…}}` → the ticket). */
export function parsed(message: SseMessage): ParsedEvent {
  const event = JSON.parse(message.data) as Omit<ParsedEvent, 'data'> & { data: Record<string, Record<string, unknown>> };
  const kinds = Object.keys(event.data);
  if (kinds.length !== 1 || kinds[0] !== event.type.split('.')[0]) throw new Error(`event data ${JSON.stringify(event.data).slice(0, 200)} is not {"${event.type.split('.')[0]}": …}`);
  return { ...event, data: event.data[kinds[0]] };
}

/** The contract's bound: a stream closes within 5 s of its credential ending (docs/events.md "Streams end with their credential"). */
export const CLOSE_WITHIN_MS = 5_000;

/** Resolves when the server has ended `stream`; fails if that takes longer than `ms`. */
export async function closesWithin(stream: OpenStream, ms = CLOSE_WITHIN_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`the stream was still open ${ms} ms after its credential ended`)), ms);
  });
  try {
    await Promise.race([stream.ended, late]);
  } finally {
    clearTimeout(timer);
  }
}
