/**
 * The 1,000 SSE subscribers of bench/events.ts, in a worker thread of their own: their reading
 * does not hold up the bench's request loop, which creates the tickets. They share the machine
 * with the server they measure, so they read as cheaply as they can: one raw socket each, every
 * read into one buffer they share, the bytes scanned for each event's `"slug":"` and the ticket's
 * number read off the digits in place (no decoding, no string, no JSON: one per ticket.created).
 *
 * Tickets are known by their number (slugs are `PREFIX-<number>`, numbered in order).
 * Messages in: `connect` {url, apiKey, count}; `phase` {name: 'paced', base, size} or {name: 'burst'};
 * `latencies` {written: [number, answeredAt][]}; `counts`; `disconnect`; `close`. Out (each
 * answering its message's type): `connect` {count}, `phase`, `latencies` {summary}, `counts`
 * {counts, last}, `disconnect`.
 * Times are `performance.timeOrigin + performance.now()` in both threads (comparable across them).
 */
import net from 'node:net';
import { parentPort } from 'node:worker_threads';

interface Subscriber {
  socket: net.Socket;
  /** Paced phase: when each ticket's event arrived, by its number less `base` (NaN: not yet). */
  seen: Float64Array;
  /** Burst phase: events received, and the newest ticket number among them. */
  count: number;
  last: number;
}

const SLUG = Buffer.from('"slug":"');
const QUOTE = 0x22;
const DASH = 0x2d;
/** Every subscriber's reads land here; each read is scanned before the next. */
const READ_BUFFER = Buffer.alloc(64 * 1024);
const subscribers: Subscriber[] = [];
let phase: 'paced' | 'burst' = 'burst';
/** The number of the first ticket of the paced phase. */
let base = 0;
const now = () => performance.timeOrigin + performance.now();

/** The number of the slug that ends before `end` (`…-<digits>`). */
function numberBefore(bytes: Buffer, end: number): number {
  let number = 0;
  for (let i = end - 1, scale = 1; bytes[i] !== DASH; i--, scale *= 10) number += (bytes[i] - 0x30) * scale;
  return number;
}

/** How many of the last bytes of `bytes` are the start of `"slug":"` (a match cut by the end of a read). */
function slugStartAtEnd(bytes: Buffer): number {
  for (let length = Math.min(SLUG.length - 1, bytes.length); length > 0; length--) {
    if (bytes.compare(SLUG, 0, length, bytes.length - length) === 0) return length;
  }
  return 0;
}

/** What a read holds: the numbers of the tickets whose events it ends, and where a cut match starts (-1: none). */
interface Scan {
  numbers: number[];
  cutFrom: number;
}

function scan(bytes: Buffer): Scan {
  const numbers: number[] = [];
  for (let found = bytes.indexOf(SLUG); found !== -1; ) {
    const end = bytes.indexOf(QUOTE, found + SLUG.length);
    if (end === -1) return { numbers, cutFrom: found };
    numbers.push(numberBefore(bytes, end));
    found = bytes.indexOf(SLUG, end + 1);
  }
  const partial = slugStartAtEnd(bytes);
  return { numbers, cutFrom: partial > 0 ? bytes.length - partial : -1 };
}

/**
 * The last reads scanned, with what they held. Every subscriber is sent the same bytes, mostly in
 * reads of the same bounds: a read equal byte for byte to one of these (a memcmp, far cheaper than
 * the scan) is taken as holding what that one held. The subscribers share the machine with the
 * server they measure: what they spend on scanning is taken from it.
 */
const recentScans: { bytes: Buffer; scan: Scan }[] = [];

function scanRead(read: Buffer): Scan {
  for (const recent of recentScans) if (recent.bytes.equals(read)) return recent.scan;
  const result = scan(read);
  recentScans.unshift({ bytes: Buffer.from(read), scan: result }); // a copy: the read buffer is shared
  if (recentScans.length > 8) recentScans.pop();
  return result;
}

/**
 * One subscriber: the GET written by hand, the answer's status line checked, then every
 * `"slug":"` in the bytes that follow is one ticket.created event (the chunked encoding's size
 * lines fall between frames and are never taken for one). A match cut by the end of a read is
 * kept, and completed by the next.
 */
function subscribe(url: URL, apiKey: string): Promise<Subscriber> {
  return new Promise((resolve, reject) => {
    let head: string | null = ''; // null once the answer's head has been read
    let cut: Buffer | null = null;
    const onBody = (read: Buffer) => {
      const at = now();
      const { numbers, cutFrom } = cut === null ? scanRead(read) : scan((read = Buffer.concat([cut, read])));
      cut = cutFrom === -1 ? null : Buffer.from(read.subarray(cutFrom)); // a copy: the read buffer is shared
      if (phase === 'paced') {
        for (const number of numbers) {
          const index = number - base;
          if (index >= 0 && index < subscriber.seen.length) subscriber.seen[index] = at;
        }
      } else if (numbers.length > 0) {
        subscriber.count += numbers.length;
        subscriber.last = numbers[numbers.length - 1];
      }
    };
    const onHead = (read: Buffer) => {
      const text = head + read.toString('latin1');
      head = text;
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) return;
      if (!text.startsWith('HTTP/1.1 200')) return reject(new Error(`subscribe answered ${text.slice(0, text.indexOf('\r\n'))}`));
      head = null;
      onBody(Buffer.from(text.slice(end + 4), 'latin1'));
      resolve(subscriber);
    };
    const socket = net.connect({
      port: Number(url.port),
      host: url.hostname,
      onread: {
        buffer: READ_BUFFER,
        callback: (length) => {
          const read = READ_BUFFER.subarray(0, length);
          if (head === null) onBody(read);
          else onHead(read);
          return true;
        },
      },
    });
    const subscriber: Subscriber = { socket, seen: new Float64Array(0), count: 0, last: 0 };
    socket.on('connect', () => socket.write(`GET ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\nx-api-key: ${apiKey}\r\naccept: text/event-stream\r\n\r\n`));
    socket.on('error', reject);
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
    const written = message.written as [number, number][];
    const latencies = new Float64Array(written.length * subscribers.length);
    let n = 0;
    let missing = 0;
    for (const [number, answeredAt] of written) {
      for (const subscriber of subscribers) {
        const at = subscriber.seen[number - base];
        if (at === undefined || Number.isNaN(at)) missing++;
        else latencies[n++] = Math.max(0, at - answeredAt);
      }
    }
    const sorted = latencies.subarray(0, n).sort();
    parentPort!.postMessage({ type: 'latencies', delivered: n, missing, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[n - 1] ?? NaN });
  } else if (message.type === 'counts') {
    parentPort!.postMessage({ type: 'counts', counts: subscribers.map((s) => s.count), last: subscribers.map((s) => s.last) });
  } else if (message.type === 'disconnect' || message.type === 'close') {
    for (const subscriber of subscribers) subscriber.socket.destroy();
    subscribers.length = 0;
    if (message.type === 'close') parentPort!.close();
    else parentPort!.postMessage({ type: 'disconnect' });
  }
});
