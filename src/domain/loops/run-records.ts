import type { Executor } from '../../store/db.ts';
import * as runs from '../../store/loop-runs.ts';
import * as loops from '../../store/loops.ts';
import type { LoopRow, LoopRunRow, RunStatus } from '../../store/schema-loops.ts';
import type { DomainContext } from '../context.ts';
import { recordRunEvent } from './events.ts';
import { announceRunEnd } from './callbacks.ts';
import { SLOT_RUN_STATUSES } from './model.ts';

/** The steps on one run that the admission, start and end of runs share, each inside the caller's transaction. */

/** What to do once the transaction that decided it has committed. */
export interface AfterCommit {
  start: number[];
  terminate: { orgId: number; podKey: string; reason: string }[];
}

export const minutes = (n: number) => n * 60_000;

/**
 * The slot of a run prepared ahead of it (./cron.ts preparePass), or null: such a run was recorded
 * before its slot and starts at it (`started_at` the slot). Read from the run itself, not from a
 * clock: a replica whose clock is behind, or a test's cron clock, must not take a run recorded at
 * its slot for one.
 */
export const preparedSlot = (run: LoopRunRow): number | null =>
  run.scheduled_at !== null && run.started_at === run.scheduled_at && run.created_at < run.scheduled_at ? run.scheduled_at : null;
/** A pending run without a pod is retried by the sweeper once untouched this long (no start of it is in flight then). */
export const START_RETRY_MS = 2_000;
/**
 * How long one starter holds a pending run while it launches the run's pod: far longer than any
 * launch (a burst of 50 pods under load takes seconds), so no sweeper starts a second pod meanwhile;
 * a starter that died mid-launch loses the run after it.
 */
export const START_LEASE_MS = 60_000;

export async function finishRun(
  trx: Executor,
  ctx: DomainContext,
  loop: LoopRow,
  run: LoopRunRow,
  from: readonly RunStatus[],
  status: RunStatus,
  errorMessage: string | null,
  /** The pod that ended the run, when the run had not recorded it yet. */
  pod: { pod_key?: string; runner_id?: number | null } = {},
): Promise<LoopRunRow | null> {
  const now = ctx.now();
  // The run as moved, not `run`: that may predate startRun storing the pod_key, and a pod missed
  // here would run on unowned.
  const ended = await runs.transitionRun(trx, run.id, from, {
    ...pod,
    status,
    error_message: errorMessage,
    finished_at: now,
    updated_at: now,
    callback_status: loop.callback_url ? 'pending' : 'none',
  });
  if (!ended) return null;
  await recordRunEvent(ctx, trx, 'run.updated', ended.id);
  await announceRunEnd(trx, ctx, loop, ended);
  return ended;
}

/** Starts queued runs, oldest first, while the loop (as read in this transaction) has free slots. */
export async function promoteQueued(trx: Executor, ctx: DomainContext, loop: LoopRow, after: AfterCommit): Promise<void> {
  // A disabled loop starts nothing: disable cancels its queue, and delete (which disables first)
  // cancels the queued runs after the running ones; promoting them would launch pods only to kill them.
  if (loop.status === 'disabled') return;
  const active = await runs.activeRuns(trx, loop.id);
  let free = loop.max_concurrent_runs - active.filter((r) => SLOT_RUN_STATUSES.includes(r.status)).length;
  const now = ctx.now();
  for (const run of active.filter((r) => r.status === 'queued')) {
    if (free <= 0) break;
    if (await runs.transitionRun(trx, run.id, ['queued'], { status: 'pending', started_at: now, deadline_at: now + minutes(loop.timeout_minutes), updated_at: now })) {
      await recordRunEvent(ctx, trx, 'run.updated', run.id);
      after.start.push(run.id);
      free--;
    }
  }
}

/** Gives a run its pod (see store attachPod) and records its `run.updated`, in one transaction. */
export async function attachPodWithEvent(ctx: DomainContext, runId: number, podKey: string, runnerId: number | null, now: number, running: boolean): Promise<boolean> {
  return ctx.store.transaction(async (trx) => {
    if (!(await runs.attachPod(trx, runId, podKey, runnerId, now, running))) return false;
    await recordRunEvent(ctx, trx, 'run.updated', runId);
    return true;
  });
}

/**
 * A persistent loop's pod started on `runnerId`: that is where its sandbox lives from now on. When
 * the loop's sandbox was on another runner (unavailable when the pod was placed), the run says that
 * it started in a fresh workspace.
 */
export async function followSandbox(ctx: DomainContext, runId: number, runnerId: number): Promise<void> {
  const db = ctx.store.db;
  const run = await runs.findRunById(db, runId);
  const loop = run && (await loops.findLoopById(db, run.loop_id));
  if (!loop || loop.sandbox_strategy !== 'persistent' || loop.sandbox_runner_id === runnerId) return;
  await loops.setSandboxRunner(db, loop.id, runnerId);
  if (loop.sandbox_runner_id !== null) {
    await runs.updateRun(db, runId, { error_message: `runner ${loop.sandbox_runner_id} of the persistent sandbox was unavailable; a fresh workspace was used` });
  }
}
