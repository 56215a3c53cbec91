import type { Store } from '../store/db.ts';
import { pruneEvents } from '../store/events.ts';

/**
 * Removes events older than the retention (DROVER_EVENT_RETENTION_HOURS, default 24) in the
 * background: every tenth of the retention, at most every 10 minutes. Safe on several replicas
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

  pruneOnce(): Promise<number> {
    return this.store.transaction((trx) => pruneEvents(trx, this.now() - this.retentionMs));
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
