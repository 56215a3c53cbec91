import { recordEvent } from '../../events/writer.ts';
import type { Executor } from '../../store/db.ts';
import { queuePosition } from '../../store/pod-queue.ts';
import type { PodRow } from '../../store/schema-runners.ts';
import type { DomainContext } from '../context.ts';
import { podView } from './view.ts';

/** `pod.created` or `pod.updated` (one per status change) with the pod as stored now, in `trx`. */
export async function recordPodEvent(ctx: DomainContext, trx: Executor, type: 'pod.created' | 'pod.updated', pod: PodRow): Promise<void> {
  const position = pod.status === 'queued' ? await queuePosition(trx, pod) : null;
  await recordEvent(ctx, trx, pod.org_id, type, podView(pod, position), { pod_key: pod.key, channel_id: pod.channel_id, ticket_slug: pod.ticket_slug });
}

/** A guarded status step (see store/pods.ts transitionPodRow) and its `pod.updated`, in one transaction. */
export async function transitionWithEvent(
  ctx: DomainContext,
  step: (trx: Executor) => Promise<PodRow | undefined>,
): Promise<PodRow | undefined> {
  return ctx.store.transaction(async (trx) => {
    const moved = await step(trx);
    if (moved) await recordPodEvent(ctx, trx, 'pod.updated', moved);
    return moved;
  });
}
