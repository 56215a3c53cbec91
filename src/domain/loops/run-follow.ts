import { conflict, notFound } from '../../errors.ts';
import * as runs from '../../store/loop-runs.ts';
import * as loops from '../../store/loops.ts';
import type { LoopRow, LoopRunRow, RunStatus } from '../../store/schema-loops.ts';
import type { PodRow } from '../../store/schema-runners.ts';
import type { DomainContext } from '../context.ts';
import type { PodConfig } from '../pods/model.ts';
import { terminatePod } from '../pods/service.ts';
import { iso } from '../iso.ts';
import { startRuns, endRun } from './run-flow.ts';
import { wouldStartNow } from './runs.ts';
import { attachPodWithEvent, followSandbox, preparedSlot, START_RETRY_MS } from './run-records.ts';

/** Runs follow their pods; the sweeper times runs out and retries starts; cancelling. */

/** POST /loops/:slug/runs/:run_id/cancel. */
export async function cancelRun(ctx: DomainContext, loop: LoopRow, runId: number): Promise<LoopRunRow> {
  const run = await runs.findRun(ctx.store.db, loop.id, runId);
  if (!run) throw notFound('run');
  const moved = await endRun(ctx, run.id, ['queued', 'pending', 'running'], 'cancelled', 'cancelled through the API');
  if (!moved) throw conflict('RUN_NOT_ACTIVE', `run ${run.id} is not active (${run.status})`);
  return (await runs.findRunById(ctx.store.db, run.id))!;
}

/** Cancels every run in `statuses` of a loop (disable: the queued ones; delete: all active ones). */
export async function cancelRuns(ctx: DomainContext, loopId: number, statuses: readonly RunStatus[], reason: string): Promise<void> {
  for (const run of await runs.activeRuns(ctx.store.db, loopId, statuses)) {
    await endRun(ctx, run.id, statuses, 'cancelled', reason);
  }
}

/** A run prepared ahead of its slot (./cron.ts preparePass), and that slot. */
interface PreparedRun {
  run: LoopRunRow;
  slot: number;
}

/** A loop's prepared runs still pending (their agents have not started) whose slot is still to come. */
async function preparedRunsToCome(ctx: DomainContext, loopId: number): Promise<PreparedRun[]> {
  const now = ctx.now();
  return (await runs.activeRuns(ctx.store.db, loopId, ['pending'])).flatMap((run) => {
    const slot = preparedSlot(run);
    return slot !== null && slot > now ? [{ run, slot }] : [];
  });
}

/**
 * Withdraws `prepared`: each run still before its slot is cancelled, its pod stopped before its
 * agent starts, and its `scheduled_at` cleared, so the slot can fire again. The slots withdrawn.
 */
async function withdraw(ctx: DomainContext, prepared: readonly PreparedRun[], reason: string): Promise<number[]> {
  const withdrawn: number[] = [];
  for (const { run, slot } of prepared) {
    if (slot <= ctx.now()) continue;
    if (!(await endRun(ctx, run.id, ['pending'], 'cancelled', `withdrawn before its slot (${iso(slot)}): ${reason}`))) continue;
    await runs.updateRun(ctx.store.db, run.id, { scheduled_at: null });
    withdrawn.push(slot);
  }
  return withdrawn;
}

/**
 * Withdraws a loop's runs prepared ahead of a slot still to come, when the loop is disabled or
 * edited before that slot, so the slot can fire again for the loop as it now is
 * (docs/decisions.md "Loops and runs"). Returns how many were withdrawn.
 */
export async function withdrawPreparedRuns(ctx: DomainContext, loopId: number, reason: string): Promise<number> {
  return (await withdraw(ctx, await preparedRunsToCome(ctx, loopId), reason)).length;
}

/**
 * A manual trigger of `loop` that a run prepared for a slot still to come would keep from starting
 * (a `skip` loop's one slot taken, a `queue` loop's run queued behind it): the prepared runs, whose
 * agents have not started, give way and are withdrawn, so the trigger is decided as it would be
 * without the lead (docs/decisions.md "Loops and runs"). The earliest slot withdrawn, to bring back
 * (store/loops.ts bringSlotBack) once the trigger is recorded, or null when nothing gave way.
 */
export async function giveWayToTrigger(ctx: DomainContext, loop: LoopRow): Promise<number | null> {
  const prepared = await preparedRunsToCome(ctx, loop.id);
  if (prepared.length === 0 || (await wouldStartNow(ctx.store.db, loop, ctx.now()))) return null;
  const withdrawn = await withdraw(ctx, prepared, 'a run of the loop was triggered by hand');
  return withdrawn.length === 0 ? null : Math.min(...withdrawn);
}

/** A pod of a run started or ended: the run follows (docs/api.md "Loops and runs"). */
export async function followPod(ctx: DomainContext, pod: PodRow): Promise<void> {
  const runId = (JSON.parse(pod.config) as PodConfig).loop_run_id;
  if (!runId) return;
  const now = ctx.now();
  if (pod.status === 'running') {
    // A pod its run does not own (the run ended meanwhile, or has another pod) has no one to stop it.
    if (!(await attachPodWithEvent(ctx, runId, pod.key, pod.runner_id, now, true))) {
      await terminatePod(ctx, pod.org_id, pod.key, `run ${runId} no longer owns this pod`).catch(() => {
        // Already ended.
      });
      return;
    }
    if (pod.runner_id !== null && (JSON.parse(pod.config) as PodConfig).persistent_key) await followSandbox(ctx, runId, pod.runner_id);
    return;
  }
  if (!['completed', 'failed', 'terminated'].includes(pod.status)) return;
  const status: RunStatus = pod.status === 'completed' ? 'completed' : pod.status === 'failed' ? 'failed' : 'cancelled';
  const message = pod.status === 'terminated' ? `its pod was terminated (${pod.error_message ?? 'no reason given'})` : pod.error_message;
  await endRun(ctx, runId, ['pending', 'running'], status, message, pod);
}

/** Sweeper work: runs past their deadline time out; pending runs without a pod try again. */
export async function sweepRuns(ctx: DomainContext): Promise<void> {
  const db = ctx.store.db;
  for (const run of await runs.runsPastDeadline(db, ctx.now())) {
    const loop = await loops.findLoopById(db, run.loop_id);
    await endRun(ctx, run.id, ['pending', 'running'], 'timeout', `the run exceeded timeout_minutes (${loop?.timeout_minutes ?? '?'})`);
  }
  const now = ctx.now();
  await startRuns(ctx, (await runs.runsWaitingForPod(db, 50, now - START_RETRY_MS, now)).map((run) => run.id));
}
