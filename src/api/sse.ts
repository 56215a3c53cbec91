import type { FastifyReply, FastifyRequest } from 'fastify';

/** A client this far behind (bytes not yet taken by its socket) is cut off; it resumes with Last-Event-ID. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

export interface SseStream {
  /** Writes one frame (ending in a blank line); false once the stream has closed. */
  write(frame: string): boolean;
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
    write(frame) {
      if (closed) return false;
      if (res.writableLength > MAX_BUFFERED_BYTES) {
        res.destroy();
        close();
        return false;
      }
      res.write(frame);
      return true;
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
  // Tells EventSource clients how long to wait before reconnecting.
  stream.write('retry: 2000\n\n');
  return stream;
}
