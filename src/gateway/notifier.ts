import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Store } from '../store/db.ts';
import { notify } from '../store/notify.ts';

/**
 * "Runner N has work": tells whichever replica holds runner N's socket to reconcile it now.
 * A lost notification only delays the work until the runner's next heartbeat (10 s).
 */
export interface RunnerNotifier {
  publish(runnerId: number): Promise<void>;
  subscribe(handler: (runnerId: number) => void): void;
  close(): Promise<void>;
}

/** One process (SQLite): an event emitter. */
export class InProcessNotifier implements RunnerNotifier {
  private readonly events = new EventEmitter();
  async publish(runnerId: number): Promise<void> {
    this.events.emit('work', runnerId);
  }
  subscribe(handler: (runnerId: number) => void): void {
    this.events.on('work', handler);
  }
  async close(): Promise<void> {
    this.events.removeAllListeners();
  }
}

/** PostgreSQL: NOTIFY on publish, one LISTEN connection per replica, re-established if it drops. */
export class PostgresNotifier implements RunnerNotifier {
  private readonly handlers: ((runnerId: number) => void)[] = [];
  private client: pg.Client | null = null;
  private closed = false;
  private readonly channel: string;

  constructor(
    private readonly store: Store,
    private readonly onError: (error: unknown) => void = () => {},
  ) {
    // Channels are database-wide; a schema-scoped name keeps test schemas (and tenants) apart.
    this.channel = `drover_runner_work_${(store.postgres?.schema ?? 'public').replace(/[^a-z0-9_]/gi, '_')}`.toLowerCase();
  }

  async start(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.store.postgres!.url });
    client.on('notification', (message) => {
      const runnerId = Number(message.payload);
      if (Number.isInteger(runnerId)) for (const handler of this.handlers) handler(runnerId);
    });
    client.on('error', (error) => {
      this.onError(error);
      this.client = null;
      client.end().catch(() => {});
      if (!this.closed) setTimeout(() => void this.start().catch(this.onError), 1000).unref();
    });
    await client.connect();
    await client.query(`listen ${this.channel}`);
    this.client = client;
  }

  async publish(runnerId: number): Promise<void> {
    await notify(this.store.db, this.channel, String(runnerId));
  }

  subscribe(handler: (runnerId: number) => void): void {
    this.handlers.push(handler);
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }
}

export async function createNotifier(store: Store, onError?: (error: unknown) => void): Promise<RunnerNotifier> {
  if (store.kind === 'sqlite') return new InProcessNotifier();
  const notifier = new PostgresNotifier(store, onError);
  await notifier.start();
  return notifier;
}
