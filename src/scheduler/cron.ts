import type { FastifyBaseLogger } from 'fastify';
import type { DomainContext } from '../domain/context.ts';
import { carryOut, recordRun, type AfterCommit } from '../domain/loops/runs.ts';
import { latestSlotAtOrBefore, nextRunAt } from '../domain/loops/schedule.ts';
import { isUniqueViolation } from '../store/db.ts';
import * as runs from '../store/loop-runs.ts';
import * as loops from '../store/loops.ts';

export interface CronOptions {
  intervalMs: number;
  /** DROVER_CRON_CATCHUP_SECONDS: after downtime, the latest missed slot fires only if younger than this. */
  catchupMs: number;
  batch?: number;
}

/**
 * Fires due cron slots. Each tick claims due loops (`FOR UPDATE SKIP LOCKED` on PostgreSQL,
 * so replicas split them), records at most one run per loop for the latest due slot, and moves
 * `next_run_at` on, all in one transaction; the unique (loop_id, scheduled_at) is the last guard.
 * Time comes from `ctx.now`, so tests drive the clock.
 */
export class CronScheduler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;

  constructor(
    private readonly ctx: DomainContext,
    private readonly options: CronOptions,
    private readonly log: FastifyBaseLogger,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick().catch((error) => this.log.warn({ err: error }, 'cron tick failed')), this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => {});
  }

  /** One pass; returns how many runs it recorded. Overlapping calls share the pass in flight. */
  tick(): Promise<number> {
    this.running ??= this.fire().finally(() => (this.running = null));
    return this.running;
  }

  /** Claims batch after batch until the due loops are exhausted, so a burst is not spread over ticks. */
  private async fire(): Promise<number> {
    const batch = this.options.batch ?? 100;
    let fired = 0;
    for (;;) {
      const { claimed, recorded } = await this.firePass(batch);
      fired += recorded;
      if (claimed < batch) return fired;
    }
  }

  private async firePass(batch: number): Promise<{ claimed: number; recorded: number }> {
    const after: AfterCommit = { start: [], terminate: [] };
    let fired = 0;
    let claimed = 0;
    try {
      await this.ctx.store.db.transaction().execute(async (trx) => {
        const now = this.ctx.now();
        const due = await loops.claimDueLoops(trx, this.ctx.store.kind, now, batch);
        claimed = due.length;
        for (const loop of due) {
          if (!loop.cron_expression || loop.next_run_at === null) {
            await loops.updateLoop(trx, loop.id, { next_run_at: null });
            continue;
          }
          const slot = latestSlotAtOrBefore(loop.cron_expression, loop.cron_timezone, now, loop.next_run_at - 1);
          await loops.updateLoop(trx, loop.id, { next_run_at: nextRunAt(loop.cron_expression, loop.cron_timezone, now) });
          if (slot === null || now - slot > this.options.catchupMs) continue;
          // Fired already: next_run_at was moved back onto a past slot (e.g. recomputed on an update
          // by a replica whose clock is behind). Left to the unique guard, the insert would roll back
          // this whole batch, every tick, and the batch always holds this loop (oldest next_run_at):
          // no loop would fire until this one's latest slot changes. The claim locks the loop row,
          // so no other replica can record this slot meanwhile.
          if (await runs.hasRunForSlot(trx, loop.id, slot)) continue;
          await recordRun(trx, this.ctx, loop.id, { type: 'cron', scheduledAt: slot }, after);
          fired++;
        }
      });
    } catch (error) {
      // Another replica recorded the same slot first: nothing of this pass was committed; the next tick retries.
      if (isUniqueViolation(error)) return { claimed: 0, recorded: 0 };
      throw error;
    }
    await carryOut(this.ctx, after);
    return { claimed, recorded: fired };
  }
}
