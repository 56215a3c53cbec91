import type { DomainContext } from '../context.ts';
import { isUniqueViolation, type Executor } from '../../store/db.ts';
import * as runs from '../../store/loop-runs.ts';
import * as loops from '../../store/loops.ts';
import { carryOut } from './run-flow.ts';
import type { AfterCommit } from './run-records.ts';
import { recordRun, wouldStartNow } from './runs.ts';
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
  /**
   * DROVER_CRON_PREPARE_AHEAD_MS: runs of slots due within this long are prepared now, their agents
   * started at the slot (`preparePass`); 0 or absent: none.
   */
  prepareAheadMs?: number;
}

/**
 * Claims batch after batch until the due loops are exhausted, so a burst is not spread over
 * ticks. Each batch's runs start as soon as it has committed, while the next batch is claimed:
 * the claims do not wait for the starts (docs/decisions.md "Loops and runs": cron pick-up), so
 * runners get the first pods of a burst while the rest is still being recorded, and the last runs
 * are recorded when the database has written them, not after every earlier start. Resolves once
 * every start has settled. A run recorded and not started (the server died meanwhile) is
 * `pending` without a pod: the sweeper starts it.
 */
export async function fireDueSlots(ctx: DomainContext, options: FireOptions): Promise<number> {
  const batch = options.batch ?? 100;
  let fired = 0;
  const starts: Promise<void>[] = [];
  let claiming: { failed: false } | { failed: true; error: unknown } = { failed: false };
  /** One claim; its starts set off as soon as it has committed. Returns whether a full batch was claimed. */
  const pass = async (claim: (committed: AfterCommit) => Promise<Claimed>): Promise<boolean> => {
    const committed: AfterCommit = { start: [], terminate: [] };
    const { claimed, recorded } = await claim(committed);
    fired += recorded;
    if (committed.start.length > 0 || committed.terminate.length > 0) {
      const start = carryOut(ctx, committed);
      // Handled at once: it may fail while later batches are still being claimed (it is reported below).
      start.catch(() => {});
      starts.push(start);
    }
    return claimed === batch;
  };
  try {
    while (await pass((committed) => firePass(ctx, options, batch, committed)));
    if (options.prepareAheadMs) {
      const cursor: { from: loops.DueCursor | null } = { from: null };
      while (await pass((committed) => preparePass(ctx, options, batch, committed, cursor)));
    }
  } catch (error) {
    claiming = { failed: true, error };
  }
  // A failed claim still lets the starts of the batches before it settle.
  const settled = await Promise.allSettled(starts);
  if (claiming.failed) throw claiming.error;
  const rejected = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (rejected) throw rejected.reason;
  return fired;
}

type Claimed = { claimed: number; recorded: number };

/**
 * One claim in one transaction (`decide` claims loops and records their runs into `after`); what
 * it decided joins `committed` once it has committed.
 */
async function claimPass(ctx: DomainContext, committed: AfterCommit, decide: (trx: Executor, after: AfterCommit) => Promise<Claimed>): Promise<Claimed> {
  const after: AfterCommit = { start: [], terminate: [] };
  let result: Claimed;
  try {
    result = await ctx.store.transaction((trx) => decide(trx, after));
  } catch (error) {
    // Another replica recorded the same slot first: nothing of this pass was committed; the next tick retries.
    if (isUniqueViolation(error)) return { claimed: 0, recorded: 0 };
    throw error;
  }
  committed.start.push(...after.start);
  committed.terminate.push(...after.terminate);
  return result;
}

/** Due loops: the latest due slot of each fires (`SlotMemo`), and `next_run_at` moves on. */
function firePass(ctx: DomainContext, options: FireOptions, batch: number, committed: AfterCommit): Promise<Claimed> {
  return claimPass(ctx, committed, async (trx, after) => {
    const now = options.now();
    const due = await loops.claimDueLoops(trx, now, batch);
    const slots = new SlotMemo(now);
    let fired = 0;
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
    return { claimed: due.length, recorded: fired };
  });
}

/**
 * Runs prepared ahead of their slot (docs/decisions.md "Loops and runs": runs of a cron slot
 * prepared ahead): loops whose next slot is at most `prepareAheadMs` away and whose policy would
 * start a run anyway (`wouldStartNow`) get their run for that slot now, `scheduled_at` the slot,
 * and its pod, whose agent the runner starts at the slot. `next_run_at` moves past the slot, so the
 * slot fires once; the others stay due and are decided at the slot as before. `cursor` carries the
 * last loop claimed from one batch to the next, so loops left due are not claimed twice in a pass.
 */
function preparePass(ctx: DomainContext, options: FireOptions, batch: number, committed: AfterCommit, cursor: { from: loops.DueCursor | null }): Promise<Claimed> {
  return claimPass(ctx, committed, async (trx, after) => {
    const now = options.now();
    const soon = await loops.claimLoopsDueSoon(trx, now, now + options.prepareAheadMs!, cursor.from, batch);
    const last = soon.at(-1);
    if (last) cursor.from = { nextRunAt: last.next_run_at!, id: last.id };
    let prepared = 0;
    for (const loop of soon) {
      // next_run_at is the slot: the scheduler only ever stores slots of the loop's schedule.
      const slot = loop.next_run_at!;
      if (!loop.cron_expression || (await runs.hasRunForSlot(trx, loop.id, slot)) || !(await wouldStartNow(trx, loop, now))) continue;
      await loops.setNextRunAt(trx, loop.id, nextRunAt(loop.cron_expression, loop.cron_timezone, slot));
      await actingAs(scheduleActor(loop), () => recordRun(trx, ctx, loop.id, { type: 'cron', scheduledAt: slot, prepared: true }, after));
      prepared++;
    }
    return { claimed: soon.length, recorded: prepared };
  });
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
