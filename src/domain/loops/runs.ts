import { AppError, conflict, notFound } from '../../errors.ts';
import type { Executor } from '../../store/db.ts';
import * as runs from '../../store/loop-runs.ts';
import * as loops from '../../store/loops.ts';
import { findOrgById } from '../../store/orgs.ts';
import type { LoopRow, LoopRunRow, RunStatus } from '../../store/schema-loops.ts';
import type { PodRow } from '../../store/schema-runners.ts';
import type { DomainContext } from '../context.ts';
import { recordRunEvent } from './events.ts';
import type { PodConfig } from '../pods/model.ts';
import { launchPods, type LaunchRequest } from '../pods/launch.ts';
import { actorJson, currentActor, scheduleActor } from '../../events/actor.ts';
import { storedLabels } from '../runners/labels.ts';
import { loopPresets, withLoopPreset } from '../presets/loops.ts';
import { terminatePod } from '../pods/service.ts';
import { loopLayer } from './agentfile.ts';
import { announceRunEnd } from './callbacks.ts';
import { MAX_QUEUED_RUNS, SLOT_RUN_STATUSES } from './model.ts';
import { missingVariablesError, renderTemplate } from './template.ts';

/** What to do once the transaction that decided it has committed. */
export interface AfterCommit {
  start: number[];
  terminate: { orgId: number; podKey: string; reason: string }[];
}

const minutes = (n: number) => n * 60_000;
/** A pending run without a pod is retried by the sweeper once untouched this long (no start of it is in flight then). */
const START_RETRY_MS = 2_000;

