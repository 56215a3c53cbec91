import pg from 'pg';
import { sql } from 'kysely';
import type { Executor, Store } from './db.ts';

/**
 * What replicas tell each other through the database (PostgreSQL NOTIFY): `events` (an
 * organization has new events), `output` (a pod has new output), `runner_work` (a runner has work
 * or an administrator's command). On SQLite there is one process and nothing travels.
 */
export type Topic = 'events' | 'output' | 'runner_work';

/**
 * The PostgreSQL channel of a topic, or null on SQLite. Channels are database-wide; a
 * schema-scoped name keeps test schemas (and tenants) apart.
 */
export function channelOf(store: Store, topic: Topic): string | null {
  if (!store.postgres) return null;
  return `drover_${topic}_${(store.postgres.schema ?? 'public').replace(/[^a-z0-9_]/gi, '_')}`.toLowerCase();
}

/**
 * Notifies every replica listening on the topic; inside a transaction, when it commits (never if
 * it rolls back). Nothing on SQLite.
 */
export async function publish(store: Store, db: Executor, topic: Topic, payload: string): Promise<void> {
  const channel = channelOf(store, topic);
  if (channel) await notify(db, channel, payload);
}

/** PostgreSQL NOTIFY on a channel (see channelOf); delivered to listeners when the surrounding transaction commits. */
export async function notify(db: Executor, channel: string, payload: string): Promise<void> {
  await sql`select pg_notify(${channel}, ${payload})`.execute(db);
}

/**
 * The one LISTEN connection of a replica (PostgreSQL), for every topic a part of the server
 * subscribes to. When it drops it is opened again after a second, and the `connected` handlers run
 * (a notification sent meanwhile is lost: each subscriber reads what it may have missed). On
 * SQLite `start` does nothing.
 */
export class StoreListener {
  private readonly handlers = new Map<string, ((payload: string) => void)[]>();
  private readonly connectedHandlers: (() => void)[] = [];
  private client: pg.Client | null = null;
  private closed = false;

  constructor(
    private readonly store: Store,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  /** Calls `handler` with each notification's payload on the topic (subscribe before `start`). */
  on(topic: Topic, handler: (payload: string) => void): void {
    const channel = channelOf(this.store, topic);
    if (!channel) return;
    const list = this.handlers.get(channel) ?? [];
    list.push(handler);
    this.handlers.set(channel, list);
  }

  /** Calls `handler` each time the connection is (re)established and listening. */
  onConnected(handler: () => void): void {
    this.connectedHandlers.push(handler);
  }

  async start(): Promise<void> {
    if (this.closed || !this.store.postgres || this.handlers.size === 0) return;
    const client = new pg.Client({ connectionString: this.store.postgres.url });
    client.on('notification', (message) => {
      for (const handler of this.handlers.get(message.channel) ?? []) handler(message.payload ?? '');
    });
    client.on('error', (error) => {
      this.onError(error);
      this.client = null;
      client.end().catch(() => {});
      if (!this.closed) setTimeout(() => void this.start().catch(this.onError), 1000).unref();
    });
    await client.connect();
    for (const channel of this.handlers.keys()) await client.query(`listen ${channel}`);
    this.client = client;
    for (const handler of this.connectedHandlers) handler();
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }
}
