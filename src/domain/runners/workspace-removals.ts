/**
 * Persistent workspaces of deleted loops (docs/agents.md "Getting the work back"): deleting a loop
 * records, in the same transaction, one removal per runner its runs ran on; the runner's link
 * sends each as `remove_workspace` (when the runner is connected, and again after each reconnect)
 * until the runner answers that it delivered the work and removed the directory.
 */
import type { DeliveryReport } from '../../protocol/delivery.ts';
import type { ServerBody } from '../../protocol/runner-link.ts';
import type { Executor } from '../../store/db.ts';
import * as pods from '../../store/pods.ts';
import * as removals from '../../store/workspace-removals.ts';
import type { DomainContext } from '../context.ts';
import { recordFinalDelivery } from '../deliveries/final.ts';
import type { PodConfig } from '../pods/model.ts';
import { podDeliver, podRepo } from '../pods/spec.ts';

/** The key of a persistent loop's workspace on its runner. */
export const loopWorkspaceKey = (loopId: number): string => `loop-${loopId}`;

/** Records the removals of a loop's workspaces (in the deleting transaction); the runners to wake. */
export async function scheduleWorkspaceRemovals(trx: Executor, loopId: number, now: number): Promise<number[]> {
  const runners = await removals.loopRunnersWithLastPod(trx, loopId);
  const key = loopWorkspaceKey(loopId);
  await removals.addWorkspaceRemovals(trx, runners.map((r) => ({ runner_id: r.runner_id, persistent_key: key, pod_key: r.pod_key })), now);
  return runners.map((r) => r.runner_id);
}

/** The `remove_workspace` messages a runner is owed, each with where undelivered work goes. */
export async function workspaceRemovalMessages(ctx: DomainContext, runnerId: number): Promise<ServerBody[]> {
  const messages: ServerBody[] = [];
  for (const removal of await removals.workspaceRemovalsOf(ctx.store.db, runnerId)) {
    const pod = removal.pod_key ? await pods.findPodByKey(ctx.store.db, removal.pod_key) : undefined;
    const repo = pod ? await podRepo(ctx, pod) : null;
    const deliver = pod ? podDeliver(JSON.parse(pod.config) as PodConfig) : { mode: 'none' as const, branch: null };
    messages.push({ type: 'remove_workspace', persistent_key: removal.persistent_key, repo, deliver });
  }
  return messages;
}

/**
 * The runner's answer: its final delivery recorded (../deliveries/final.ts); a removed workspace is
 * done with; a kept one is asked for again after its next reconnect.
 */
export async function workspaceRemoved(ctx: DomainContext, runnerId: number, persistentKey: string, removed: boolean, delivery: DeliveryReport | null): Promise<void> {
  await recordFinalDelivery(ctx, runnerId, persistentKey, delivery);
  if (removed) await removals.deleteWorkspaceRemoval(ctx.store.db, runnerId, persistentKey);
}
