import { conflict, notFound } from '../../errors.ts';
import type { Executor } from '../../store/db.ts';
import * as runs from '../../store/loop-runs.ts';
import * as loops from '../../store/loops.ts';
import type { LoopRow, LoopRunRow, RunStatus } from '../../store/schema-loops.ts';
import type { DomainContext } from '../context.ts';
import { recordRunEvent } from './events.ts';
import { actorJson, currentActor, scheduleActor } from '../../events/actor.ts';
import { announceRunEnd } from './callbacks.ts';
import { MAX_QUEUED_RUNS, SLOT_RUN_STATUSES } from './model.ts';
import { missingVariablesError, renderTemplate } from './template.ts';
import { carryOut } from './run-flow.ts';
import { type AfterCommit, minutes, finishRun, promoteQueued } from './run-records.ts';
import { loopBudgetSpent } from '../usage/budgets.ts';

/** Admission: recording a run as the loop's concurrency policy decides, and the runs queued behind it. */

/**
 * Records a run as the loop's policy decides (docs/api.md) inside the caller's transaction.
 * The loop row is locked first (run number), so concurrent triggers of one loop decide in turn.
 */
export async function recordRun(
  trx: Executor,
  ctx: DomainContext,
  loopId: number,
  trigger: { type: 'manual' | 'cron'; variables?: Record<string, unknown>; scheduledAt?: number; prepared?: boolean },
  after: AfterCommit,
): Promise<LoopRunRow> {
  const loop = await loops.takeRunNumber(trx, loopId);
  if (!loop) throw notFound('loop');
  if (trigger.type === 'manual' && loop.status === 'disabled') {
    throw conflict('LOOP_DISABLED', `loop "${loop.slug}" is disabled; enable it to trigger runs`);
  }
  const values = { ...(JSON.parse(loop.prompt_variables) as Record<string, unknown>), ...(trigger.variables ?? {}) };
  const { text, missing } = renderTemplate(loop.prompt_template, values);
  const missingError = missing.length > 0 ? missingVariablesError(missing) : null;
  if (missingError && trigger.type === 'manual') throw missingError;

  const now = ctx.now();
  const { inSlots, queued, budgetSpent } = await runConditions(trx, loop, missing, now);
  let status: RunStatus = 'pending';
  let errorMessage: string | null = budgetSpent;
  if (missing.length > 0) {
    status = 'failed';
    errorMessage = missingError!.message;
  } else if (errorMessage !== null) {
    status = 'skipped';
  } else if (inSlots.length >= loop.max_concurrent_runs || queued.length > 0) {
    switch (loop.concurrency_policy) {
      case 'skip':
        status = 'skipped';
        errorMessage = `skipped: ${inSlots.length} of at most ${loop.max_concurrent_runs} runs are active (policy skip)`;
        break;
      case 'queue':
        if (queued.length >= MAX_QUEUED_RUNS) {
          status = 'skipped';
          errorMessage = `skipped: the queue already holds ${MAX_QUEUED_RUNS} runs`;
        } else status = 'queued';
        break;
      case 'replace': {
        const excess = inSlots.length - loop.max_concurrent_runs + 1;
        for (const old of inSlots.slice(0, Math.max(0, excess))) {
          const ended = await finishRun(trx, ctx, loop, old, SLOT_RUN_STATUSES, 'cancelled', `replaced by run ${loop.run_counter}`);
          if (ended?.pod_key) after.terminate.push({ orgId: loop.org_id, podKey: ended.pod_key, reason: `run ${old.id} was replaced` });
        }
        break;
      }
    }
  }
  const final = status === 'failed' || status === 'skipped';
  // A run prepared ahead of its slot starts at the slot (docs/decisions.md "Loops and runs", run-records.ts preparedSlot).
  const startedAt = status === 'pending' ? (trigger.prepared && trigger.scheduledAt !== undefined ? trigger.scheduledAt : now) : null;
  const run = await runs.insertRun(trx, {
    org_id: loop.org_id,
    loop_id: loop.id,
    run_number: loop.run_counter,
    status,
    trigger_type: trigger.type,
    variables: JSON.stringify(trigger.variables ?? {}),
    resolved_prompt: missing.length > 0 ? null : text,
    pod_key: null,
    runner_id: null,
    scheduled_at: trigger.scheduledAt ?? null,
    started_at: startedAt,
    deadline_at: startedAt === null ? null : startedAt + minutes(loop.timeout_minutes),
    finished_at: final ? now : null,
    error_message: errorMessage,
    callback_status: status === 'failed' && loop.callback_url ? 'pending' : 'none',
    triggered_by: actorJson(trigger.type === 'cron' ? scheduleActor(loop) : currentActor()),
    created_at: now,
    updated_at: now,
  });
  await recordRunEvent(ctx, trx, 'run.created', run.id);
  if (status === 'failed') await announceRunEnd(trx, ctx, loop, run);
  if (status === 'pending') after.start.push(run.id);
  return run;
}

/**
 * Whether a cron run of `loop` recorded now would start at once: its template renders, its budget
 * is not spent, nothing is queued and a concurrency slot is free. Only such runs are prepared
 * ahead of their slot; every other decision of `recordRun` is taken at the slot.
 */
export async function wouldStartNow(trx: Executor, loop: LoopRow, now: number): Promise<boolean> {
  const { missing } = renderTemplate(loop.prompt_template, JSON.parse(loop.prompt_variables) as Record<string, unknown>);
  if (missing.length > 0) return false;
  const { inSlots, queued, budgetSpent } = await runConditions(trx, loop, missing, now);
  return queued.length === 0 && inSlots.length < loop.max_concurrent_runs && budgetSpent === null;
}

/**
 * What decides a run of `loop` recorded now, besides its template (`missing`: the variables it
 * lacks): its active runs that hold a concurrency slot, its queued runs, and the budget it has
 * reached (read only when the template renders: a run that lacks variables fails on those).
 */
async function runConditions(trx: Executor, loop: LoopRow, missing: readonly string[], now: number): Promise<{ inSlots: LoopRunRow[]; queued: LoopRunRow[]; budgetSpent: string | null }> {
  const active = await runs.activeRuns(trx, loop.id);
  return {
    inSlots: active.filter((r) => SLOT_RUN_STATUSES.includes(r.status)),
    queued: active.filter((r) => r.status === 'queued'),
    budgetSpent: missing.length > 0 ? null : await loopBudgetSpent(trx, loop, now),
  };
}

export async function triggerRun(
  ctx: DomainContext,
  loopId: number,
  trigger: { type: 'manual' | 'cron'; variables?: Record<string, unknown>; scheduledAt?: number },
): Promise<LoopRunRow> {
  const after: AfterCommit = { start: [], terminate: [] };
  const run = await ctx.store.transaction((trx) => recordRun(trx, ctx, loopId, trigger, after));
  await carryOut(ctx, after);
  return (await runs.findRunById(ctx.store.db, run.id))!;
}

/** Starts the queued runs that fit now (e.g. after max_concurrent_runs was raised). */
export async function startQueuedRuns(ctx: DomainContext, loopId: number): Promise<void> {
  const after: AfterCommit = { start: [], terminate: [] };
  await ctx.store.transaction(async (trx) => {
    // The loop row is locked like a trigger locks it, so the slot count cannot race one.
    const loop = await loops.lockLoop(trx, loopId);
    if (loop) await promoteQueued(trx, ctx, loop, after);
  });
  await carryOut(ctx, after);
}