async function finishRun(
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

/**
 * Records a run as the loop's policy decides (contract §3) inside the caller's transaction.
 * The loop row is locked first (run number), so concurrent triggers of one loop decide in turn.
 */
export async function recordRun(
  trx: Executor,
  ctx: DomainContext,
  loopId: number,
  trigger: { type: 'manual' | 'cron'; variables?: Record<string, unknown>; scheduledAt?: number },
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
  const active = await runs.activeRuns(trx, loop.id);
  const inSlots = active.filter((r) => SLOT_RUN_STATUSES.includes(r.status));
  const queued = active.filter((r) => r.status === 'queued');
  let status: RunStatus = 'pending';
  let errorMessage: string | null = null;
  if (missing.length > 0) {
    status = 'failed';
    errorMessage = missingError!.message;
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
  const startedAt = status === 'pending' ? now : null;
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

/** Runs the follow-up work of a committed decision: terminate replaced pods, start runs. */
export async function carryOut(ctx: DomainContext, after: AfterCommit): Promise<void> {
  for (const t of after.terminate) {
    await terminatePod(ctx, t.orgId, t.podKey, t.reason).catch(() => {
      // Already ended: nothing to stop.
    });
  }
  await startRuns(ctx, after.start);
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

/**
 * The agentfile a run's pod gets: the loop's `agentfile_layer` (credentials, ENV, CONFIG), with the
 * rendered prompt, the mode, the repository, the branch and the autopilot limits of the loop.
 */
function layerFor(loop: LoopRow, prompt: string): Pick<LaunchRequest, 'layer' | 'lines'> {
  const autopilot = JSON.parse(loop.autopilot_config) as { max_iterations: number; iteration_timeout_sec: number };
  const own = loopLayer(loop.agentfile_layer);
  return {
    layer: {
      prompt,
      mode: loop.execution_mode,
      config: { ...own?.layer.config, max_iterations: autopilot.max_iterations, iteration_timeout_sec: autopilot.iteration_timeout_sec },
      repo: loop.repository_id === null ? null : { id: loop.repository_id },
      branch: loop.branch_name,
      credentials: own?.layer.credentials ?? [],
      env: own?.layer.env ?? {},
    },
    lines: own?.lines,
  };
}

/** How many runs get their pods in one launch (one transaction); between launches, other work gets its turn. */
const START_CHUNK = 50;

/**
 * Gives pending runs their pods. Without a free runner a run stays `pending` (within its
 * timeout) and the sweeper tries again; any other refusal fails the run.
 */
export async function startRuns(ctx: DomainContext, runIds: readonly number[]): Promise<void> {
  for (let i = 0; i < runIds.length; i += START_CHUNK) {
    // SQLite answers synchronously, so a burst of starts would otherwise run as one chain of
    // microtasks and hold back every socket (runner reports, API requests) until its end.
    if (i > 0) await new Promise((resolve) => setImmediate(resolve));
    await startChunk(ctx, runIds.slice(i, i + START_CHUNK));
  }
}

async function startChunk(ctx: DomainContext, runIds: readonly number[]): Promise<void> {
  const db = ctx.store.db;
  const waiting = (await runs.findRunsByIds(db, runIds)).filter((run) => run.status === 'pending' && run.pod_key === null);
  if (waiting.length === 0) return;
  const loopsById = new Map((await loops.findLoopsByIds(db, [...new Set(waiting.map((r) => r.loop_id))])).map((l) => [l.id, l]));
  const byOrg = new Map<number, { run: LoopRunRow; loop: LoopRow }[]>();
  for (const run of waiting) {
    const loop = loopsById.get(run.loop_id);
    // Another starter (a sweeper, here or on another replica) got it first: one pod per run.
    if (!loop || !(await runs.claimStart(db, run.id, run.updated_at, ctx.now()))) continue;
    const group = byOrg.get(loop.org_id);
    if (group) group.push({ run, loop });
    else byOrg.set(loop.org_id, [{ run, loop }]);
  }
  for (const [orgId, group] of byOrg) {
    const org = await findOrgById(db, orgId);
    if (!org) continue;
    const presets = await loopPresets(db, orgId, group.map(({ loop }) => loop));
    const pods = await launchPods(ctx, org, group.map(({ run, loop }) => withLoopPreset(launchRequest(run, loop), loop, presets)));
    for (const [i, { run, loop }] of group.entries()) await settleStart(ctx, run, loop, pods[i]);
  }
}

/**
 * A run's pod: the loop's agent, runner, rendered prompt and agentfile, with its sandbox and
 * session. A session is resumed only in the loop's persistent sandbox, where the agent keeps it
 * (under the HOME of that sandbox): a fresh workspace has no session to resume.
 */
function launchRequest(run: LoopRunRow, loop: LoopRow): LaunchRequest {
  const persistent = loop.sandbox_strategy === 'persistent';
  return {
    input: {
      agent_slug: loop.custom_agent_slug ?? loop.agent_slug ?? 'claude-code',
      runner_id: loop.runner_id ?? undefined,
      runner_labels: storedLabels(loop.runner_labels),
      preset: loop.preset ?? undefined,
    },
    ...layerFor(loop, run.resolved_prompt ?? ''),
    extras: {
      persistentKey: persistent ? `loop-${loop.id}` : null,
      keepWorkspace: false,
      resumeSessionId: persistent && loop.session_persistence ? loop.last_session_id : null,
      preferRunnerId: persistent ? loop.sandbox_runner_id : null,
      loopRunId: run.id,
      createdBy: run.triggered_by,
    },
  };
}

/**
 * Records what launching a run's pod came to: the pod (on a runner, or queued for one: the run is
 * `pending` either way), a wait for a runner when no runner of the org has the agent (the sweeper
 * tries again), or the run's failure.
 */
async function settleStart(ctx: DomainContext, run: LoopRunRow, loop: LoopRow, pod: PodRow | AppError): Promise<void> {
  const db = ctx.store.db;
  if (pod instanceof AppError) {
    if (pod.code === 'NO_AVAILABLE_RUNNER' || pod.code === 'RUNNER_UNAVAILABLE') {
      await runs.updateRun(db, run.id, { error_message: `waiting for a runner: ${pod.message}`, updated_at: ctx.now() });
    } else if (pod.code === 'QUOTA_EXCEEDED') {
      // Like a full set of runners: the run waits (within its timeout) until the org's pods end.
      await runs.updateRun(db, run.id, { error_message: `waiting for the organization's quota: ${pod.message}`, updated_at: ctx.now() });
    } else {
      await endRun(ctx, run.id, ['pending'], 'failed', pod.message);
    }
    return;
  }
  // Guarded: the run may have been cancelled or replaced while its pod was being placed (it had no
  // pod_key then, so nobody terminated one); such a pod belongs to no active run and is stopped.
  if (!(await attachPodWithEvent(ctx, run.id, pod.key, pod.runner_id, ctx.now(), false))) {
    await terminatePod(ctx, loop.org_id, pod.key, `run ${run.id} ended before its pod started`).catch(() => {
      // Already ended (a pod that finished at once has ended its run itself).
    });
    return;
  }
  if (pod.runner_id === null) await runs.updateRun(db, run.id, { error_message: `waiting for a runner: its pod ${pod.key} is queued` });
}

/**
 * A persistent loop's pod started on `runnerId`: that is where its sandbox lives from now on. When
 * the loop's sandbox was on another runner (unavailable when the pod was placed), the run says that
 * it started in a fresh workspace.
 */
async function followSandbox(ctx: DomainContext, runId: number, runnerId: number): Promise<void> {
  const db = ctx.store.db;
  const run = await runs.findRunById(db, runId);
  const loop = run && (await loops.findLoopById(db, run.loop_id));
  if (!loop || loop.sandbox_strategy !== 'persistent' || loop.sandbox_runner_id === runnerId) return;
  await loops.setSandboxRunner(db, loop.id, runnerId);
  if (loop.sandbox_runner_id !== null) {
    await runs.updateRun(db, runId, { error_message: `runner ${loop.sandbox_runner_id} of the persistent sandbox was unavailable; a fresh workspace was used` });
  }
}

/**
 * Ends an active run (if still in one of `from`), announces it, and lets the queue move. With
 * `endedBy`, the run ends because that pod ended: only if it is the run's own pod (not a
 * duplicate start that was stopped), and the run keeps the pod's session for the next run.
 */
async function endRun(
  ctx: DomainContext,
  runId: number,
  from: readonly RunStatus[],
  status: RunStatus,
  message: string | null,
  endedBy?: PodRow,
): Promise<boolean> {
  const after: AfterCommit = { start: [], terminate: [] };
  const moved = await ctx.store.transaction(async (trx) => {
    const run = await runs.findRunById(trx, runId);
    const loop = run && (await loops.findLoopById(trx, run.loop_id));
    if (!run || !loop) return false;
    if (endedBy && run.pod_key !== null && run.pod_key !== endedBy.key) return false;
    const pod = endedBy && run.pod_key === null ? { pod_key: endedBy.key, runner_id: endedBy.runner_id } : {};
    const ended = await finishRun(trx, ctx, loop, run, from, status, message, pod);
    // Only a completed run's session is resumed (contract §10): a failed, cancelled or timed-out
    // one may have left its session anywhere.
    if (ended && status === 'completed' && endedBy?.session_id) await loops.setLastSession(trx, loop.id, endedBy.session_id);
    // Ended before (cancelled while its pod was being placed): the record still names the pod.
    if (!ended && 'pod_key' in pod) await runs.updateRun(trx, run.id, pod);
    if (ended?.pod_key && status !== 'completed' && status !== 'failed') {
      after.terminate.push({ orgId: loop.org_id, podKey: ended.pod_key, reason: `run ${status}` });
    }
    if (ended) await promoteQueued(trx, ctx, loop, after);
    return ended !== null;
  });
  await carryOut(ctx, after);
  return moved;
}

/** Starts queued runs, oldest first, while the loop (as read in this transaction) has free slots. */
async function promoteQueued(trx: Executor, ctx: DomainContext, loop: LoopRow, after: AfterCommit): Promise<void> {
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

/** Starts the queued runs that fit now (e.g. after max_concurrent_runs was raised). */
export async function startQueuedRuns(ctx: DomainContext, loopId: number): Promise<void> {
  const after: AfterCommit = { start: [], terminate: [] };
  await ctx.store.transaction(async (trx) => {
    // The loop row is locked like a trigger locks it, so the slot count cannot race one.
    const loop = await loops.lockLoop(trx, ctx.store.kind, loopId);
    if (loop) await promoteQueued(trx, ctx, loop, after);
  });
  await carryOut(ctx, after);
}

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

/** Gives a run its pod (see store attachPod) and records its `run.updated`, in one transaction. */
async function attachPodWithEvent(ctx: DomainContext, runId: number, podKey: string, runnerId: number | null, now: number, running: boolean): Promise<boolean> {
  return ctx.store.transaction(async (trx) => {
    if (!(await runs.attachPod(trx, runId, podKey, runnerId, now, running))) return false;
    await recordRunEvent(ctx, trx, 'run.updated', runId);
    return true;
  });
}

/** A pod of a run started or ended: the run follows (contract §3, "Run ↔ pod"). */
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
  await startRuns(ctx, (await runs.runsWaitingForPod(db, 50, ctx.now() - START_RETRY_MS)).map((run) => run.id));
}

