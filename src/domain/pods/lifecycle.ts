import { postSystemMessage } from '../channels/service.ts';
import type { DomainContext } from '../context.ts';
import * as pods from '../../store/pods.ts';
import type { PodRow, PodStatus } from '../../store/schema-runners.ts';
import { ACTIVE_POD_STATUSES } from '../../protocol/enums.ts';
import { type PodConfig } from './model.ts';
import { transitionWithEvent } from './events.ts';
import { usageColumns } from './results.ts';
import type { PodOutcome } from '../../protocol/runner-link.ts';
import { abandonDelivery, settleDelivery } from '../deliveries/record.ts';
import { afterDelivery } from '../deliveries/merge-requests.ts';

/**
 * What runners report, applied to the stored pods. Every step is a guarded transition
 * (`UPDATE … WHERE status IN (…)`), so replays and races cannot move a pod backwards.
 */

async function tellChannel(ctx: DomainContext, pod: PodRow, text: string): Promise<void> {
  if (pod.channel_id === null) return;
  try {
    await postSystemMessage(ctx, pod.org_id, pod.channel_id, text, pod.key);
  } catch {
    // An archived or deleted channel must not stop the pod's own bookkeeping.
  }
}

/**
 * The runner reports pod `key`'s agent started: the pod is `running`, `started_at` the time the
 * report arrived (`reportedAt`, stamped by the link before the message waited its turn).
 */
export async function podStarted(ctx: DomainContext, runnerId: number, key: string, reportedAt?: number): Promise<void> {
  const pod = await pods.findPodByKey(ctx.store.db, key);
  if (!pod || pod.runner_id !== runnerId) return;
  const now = ctx.now();
  const minutes = (JSON.parse(pod.config) as PodConfig).pod_timeout_minutes;
  // The server's clock when the runner's report arrived (`reportedAt`), else now.
  const startedAt = pod.started_at ?? Math.min(reportedAt ?? now, now);
  const set = { status: 'running' as const, started_at: startedAt, deadline_at: minutes ? startedAt + minutes * 60_000 : null, updated_at: now };
  const changed = await transitionWithEvent(ctx, (trx) => pods.transitionPodRow(trx, pod.id, ['initializing'], set));
  if (!changed) return;
  await tellChannel(ctx, pod, `Pod ${pod.key} (${pod.agent_slug}) started.`);
  await ctx.podChanged?.({ ...pod, ...set });
}

export async function podFinished(ctx: DomainContext, runnerId: number, result: PodOutcome): Promise<void> {
  const now = ctx.now();
  const set = {
    status: result.outcome,
    desired_state: 'stop' as const,
    exit_code: result.exit_code,
    error_message: result.error_message,
    session_id: result.session_id,
    result: result.result ?? null,
    ...usageColumns(result.usage),
    ...(result.network_refused === undefined ? {} : { network_refused: result.network_refused }),
    finished_at: now,
    updated_at: now,
  };
  const ended = await transitionWithEvent(ctx, async (trx) => {
    const row = await pods.transitionRunnerPod(trx, result.key, runnerId, ACTIVE_POD_STATUSES, set);
    return row && settleDelivery(trx, row, result.delivery, now);
  });
  if (ended) {
    await afterEnd(ctx, ended);
    await afterDelivery(ctx, ended);
    return;
  }
  // Already ended on the server (terminated through the API, timed out): keep its status, add what
  // the runner knows (what the agent used until it was stopped counts too).
  const found = await pods.findPodByKey(ctx.store.db, result.key);
  if (!found || found.runner_id !== runnerId) return;
  // The work of a pod ended on the server (terminated, timed out) arrives with its runner's report.
  const pod = await transitionWithEvent(ctx, async (trx) => {
    const settled = await settleDelivery(trx, found, result.delivery, now);
    return settled === found ? undefined : settled;
  }).then((settled) => settled ?? found);
  if (pod !== found) await afterDelivery(ctx, pod);
  const reported = pod.result !== null || pod.usage_input_tokens !== null || pod.usage_output_tokens !== null || pod.usage_cost_usd !== null;
  const added = {
    exit_code: pod.exit_code ?? result.exit_code,
    session_id: pod.session_id ?? result.session_id,
    ...(reported ? {} : { result: result.result ?? null, ...usageColumns(result.usage) }),
    network_refused: Math.max(Number(pod.network_refused), result.network_refused ?? 0),
  };
  if (Object.entries(added).every(([column, value]) => pod[column as keyof typeof added] === value)) return;
  // One pod.updated with the pod as the API now shows it (its status unchanged).
  await transitionWithEvent(ctx, async (trx) => {
    await pods.updatePod(trx, pod.id, { ...added, updated_at: now });
    return pods.findPodByKey(trx, pod.key);
  });
}

