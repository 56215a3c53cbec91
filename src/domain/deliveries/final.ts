/**
 * The final delivery of a deleted loop's persistent workspace (docs/agents.md "Getting the work
 * back"): the runner's report is recorded on the loop's last pod on that runner (the
 * pod whose `CONFIG deliver` it followed) with a `pod.updated` event, and a merge request is opened
 * or updated as for any pod's delivery (./merge-requests.ts).
 */
import { MAX_DELIVERY_COMMITS, type DeliveryReport } from '../../protocol/delivery.ts';
import * as pods from '../../store/pods.ts';
import * as removals from '../../store/workspace-removals.ts';
import type { DomainContext } from '../context.ts';
import { transitionWithEvent } from '../pods/events.ts';
import { afterDelivery } from './merge-requests.ts';
import { deliveryFromReport, parseDelivery, type Delivery } from './model.ts';
import { setDelivery } from './record.ts';

/** Records a pushed final delivery (others change nothing: the workspace is kept and asked for again). */
export async function recordFinalDelivery(ctx: DomainContext, runnerId: number, persistentKey: string, report: DeliveryReport | null): Promise<void> {
  if (report?.status !== 'pushed') return;
  const removal = await removals.findWorkspaceRemoval(ctx.store.db, runnerId, persistentKey);
  if (!removal?.pod_key) return;
  const podKey = removal.pod_key;
  const updated = await transitionWithEvent(ctx, async (trx) => {
    const pod = await pods.findPodByKey(trx, podKey);
    const current = pod && parseDelivery(pod.delivery);
    // A repeated report (the removal asked again after a reconnect) is recorded once.
    if (!pod || !current || current.status === 'pending' || current.head_commit === report.head_commit) return undefined;
    return setDelivery(trx, pod, joined(current, report), ctx.now());
  });
  if (updated) await afterDelivery(ctx, updated);
}

/**
 * The pod's delivery followed by the final one: one delivery from the pod's base to the final head
 * when the final one continues what the pod pushed (its diff stat the sum of both), else the final
 * one. The merge request already recorded stays (the next one found replaces it).
 */
function joined(current: Delivery, report: DeliveryReport): Delivery {
  const final = { ...deliveryFromReport(report), merge_request: current.merge_request };
  if (current.status !== 'pushed' || current.head_commit !== report.base_commit || current.branch !== report.branch) return final;
  return {
    ...final,
    base_commit: current.base_commit,
    commits: [...current.commits, ...final.commits].slice(-MAX_DELIVERY_COMMITS),
    files_changed: current.files_changed + final.files_changed,
    insertions: current.insertions + final.insertions,
    deletions: current.deletions + final.deletions,
  };
}
