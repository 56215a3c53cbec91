/**
 * Patches of pods whose outcome the server has not acknowledged yet (docs/agents.md "Getting the
 * work back"). A patch of up to PATCH_PART_CHARS characters travels inside `pod_exited`; a larger
 * one in `pod_patch` parts sent just before it. After a reconnect the `hello` lists the outcomes
 * without their patches (several would not fit one message) and every patch follows in parts.
 */
import { PATCH_PART_CHARS } from '../protocol/delivery.ts';
import type { PodOutcome, RunnerBody } from '../protocol/runner-link.ts';

export class UnackedPatches {
  private readonly patches = new Map<string, string>();

  /** Keeps the outcome's patch; the outcome as `pod_exited` carries it (a large patch left out). */
  keep(outcome: PodOutcome): PodOutcome {
    const patch = outcome.delivery?.patch ?? null;
    if (patch === null) return outcome;
    this.patches.set(outcome.key, patch);
    return patch.length > PATCH_PART_CHARS ? withoutPatch(outcome) : outcome;
  }

  /** The parts of pod `key`'s patch; with `onlyLarge`, none when it fits in its outcome. */
  parts(key: string, onlyLarge: boolean): RunnerBody[] {
    const patch = this.patches.get(key);
    if (patch === undefined || (onlyLarge && patch.length <= PATCH_PART_CHARS)) return [];
    const parts = Math.max(1, Math.ceil(patch.length / PATCH_PART_CHARS));
    return Array.from({ length: parts }, (_, part) => ({ type: 'pod_patch', key, part, parts, data: patch.slice(part * PATCH_PART_CHARS, (part + 1) * PATCH_PART_CHARS) }));
  }

  /** The server acknowledged the outcome. */
  forget(key: string): void {
    this.patches.delete(key);
  }
}

export function withoutPatch(outcome: PodOutcome): PodOutcome {
  return outcome.delivery ? { ...outcome, delivery: { ...outcome.delivery, patch: null } } : outcome;
}
