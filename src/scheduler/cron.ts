import type { FastifyBaseLogger } from 'fastify';
import type { DomainContext } from '../domain/context.ts';
import { fireDueSlots } from '../domain/loops/cron.ts';
import * as loops from '../store/loops.ts';

export interface CronOptions {
  intervalMs: number;
  /** DROVER_CRON_CATCHUP_SECONDS: after downtime, the latest missed slot fires only if younger than this. */
  catchupMs: number;
  batch?: number;
  /** DROVER_CRON_PREPARE_AHEAD_MS: runs of slots due this soon are prepared ahead (domain/loops/cron.ts); 0: none. */
  prepareAheadMs?: number;
  /**
   * The clock cron slots are read against (default `ctx.now`). Only tests set another one (through
   * DROVER_TEST_CRON_CLOCK_FILE), to step several server processes through slots together; runs
   * keep the context's clock for their own times.
   */
  now?: () => number;
}

/**
 * Fires due cron slots on a timer: each tick calls the domain's `fireDueSlots` (domain/loops/cron.ts),
 * and a slot due before the next tick gets a timer of its own. Time comes from `ctx.now`, so tests
 * drive the clock.
 */
export class CronScheduler {
  private timer: NodeJS.Timeout | null = null;
  /** Fires at the next slot due within one interval, so a slot is not picked up up to an interval late. */
  private slotTimer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;

  constructor(
    private readonly ctx: DomainContext,
    private readonly options: CronOptions,
    private readonly log: FastifyBaseLogger,
  ) {}

  private now(): number {
    return (this.options.now ?? this.ctx.now)();
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.scheduledTick(), this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.slotTimer) clearTimeout(this.slotTimer);
    this.timer = null;
    this.slotTimer = null;
    await this.running?.catch(() => {});
  }

  private scheduledTick(): void {
    void this.tick()
      .then(() => this.armForNextSlot())
      .catch((error) => this.log.warn({ err: error }, 'cron tick failed'));
  }

  /** After a started scheduler's tick: a slot due before the next tick gets a timer of its own. */
  private async armForNextSlot(): Promise<void> {
    if (!this.timer) return;
    const next = await loops.earliestNextRunAt(this.ctx.store.db);
    const delay = next === null ? Infinity : next - this.now();
    if (!this.timer || delay >= this.options.intervalMs) return;
    if (this.slotTimer) clearTimeout(this.slotTimer);
    this.slotTimer = setTimeout(() => {
      this.slotTimer = null;
      this.scheduledTick();
    }, Math.max(0, delay));
    this.slotTimer.unref();
  }

  /** One pass; returns how many runs it recorded. Overlapping calls share the pass in flight. */
  tick(): Promise<number> {
    this.running ??= fireDueSlots(this.ctx, { now: () => this.now(), catchupMs: this.options.catchupMs, batch: this.options.batch, prepareAheadMs: this.options.prepareAheadMs }).finally(() => (this.running = null));
    return this.running;
  }
}
