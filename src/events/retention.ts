import type { Store } from '../store/db.ts';
import { pruneEventBatch } from '../store/events.ts';

/** Events removed per transaction: short transactions, so writers (one at a time on SQLite) wait little. */
export const PRUNE_BATCH = 2000;

/**
 * Removes events older than the retention (DROVER_EVENT_RETENTION_HOURS, default 720: 30 days) in the
 * background, in batches of PRUNE_BATCH: every tenth of the retention, at most every 10 minutes. Safe on several replicas
 * at once (each prune is one transaction deleting by age).
 */
export class EventRetention {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly store: Store,
    private readonly retentionMs: number,
    private readonly now: () => number,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    if (this.timer) return;
    const interval = Math.max(200, Math.min(10 * 60_000, Math.floor(this.retentionMs / 10)));
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.pruneOnce()
        .then(() => undefined)
        .catch(this.onError)
        .finally(() => (this.running = null));
    }, interval);
    this.timer.unref();
  }

  /** One sweep: batches until none is left older than the retention; returns how many were removed. */
  async pruneOnce(): Promise<number> {
    const cutoff = this.now() - this.retentionMs;
    let total = 0;
    for (;;) {
      const removed = await this.store.transaction((trx) => pruneEventBatch(trx, cutoff, PRUNE_BATCH));
      total += removed;
      if (removed < PRUNE_BATCH) return total;
      // Lets requests waiting for the database in between batches.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
