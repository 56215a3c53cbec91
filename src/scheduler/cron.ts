import type { FastifyBaseLogger } from 'fastify';
import type { DomainContext } from '../domain/context.ts';
import { carryOut, recordRun, type AfterCommit } from '../domain/loops/runs.ts';
import { actingAs, scheduleActor } from '../events/actor.ts';
import { latestSlotAtOrBefore, nextRunAt } from '../domain/loops/schedule.ts';
import { isUniqueViolation } from '../store/db.ts';
import * as runs from '../store/loop-runs.ts';
import * as loops from '../store/loops.ts';

export interface CronOptions {
  intervalMs: number;
  /** DROVER_CRON_CATCHUP_SECONDS: after downtime, the latest missed slot fires only if younger than this. */
  catchupMs: number;
  batch?: number;
  /**
   * The clock cron slots are read against (default `ctx.now`). Only tests set another one (through
   * DROVER_TEST_CRON_CLOCK_FILE), to step several server processes through slots together; runs
   * keep the context's clock for their own times.
   */
  now?: () => number;
}

/**
 * Fires due cron slots. Each tick claims due loops (`FOR UPDATE SKIP LOCKED` on PostgreSQL,
 * so replicas split them), records at most one run per loop for the latest due slot, and moves
 * `next_run_at` on, all in one transaction; the unique (loop_id, scheduled_at) is the last guard.
 * Time comes from `ctx.now`, so tests drive the clock.
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
    this.running ??= this.fire().finally(() => (this.running = null));
    return this.running;
  }

  /**
   * Claims batch after batch until the due loops are exhausted, so a burst is not spread over
   * ticks; each batch's runs are started as soon as it has committed, so runners get the first
   * pods of a burst while the rest is still being recorded.
   */
  private async fire(): Promise<number> {
    const batch = this.options.batch ?? 100;
    let fired = 0;
    for (;;) {
      const committed: AfterCommit = { start: [], terminate: [] };
      const { claimed, recorded } = await this.firePass(batch, committed);
      fired += recorded;
      await carryOut(this.ctx, committed);
      if (claimed < batch) return fired;
    }
  }

  /** One claim in one transaction; what it decided joins `committed` once it has committed. */
  private async firePass(batch: number, committed: AfterCommit): Promise<{ claimed: number; recorded: number }> {
    const after: AfterCommit = { start: [], terminate: [] };
    let fired = 0;
    let claimed = 0;
    try {
      await this.ctx.store.transaction(async (trx) => {
        const now = this.now();
        const due = await loops.claimDueLoops(trx, this.ctx.store.kind, now, batch);
        claimed = due.length;
        const slots = new SlotMemo(now);
        for (const loop of due) {
          if (!loop.cron_expression || loop.next_run_at === null) {
            await loops.setNextRunAt(trx, loop.id, null);
            continue;
          }
          const { slot, next } = slots.of(loop.cron_expression, loop.cron_timezone, loop.next_run_at);
          await loops.setNextRunAt(trx, loop.id, next);
          if (slot === null || now - slot > this.options.catchupMs) continue;
          // Fired already: next_run_at was moved back onto a past slot (e.g. recomputed on an update
          // by a replica whose clock is behind). Left to the unique guard, the insert would roll back
          // this whole batch, every tick, and the batch always holds this loop (oldest next_run_at):
          // no loop would fire until this one's latest slot changes. The claim locks the loop row,
          // so no other replica can record this slot meanwhile.
          if (await runs.hasRunForSlot(trx, loop.id, slot)) continue;
          // The run and its events are the loop's schedule's doing (docs/api.md, "Actors and activity").
          await actingAs(scheduleActor(loop), () => recordRun(trx, this.ctx, loop.id, { type: 'cron', scheduledAt: slot }, after));
          fired++;
        }
      });
    } catch (error) {
      // Another replica recorded the same slot first: nothing of this pass was committed; the next tick retries.
      if (isUniqueViolation(error)) return { claimed: 0, recorded: 0 };
      throw error;
    }
    committed.start.push(...after.start);
    committed.terminate.push(...after.terminate);
    return { claimed, recorded: fired };
  }
}

/**
 * The slot to fire and the next one, per schedule, for one pass (one `now`): loops due together
 * mostly share their schedule and due time, and each computation searches the calendar.
 */
class SlotMemo {
  private readonly memo = new Map<string, { slot: number | null; next: number | null }>();

  constructor(private readonly now: number) {}

  of(expression: string, timezone: string, dueAt: number): { slot: number | null; next: number | null } {
    const key = `${dueAt} ${timezone} ${expression}`;
    let found = this.memo.get(key);
    if (!found) {
      found = { slot: latestSlotAtOrBefore(expression, timezone, this.now, dueAt - 1), next: nextRunAt(expression, timezone, this.now) };
      this.memo.set(key, found);
    }
    return found;
  }
}
