import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { RequestMetrics } from './request-metrics.ts';
import { currentEventSubscribers } from '../metrics.ts';
import type { Store } from '../store/db.ts';
import { earliestNextRunAt } from '../store/loops.ts';
import * as counts from '../store/metrics.ts';

const POD_STATUSES = ['queued', 'initializing', 'running', 'orphaned', 'completed', 'failed', 'terminated'];
const RUNNER_STATUSES = ['online', 'draining', 'offline'];

let processRegistry: Registry | null = null;

/** Process metrics (CPU, memory, event-loop delay): one set per process, however many apps it builds. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/**
 * `GET /metrics` of one app: request counts and latencies by route and status (observed in the
 * response hook, counted by RequestMetrics), and gauges read from the database at scrape time
 * (pods, runners, cron lag, webhook outbox), so every replica reports the same shared state.
 */
export class Metrics {
  private readonly registry = new Registry();
  private readonly requests = new RequestMetrics();

  constructor(
    store: Store,
    now: () => number,
    private readonly withProcessMetrics: boolean,
  ) {
    const registers = [this.registry];
    const byStatus = (name: string, help: string, table: 'pods' | 'runners', statuses: string[]) =>
      new Gauge({
        name,
        help,
        labelNames: ['status'],
        registers,
        async collect() {
          const counted = await counts.countByStatus(store.db, table);
          for (const status of new Set([...statuses, ...counted.keys()])) this.set({ status }, counted.get(status) ?? 0);
        },
      });
    const single = (name: string, help: string, read: () => number | Promise<number>) =>
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          this.set(await read());
        },
      });
    byStatus('drover_pods', 'Pods by status (all organizations)', 'pods', POD_STATUSES);
    single('drover_pods_queued', 'Pods waiting for a runner slot (status queued)', () => counts.countQueuedPods(store.db));
    byStatus('drover_runners', 'Runners by status (all organizations)', 'runners', RUNNER_STATUSES);
    single('drover_cron_lag_seconds', 'How long the most overdue cron slot of an enabled loop has been waiting to fire (0 when none is due)', async () => {
      const earliest = await earliestNextRunAt(store.db);
      return earliest === null ? 0 : Math.max(0, now() - earliest) / 1000;
    });
    single('drover_webhook_outbox_depth', 'Webhook deliveries still to be made (pending, retries included)', () => counts.countPendingDeliveries(store.db));
    single('drover_event_subscribers', 'Live event-stream subscribers on this replica', currentEventSubscribers);
  }

  observeRequest(method: string, route: string, status: number, milliseconds: number): void {
    this.requests.observe(method, route, status, milliseconds / 1000);
  }

  /** The Prometheus text exposition of everything above (and of the process, when asked for). */
  async render(): Promise<{ contentType: string; text: string }> {
    const registry = this.withProcessMetrics ? Registry.merge([this.registry, processMetrics()]) : this.registry;
    return { contentType: registry.contentType, text: `${this.requests.text()}\n${await registry.metrics()}` };
  }
}
