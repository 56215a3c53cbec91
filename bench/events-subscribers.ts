/**
 * The 1,000 SSE subscribers of bench/events.ts, in a worker thread of their own: their reading
 * does not hold up the bench's request loop, which creates the tickets. One raw socket each
 * (lighter than an HTTP client: they share the machine with the server); the bytes are scanned
 * for each event's `"slug":"` (no decoding, no JSON parsing: one per ticket.created event).
 *
 * Messages in: `connect` {url, apiKey, count}; `phase` {name: 'paced', base, size} or {name: 'burst'}; `latencies`
 * {written: [slug, answeredAt][]}; `counts`; `close`. Out (each answering its message's type): `connect` {count}, `phase`, `latencies` {summary}, `counts` {counts, last}.
 * Times are `performance.timeOrigin + performance.now()` in both threads (comparable across them).
 */
import net from 'node:net';
import { parentPort } from 'node:worker_threads';

interface Subscriber {
  socket: net.Socket;
  /** Paced phase: when each ticket's event arrived, by its number less `base` (NaN: not yet). */
  seen: Float64Array;
  /** Burst phase: events received, and the newest slug among them. */
  count: number;
  last: string;
}

const SLUG = Buffer.from('"slug":"');
const subscribers: Subscriber[] = [];
let phase: 'paced' | 'burst' = 'burst';
/** The number of the first ticket of the paced phase (slugs are `PREFIX-<number>`, numbered in order). */
let base = 0;
const ticketNumber = (slug: string) => Number(slug.slice(slug.lastIndexOf('-') + 1));
const now = () => performance.timeOrigin + performance.now();

/**
 * One subscriber on a raw socket: the GET written by hand, the answer's status line checked, then
 * every `"slug":"` in the bytes that follow is one ticket.created event (the chunked encoding's
 * size lines fall between frames and are never taken for one). The last bytes of a read are kept,
 * so a slug split across two reads is still found once.
 */
function subscribe(url: URL, apiKey: string): Promise<Subscriber> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const subscriber: Subscriber = { socket, seen: new Float64Array(0), count: 0, last: '' };
    let head = '';
    let tail: Buffer = Buffer.alloc(0);
    socket.on('connect', () => socket.write(`GET ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\nx-api-key: ${apiKey}\r\naccept: text/event-stream\r\n\r\n`));
    socket.on('error', reject);
    const onBody = (chunk: Buffer) => {
      const at = now();
      const buffer = tail.length > 0 ? Buffer.concat([tail, chunk]) : chunk;
      let from = 0;
      let found: number;
      while ((found = buffer.indexOf(SLUG, from)) !== -1) {
        const slugStart = found + SLUG.length;
        const slugEnd = buffer.indexOf(0x22, slugStart);
        if (slugEnd === -1) break; // the rest comes with the next read
        const slug = buffer.toString('latin1', slugStart, slugEnd);
        if (phase === 'paced') {
          const index = ticketNumber(slug) - base;
          if (index >= 0 && index < subscriber.seen.length) subscriber.seen[index] = at;
        } else {
          subscriber.count++;
          subscriber.last = slug;
        }
        from = slugEnd + 1;
      }
      // Keep what may hold the start of the next slug (unfinished, or cut inside `"slug":"`).
      tail = buffer.subarray(found !== -1 ? found : Math.max(from, buffer.length - SLUG.length));
    };
    const onHead = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) return;
      if (!head.startsWith('HTTP/1.1 200')) return reject(new Error(`subscribe answered ${head.slice(0, head.indexOf('\r\n'))}`));
      socket.off('data', onHead);
      socket.on('data', onBody);
      onBody(Buffer.from(head.slice(end + 4), 'latin1'));
      resolve(subscriber);
    };
    socket.on('data', onHead);
  });
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

parentPort!.on('message', async (message: { type: string; [key: string]: unknown }) => {
  if (message.type === 'connect') {
    const url = new URL(message.url as string);
    const count = message.count as number;
    for (let i = 0; i < count; i += 100) {
      subscribers.push(...(await Promise.all(Array.from({ length: Math.min(100, count - i) }, () => subscribe(url, message.apiKey as string)))));
    }
    parentPort!.postMessage({ type: 'connect', count: subscribers.length });
  } else if (message.type === 'phase') {
    phase = message.name as 'paced' | 'burst';
    base = (message.base as number | undefined) ?? 0;
    for (const subscriber of subscribers) {
      subscriber.count = 0;
      // Preallocated: a map per subscriber growing by thousands of entries made the reading itself pause for GC.
      if (phase === 'paced') subscriber.seen = new Float64Array(message.size as number).fill(NaN);
    }
    parentPort!.postMessage({ type: 'phase' });
  } else if (message.type === 'latencies') {
    const written = message.written as [string, number][];
    const latencies = new Float64Array(written.length * subscribers.length);
    let n = 0;
    let missing = 0;
    for (const [slug, answeredAt] of written) {
      for (const subscriber of subscribers) {
        const at = subscriber.seen[ticketNumber(slug) - base];
        if (at === undefined || Number.isNaN(at)) missing++;
        else latencies[n++] = Math.max(0, at - answeredAt);
      }
    }
    const sorted = latencies.subarray(0, n).sort();
    parentPort!.postMessage({ type: 'latencies', delivered: n, missing, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[n - 1] ?? NaN });
  } else if (message.type === 'counts') {
    parentPort!.postMessage({ type: 'counts', counts: subscribers.map((s) => s.count), last: subscribers.map((s) => s.last) });
  } else if (message.type === 'close') {
    for (const subscriber of subscribers) subscriber.socket.destroy();
    parentPort!.close();
  }
});
