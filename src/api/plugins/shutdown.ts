import type {} from '@fastify/websocket';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * The order of a clean stop (docs/decisions.md), run by `app.close()` before Fastify's own steps:
 * stop accepting connections, let the HTTP requests in flight finish (at most `graceMs`), then
 * `closeLinks` (runner links closed, their disconnects recorded). The caller closes the store
 * once `app.close()` has resolved.
 *
 * Node's `server.close()` callback would also wait for the runner links' sockets (upgraded
 * connections stay the server's), so in-flight requests are counted here instead.
 */
export class ShutdownOrder {
  private inFlight = 0;
  private idle: (() => void) | null = null;
  private readonly release = () => {
    this.inFlight--;
    if (this.inFlight === 0) this.idle?.();
  };

  /** `graceMs` and the links' own close stay within Fastify's 10 s budget for a preClose hook. */
  constructor(app: FastifyInstance, closeLinks: () => Promise<void>, graceMs = 5_000) {
    app.addHook('preClose', async () => {
      if (app.server.listening) app.server.close();
      if (this.inFlight > 0) {
        let timer: NodeJS.Timeout | undefined;
        const finished = await Promise.race([
          new Promise<boolean>((resolve) => (this.idle = () => resolve(true))),
          new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs))),
        ]);
        clearTimeout(timer);
        if (!finished) app.log.warn({ inFlight: this.inFlight }, `requests still in flight after ${graceMs} ms; closing anyway`);
      }
      await closeLinks();
    });
  }

  /** Called for every request: it counts as in flight until its response closes (not a WebSocket: that is a runner link). */
  track(request: FastifyRequest, reply: FastifyReply): void {
    if (request.ws || !reply.raw.socket) return;
    this.inFlight++;
    reply.raw.on('close', this.release);
  }
}
