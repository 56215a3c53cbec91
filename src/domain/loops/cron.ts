import type { DomainContext } from '../context.ts';
import { isUniqueViolation } from '../../store/db.ts';
import * as runs from '../../store/loop-runs.ts';
import * as loops from '../../store/loops.ts';
import { carryOut } from './run-flow.ts';
import type { AfterCommit } from './run-records.ts';
import { recordRun } from './runs.ts';
import { actingAs, scheduleActor } from '../../events/actor.ts';
import { latestSlotAtOrBefore, nextRunAt } from './schedule.ts';

/**
 * Firing cron slots. Each pass claims due loops (`FOR UPDATE SKIP LOCKED` on PostgreSQL, so
 * replicas split them), records at most one run per loop for the latest due slot, and moves
 * `next_run_at` on, all in one transaction; the unique (loop_id, scheduled_at) is the last guard.
 * The scheduler (scheduler/cron.ts) only decides when to call it.
 */

export interface FireOptions {
  /** The clock slots are read against (the scheduler's), read once per pass. */
  now: () => number;
  /** After downtime, the latest missed slot fires only if younger than this. */
  catchupMs: number;
  /** Loops claimed per transaction (default 100). */
  batch?: number;
}

/**
 * Claims batch after batch until the due loops are exhausted, so a burst is not spread over
 * ticks; each batch's runs are started as soon as it has committed, so runners get the first
 * pods of a burst while the rest is still being recorded.
 */
export async function fireDueSlots(ctx: DomainContext, options: FireOptions): Promise<number> {
  const batch = options.batch ?? 100;
  let fired = 0;
  for (;;) {
    const committed: AfterCommit = { start: [], terminate: [] };
    const { claimed, recorded } = await firePass(ctx, options, batch, committed);
    fired += recorded;
    await carryOut(ctx, committed);
    if (claimed < batch) return fired;
  }
}

/** One claim in one transaction; what it decided joins `committed` once it has committed. */
async function firePass(ctx: DomainContext, options: FireOptions, batch: number, committed: AfterCommit): Promise<{ claimed: number; recorded: number }> {
  const after: AfterCommit = { start: [], terminate: [] };
  let fired = 0;
  let claimed = 0;
  try {
    await ctx.store.transaction(async (trx) => {
      const now = options.now();
      const due = await loops.claimDueLoops(trx, now, batch);
      claimed = due.length;
      const slots = new SlotMemo(now);
      for (const loop of due) {
        if (!loop.cron_expression || loop.next_run_at === null) {
          await loops.setNextRunAt(trx, loop.id, null);
          continue;
        }
        const { slot, next } = slots.of(loop.cron_expression, loop.cron_timezone, loop.next_run_at);
        await loops.setNextRunAt(trx, loop.id, next);
        if (slot === null || now - slot > options.catchupMs) continue;
        // Fired already: next_run_at was moved back onto a past slot (e.g. recomputed on an update
        // by a replica whose clock is behind). Left to the unique guard, the insert would roll back
        // this whole batch, every tick, and the batch always holds this loop (oldest next_run_at):
        // no loop would fire until this one's latest slot changes. The claim locks the loop row,
        // so no other replica can record this slot meanwhile.
        if (await runs.hasRunForSlot(trx, loop.id, slot)) continue;
        // The run and its events are the loop's schedule's doing (docs/api.md "Actors and activity").
        await actingAs(scheduleActor(loop), () => recordRun(trx, ctx, loop.id, { type: 'cron', scheduledAt: slot }, after));
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
