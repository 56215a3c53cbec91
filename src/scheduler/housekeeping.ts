import type { FastifyBaseLogger } from 'fastify';
import type { DomainContext } from '../domain/context.ts';
import { IDEMPOTENCY_TTL_MS, deleteIdempotencyKeysBefore } from '../store/idempotency.ts';

/** Periodic clean-up of expired rows (idempotency records older than their 24 h lifetime). */
export class Housekeeping {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly ctx: DomainContext,
    private readonly log: FastifyBaseLogger,
    private readonly intervalMs = 60 * 60 * 1000,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.runOnce(), this.intervalMs);
    this.timer.unref();
  }

  async runOnce(): Promise<void> {
    try {
      const removed = await deleteIdempotencyKeysBefore(this.ctx.store.db, this.ctx.now() - IDEMPOTENCY_TTL_MS);
      if (removed > 0) this.log.info({ removed }, 'expired idempotency keys removed');
    } catch (error) {
      this.log.warn({ err: error }, 'housekeeping failed');
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
