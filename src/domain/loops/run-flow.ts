import { AppError } from '../../errors.ts';
import * as runs from '../../store/loop-runs.ts';
import * as loops from '../../store/loops.ts';
import { findOrgById } from '../../store/orgs.ts';
import type { LoopRow, LoopRunRow, RunStatus } from '../../store/schema-loops.ts';
import type { PodRow } from '../../store/schema-runners.ts';
import type { DomainContext } from '../context.ts';
import { launchPods, type LaunchRequest } from '../pods/launch.ts';
import { terminatePod } from '../pods/service.ts';
import { loopLayer } from './agentfile.ts';
import { storedLabels } from '../runners/labels.ts';
import { loopPresets, withLoopPreset } from '../presets/loops.ts';
import { type AfterCommit, finishRun, promoteQueued, attachPodWithEvent, preparedSlot, START_LEASE_MS } from './run-records.ts';
import { loopWorkspaceKey } from '../runners/workspace-removals.ts';

/**
 * Starting runs (their pods launched in chunks) and ending them. One file, because each leads to
 * the other: a run whose pod cannot start ends, and an ending run frees a slot for a queued one.
 */

/** Runs the follow-up work of a committed decision: terminate replaced pods, start runs. */
export async function carryOut(ctx: DomainContext, after: AfterCommit): Promise<void> {
  for (const t of after.terminate) {
    await terminatePod(ctx, t.orgId, t.podKey, t.reason).catch(() => {
      // Already ended: nothing to stop.
    });
  }
  await startRuns(ctx, after.start);
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
      allow: own?.layer.allow ?? [],
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
  // The chunk's claims in one transaction (one commit), each still a compare-and-set of its own.
  const claimed = await ctx.store.transaction(async (trx) => {
    const won: { run: LoopRunRow; loop: LoopRow }[] = [];
    for (const run of waiting) {
      const loop = loopsById.get(run.loop_id);
      // Another starter (a sweeper, here or on another replica) got it first: one pod per run.
      if (loop && (await runs.claimStart(trx, run.id, run.updated_at, ctx.now(), ctx.now() + START_LEASE_MS))) won.push({ run, loop });
    }
    return won;
  });
  const byOrg = new Map<number, { run: LoopRunRow; loop: LoopRow }[]>();
  for (const { run, loop } of claimed) {
    const group = byOrg.get(loop.org_id);
    if (group) group.push({ run, loop });
    else byOrg.set(loop.org_id, [{ run, loop }]);
  }
  for (const [orgId, group] of byOrg) {
    const org = await findOrgById(db, orgId);
    if (!org) continue;
    const presets = await loopPresets(db, orgId, group.map(({ loop }) => loop));
    const pods = await launchPods(ctx, org, group.map(({ run, loop }) => withLoopPreset(launchRequest(run, loop, ctx.now()), loop, presets)));
    // Side by side: each settles its own run (guarded), and their transactions share commits.
    await Promise.all(group.map(({ run, loop }, i) => settleStart(ctx, run, loop, pods[i])));
  }
}

/**
 * A run's pod: the loop's agent, runner, rendered prompt and agentfile, with its sandbox and
 * session. A session is resumed only in the loop's persistent sandbox, where the agent keeps it
 * (under the HOME of that sandbox): a fresh workspace has no session to resume.
 */
function launchRequest(run: LoopRunRow, loop: LoopRow, now: number): LaunchRequest {
  const persistent = loop.sandbox_strategy === 'persistent';
  const slot = preparedSlot(run);
  return {
    input: {
      agent_slug: loop.custom_agent_slug ?? loop.agent_slug ?? 'claude-code',
      runner_id: loop.runner_id ?? undefined,
      runner_labels: storedLabels(loop.runner_labels),
      preset: loop.preset ?? undefined,
    },
    ...layerFor(loop, run.resolved_prompt ?? ''),
    extras: {
      persistentKey: persistent ? loopWorkspaceKey(loop.id) : null,
      keepWorkspace: false,
      resumeSessionId: persistent && loop.session_persistence ? loop.last_session_id : null,
      preferRunnerId: persistent ? loop.sandbox_runner_id : null,
      loopRunId: run.id,
      createdBy: run.triggered_by,
      // Prepared ahead of its slot (./cron.ts preparePass): the agent starts at the slot.
      startAt: slot !== null && slot > now ? slot : null,
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
      await runs.updateRun(db, run.id, { error_message: `waiting for a runner: ${pod.message}`, updated_at: ctx.now(), start_claimed_until: null });
    } else if (pod.code === 'QUOTA_EXCEEDED') {
      // Like a full set of runners: the run waits (within its timeout) until the org's pods end.
      await runs.updateRun(db, run.id, { error_message: `waiting for the organization's quota: ${pod.message}`, updated_at: ctx.now(), start_claimed_until: null });
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
 * Ends an active run (if still in one of `from`), announces it, and lets the queue move. With
 * `endedBy`, the run ends because that pod ended: only if it is the run's own pod (not a
 * duplicate start that was stopped), and the run keeps the pod's session for the next run.
 */
export async function endRun(
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
    // Only a completed run's session is resumed (docs/agents.md): a failed, cancelled or timed-out
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
