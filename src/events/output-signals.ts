import type { Store } from '../store/db.ts';
import { publish } from '../store/notifications.ts';

/**
 * "Pod N has new output": wakes the output streams that follow pod N, on this replica at once and,
 * on PostgreSQL, on every replica through NOTIFY (EventListener delivers it). A lost wake-up costs
 * a stream at most its poll interval.
 */
export class PodOutputSignals {
  private readonly watchers = new Map<number, Set<() => void>>();

  constructor(
    private readonly store: Store,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  /** Output of the pod was stored (called by the replica that stored it). */
  appended(podId: number): void {
    this.wake(podId);
    publish(this.store, this.store.db, 'output', String(podId)).catch(this.onError);
  }

  /** Wakes this replica's watchers of the pod. */
  wake(podId: number): void {
    for (const watcher of this.watchers.get(podId) ?? []) watcher();
  }

  watch(podId: number, watcher: () => void): () => void {
    let set = this.watchers.get(podId);
    if (!set) this.watchers.set(podId, (set = new Set()));
    set.add(watcher);
    return () => {
      set.delete(watcher);
      if (set.size === 0 && this.watchers.get(podId) === set) this.watchers.delete(podId);
    };
  }
}
