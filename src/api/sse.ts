import type { FastifyReply, FastifyRequest } from 'fastify';

/** A client this far behind (bytes not yet taken by its socket) is cut off; it resumes with Last-Event-ID. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

/** HTTP chunks made from a buffer, kept while it is: a hub writes one buffer to many streams. */
const chunks = new WeakMap<Uint8Array, Buffer>();

/** `frames` as one HTTP chunk (size line, data, CRLF); a buffer's chunk is made once. */
function httpChunk(frames: string | Uint8Array): Buffer {
  if (typeof frames === 'string') return chunkOf(Buffer.from(frames));
  let chunk = chunks.get(frames);
  if (!chunk) chunks.set(frames, (chunk = chunkOf(frames)));
  return chunk;
}
const chunkOf = (data: Uint8Array): Buffer => Buffer.concat([Buffer.from(`${data.byteLength.toString(16)}\r\n`), data, CRLF]);
const CRLF = Buffer.from('\r\n');

export interface SseStream {
  /**
   * Writes frames (each ending in a blank line). True while the client keeps up; false once the
   * stream has closed, or while its socket holds more than it has taken (then `onDrain`).
   */
  write(frames: string | Uint8Array): boolean;
  /** Calls `listener` once, when the client has taken what it was sent (never, if the stream closes first). */
  onDrain(listener: () => void): void;
  /** Resolves when the client has taken what it was sent, or when the stream closes. */
  drained(): Promise<void>;
  end(): void;
  readonly closed: boolean;
  onClose(listener: () => void): void;
}

/**
 * Answers the request with `text/event-stream` and hands back a writer of frames. The reply is
 * taken over from Fastify (hijacked): frames are written to the socket as they come, with a
 * `: keepalive` comment every `keepaliveMs`. `openStreams` holds it while open (the app ends them
 * all when it closes: they would hold the server open).
 */
export function openSse(request: FastifyRequest, reply: FastifyReply, keepaliveMs: number, openStreams: Set<SseStream>): SseStream {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-request-id': request.id,
  });
  res.flushHeaders();
  // Frames go straight to the socket, framed here as HTTP chunks (when the answer is chunked: not
  // for an HTTP/1.0 client): a batch the hub writes to many streams is one buffer, made into a
  // chunk once, and each write goes out at once (its time counts in the hub's fan-out window).
  const socket = res.socket; // null when the client is gone already: the stream closes at once
  const chunked = res.chunkedEncoding;
  const listeners: (() => void)[] = [];
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    clearInterval(keepalive);
    openStreams.delete(stream);
    for (const listener of listeners) listener();
  };
  const stream: SseStream = {
    write(frames) {
      if (closed || !socket) return false;
      if (socket.writableLength > MAX_BUFFERED_BYTES) {
        res.destroy();
        close();
        return false;
      }
      return socket.write(chunked ? httpChunk(frames) : frames);
    },
    onDrain(listener) {
      if (!closed) socket?.once('drain', listener);
    },
    drained() {
      return new Promise<void>((resolve) => {
        if (closed || !socket || socket.writableLength === 0) return resolve();
        const done = () => {
          socket.off('drain', done);
          socket.off('close', done);
          resolve();
        };
        socket.once('drain', done);
        socket.once('close', done);
      });
    },
    end() {
      if (!closed) res.end();
      close();
    },
    get closed() {
      return closed;
    },
    onClose(listener) {
      if (closed) listener();
      else listeners.push(listener);
    },
  };
  const keepalive = setInterval(() => stream.write(': keepalive\n\n'), keepaliveMs);
  keepalive.unref();
  res.on('close', close);
  request.raw.on('close', () => {
    if (res.writableEnded || request.raw.destroyed) close();
  });
  openStreams.add(stream);
  if (!socket || socket.destroyed) close();
  // Tells EventSource clients how long to wait before reconnecting.
  stream.write('retry: 2000\n\n');
  return stream;
}