/** A running pod's count of refused connections (the runner's `pod_network`); no event: it shows in the pod's detail. */
export async function podNetworkRefused(ctx: DomainContext, runnerId: number, key: string, refused: number): Promise<void> {
  await pods.updateNetworkRefused(ctx.store.db, key, runnerId, refused);
}

/**
 * The runner came back without a pod it should have, or never came back, or the pod waited in the
 * queue too long (`from` ['queued']): the pod failed. Whether it did (it was still in one of `from`).
 */
export async function podLost(ctx: DomainContext, pod: PodRow, reason: string, from: readonly PodStatus[] = ACTIVE_POD_STATUSES): Promise<boolean> {
  const now = ctx.now();
  const set = { status: 'failed' as const, desired_state: 'stop' as const, error_message: reason, finished_at: now, updated_at: now };
  const ended = await transitionWithEvent(ctx, async (trx) => {
    const row = await pods.transitionPodRow(trx, pod.id, from, set);
    return row && abandonDelivery(trx, row, `the work was not delivered: ${reason}`, now);
  });
  if (ended) await afterEnd(ctx, ended);
  return ended !== undefined;
}

export async function podBackFromOrphan(ctx: DomainContext, pod: PodRow): Promise<void> {
  const set = { status: pod.started_at === null ? ('initializing' as const) : ('running' as const), updated_at: ctx.now() };
  await transitionWithEvent(ctx, (trx) => pods.transitionPodRow(trx, pod.id, ['orphaned'], set));
}

/**
 * The server ends a pod (terminated through the API, timed out): a guarded step from one of `from`
 * to `terminated`, then its runner is told to stop the process and its channel and followers hear
 * of it. The pod as ended, or null when it was no longer in one of `from`.
 */
export async function terminateOnServer(ctx: DomainContext, pod: PodRow, from: readonly PodStatus[], reason: string): Promise<PodRow | null> {
  const now = ctx.now();
  const set = { status: 'terminated' as const, desired_state: 'stop' as const, error_message: reason, finished_at: now, updated_at: now };
  // The pod as it is now: one read while queued may have been given a runner since.
  const ended = await transitionWithEvent(ctx, (trx) => pods.transitionPodRow(trx, pod.id, from, set));
  if (!ended) return null;
  if (ended.runner_id !== null) await ctx.wakeRunner?.(ended.runner_id, ended);
  await afterEnd(ctx, ended);
  return ended;
}

/**
 * A pod has ended (`pod` as it is stored now, ended): its runner's slot is free, its channel hears
 * of it and followers (loops) are told.
 */
async function afterEnd(ctx: DomainContext, pod: PodRow): Promise<void> {
  // A pod that had a runner held one of its slots: the queue may move (a queued pod held none).
  if (pod.runner_id !== null) ctx.slotFreed?.(pod.org_id);
  ctx.podOutputChanged?.(pod.id);
  await tellChannel(ctx, pod, `Pod ${pod.key} ${pod.status}${pod.error_message ? `: ${pod.error_message}` : ''}.`);
  await ctx.podChanged?.(pod);
  await terminateChildren(ctx, pod);
}

/** A pod has ended, however it ended: its still-active children are terminated (theirs in turn, docs/mcp.md). */
async function terminateChildren(ctx: DomainContext, pod: PodRow): Promise<void> {
  for (const child of await pods.activeChildPods(ctx.store.db, pod.key)) {
    await terminateOnServer(ctx, child, ACTIVE_POD_STATUSES, `its parent pod ${pod.key} ended (${pod.status})`);
  }
}
