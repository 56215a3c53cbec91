import net from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { openSse, type SseStream } from '../../src/api/sse.ts';

/**
 * `SseStream.drained()` on a real socket: a stream written to faster than its client reads learns
 * that its writes are not taken (write answers false), and `drained()` resolves once the client
 * has read them, or at once when the client goes away. What the pod output stream waits on.
 */
describe('SSE stream: waiting for the client', () => {
  let app: FastifyInstance | null = null;
  afterEach(async () => {
    await app?.close();
    app = null;
  });

  /** A server whose one route writes 64 KiB frames until a write is not taken, then waits for `drained()`. */
  async function serve() {
    const streams = new Set<SseStream>();
    const seen = { writes: 0, notTakenAfter: -1, drainedAt: -1 };
    app = Fastify();
    app.get('/stream', async (request, reply) => {
      const stream = openSse(request, reply, 60_000, streams);
      const frame = `data: ${'z'.repeat(64 * 1024)}\n\n`;
      while (stream.write(frame)) seen.writes++;
      seen.writes++;
      seen.notTakenAfter = seen.writes;
      await stream.drained();
      seen.drainedAt = performance.now();
      stream.end();
    });
    const url = new URL(await app.listen({ host: '127.0.0.1', port: 0 }));
    return { seen, streams, port: Number(url.port) };
  }

  it('resolves once the client has read what it was sent', async () => {
    const { seen, port } = await serve();
    const socket = net.connect(port, '127.0.0.1');
    socket.pause();
    socket.write('GET /stream HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
    await expect.poll(() => seen.notTakenAfter, { timeout: 10_000 }).toBeGreaterThan(0);
    // Bounded on purpose: checks that nothing resolves while the client does not read.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(seen.drainedAt).toBe(-1); // the client has not read yet

    const resumedAt = performance.now();
    let bytes = 0;
    let tail = '';
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      tail = (tail + chunk.toString('latin1')).slice(-5);
    });
    socket.resume();
    // The answer ends (its last, empty chunk) once the stream has been drained and ended.
    await expect.poll(() => tail, { timeout: 10_000 }).toBe('0\r\n\r\n');
    expect(seen.drainedAt).toBeGreaterThan(resumedAt);
    expect(bytes).toBeGreaterThan(seen.writes * 64 * 1024);
    socket.destroy();
  });

  it('resolves when the client goes away instead', async () => {
    const { seen, streams, port } = await serve();
    const socket = net.connect(port, '127.0.0.1');
    socket.pause();
    socket.write('GET /stream HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
    await expect.poll(() => seen.notTakenAfter, { timeout: 10_000 }).toBeGreaterThan(0);
    socket.destroy();
    await expect.poll(() => seen.drainedAt, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(streams.size).toBe(0);
  });
});
