/**
 * A patch too large for its pod's `pod_exited` arrives in `pod_patch` parts before it (docs/agents.md
 * "Getting the work back"), in order, over one runner link: put together here, kept with the pod
 * once whole. A link that closes mid-patch drops the parts; the runner sends them all again.
 */
import { MAX_PATCH_CHARS } from '../../protocol/delivery.ts';
import { savePodPatch } from '../../store/pod-patches.ts';
import * as pods from '../../store/pods.ts';
import type { DomainContext } from '../context.ts';

export class PatchParts {
  private readonly pending = new Map<string, { parts: string[]; chars: number }>();

  constructor(
    private readonly ctx: DomainContext,
    private readonly runnerId: number,
  ) {}

  /** One part; returns once the patch, if whole now, is kept. Parts out of order or too many start over. */
  async add(key: string, part: number, parts: number, data: string): Promise<void> {
    const current = part === 0 ? { parts: [], chars: 0 } : this.pending.get(key);
    if (!current || current.parts.length !== part || current.chars + data.length > MAX_PATCH_CHARS) {
      this.pending.delete(key);
      return;
    }
    current.parts.push(data);
    current.chars += data.length;
    if (current.parts.length < parts) {
      this.pending.set(key, current);
      return;
    }
    this.pending.delete(key);
    const pod = await pods.findPodByKey(this.ctx.store.db, key);
    // Only the runner that ran the pod speaks for its work.
    if (pod && pod.runner_id === this.runnerId) await savePodPatch(this.ctx.store.db, pod.id, current.parts.join(''), this.ctx.now());
  }
}
