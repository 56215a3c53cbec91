/**
 * Recording what a runner did with a pod's work (docs/agents.md "Getting the work back"): the
 * delivery on the pod row, the patch beside it, in the transaction that reports the pod's end, so
 * its `pod.updated` event carries the delivery.
 */
import type { DeliveryReport } from '../../protocol/delivery.ts';
import type { Executor } from '../../store/db.ts';
import { savePodPatch } from '../../store/pod-patches.ts';
import * as pods from '../../store/pods.ts';
import type { PodRow } from '../../store/schema-runners.ts';
import { deliveryFromReport, parseDelivery, type Delivery } from './model.ts';

/**
 * Settles a pending delivery with the runner's report (null: the runner made no workspace, so
 * there was nothing to deliver). The pod as it is now; unchanged when it delivers nothing or its
 * delivery is already settled (a repeated report).
 */
export async function settleDelivery(trx: Executor, pod: PodRow, report: DeliveryReport | null | undefined, now: number): Promise<PodRow> {
  const current = parseDelivery(pod.delivery);
  if (current === null || current.status !== 'pending') return pod;
  if (report?.patch) await savePodPatch(trx, pod.id, report.patch, now);
  return setDelivery(trx, pod, deliveryFromReport(report), now);
}

/** A pending delivery that will never come (the pod was lost with its runner): failed, saying why. */
export async function abandonDelivery(trx: Executor, pod: PodRow, reason: string, now: number): Promise<PodRow> {
  const current = parseDelivery(pod.delivery);
  if (current === null || current.status !== 'pending') return pod;
  return setDelivery(trx, pod, { ...current, status: 'failed', error: reason }, now);
}

export async function setDelivery(trx: Executor, pod: PodRow, delivery: Delivery, now: number): Promise<PodRow> {
  const text = JSON.stringify(delivery);
  await pods.updatePod(trx, pod.id, { delivery: text, updated_at: now });
  return { ...pod, delivery: text, updated_at: now };
}
