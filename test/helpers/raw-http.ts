/**
 * HTTP over a bare TCP socket, for requests no HTTP client would send (unknown methods, broken
 * header lines, oversized headers, bodies that never finish) and for watching the socket close.
 */
import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  json: unknown;
}

export interface RawExchange {
  /** The first response on the socket (rejects if none arrives before the socket closes). */
  response: Promise<RawResponse>;
  /** Resolves with the time (ms since the request started) when the server closed the socket. */
  closed: Promise<number>;
  socket: net.Socket;
  write(data: string | Buffer): void;
  destroy(): void;
}

function parse(raw: Buffer): RawResponse | null {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const [statusLine, ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? NaN);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let rest = raw.subarray(end + 4);
  let body: Buffer;
  if (headers['transfer-encoding'] === 'chunked') {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = rest.indexOf('\r\n');
      if (lineEnd < 0) return null;
      const size = parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16);
      if (size === 0) break;
      if (rest.length < lineEnd + 2 + size + 2) return null;
      parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      rest = rest.subarray(lineEnd + 2 + size + 2);
    }
    body = Buffer.concat(parts);
  } else {
    const length = Number(headers['content-length'] ?? 0);
    if (rest.length < length) return null;
    body = rest.subarray(0, length);
  }
  const text = body.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status, headers, body: text, json };
}

/** Opens a socket to `port`, writes `data` (if any) and collects the first response. */
export function rawExchange(port: number, data?: string | Buffer): RawExchange {
  const started = Date.now();
  const socket = net.connect(port, '127.0.0.1');
  let received = Buffer.alloc(0);
  let settle: ((response: RawResponse) => void) | null = null;
  let fail: ((error: Error) => void) | null = null;
  const response = new Promise<RawResponse>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  response.catch(() => {}); // observed by the test, if it cares
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - started)));
  socket.on('data', (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    const parsed = parse(received);
    if (parsed) settle?.(parsed);
  });
  socket.on('error', () => {}); // a reset after the answer is expected
  socket.on('close', () => fail?.(new Error(`socket closed without a complete response: ${JSON.stringify(received.toString('latin1').slice(0, 300))}`)));
  if (data !== undefined) socket.write(data);
  return {
    response,
    closed,
    socket,
    write: (more) => {
      if (!socket.destroyed) socket.write(more);
    },
    destroy: () => socket.destroy(),
  };
}
