import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Store } from '../store/db.ts';
import type { PodRow } from '../store/schema-runners.ts';
import { notify } from '../store/notify.ts';

/**
 * "Runner N has work": tells whichever replica holds runner N's socket to reconcile it now, or,
 * with a pod, to settle just that pod (a pod placed on it or stopped). A lost notification only
 * delays the work until the runner's next heartbeat (10 s), which reconciles everything.
 */
export interface RunnerNotifier {
  publish(runnerId: number, pod?: PodRow): Promise<void>;
  subscribe(handler: RunnerWorkHandler): void;
  /** Tells whichever replica holds the runner's link to carry out an administrator's command. */
  command(runnerId: number, command: RunnerCommand): Promise<void>;
  subscribeCommands(handler: RunnerCommandHandler): void;
  close(): Promise<void>;
}

/** The pod as it was stored when published (in one process), or its key (across replicas), or null for all. */
export type RunnerWorkHandler = (runnerId: number, pod: PodRow | string | null) => void;

/** `revoke`: the runner was deleted, close its link; `rotate`: send it a new credential. */
export type RunnerCommand = 'revoke' | 'rotate';
export type RunnerCommandHandler = (runnerId: number, command: RunnerCommand) => void;
const COMMANDS: readonly string[] = ['revoke', 'rotate'] satisfies RunnerCommand[];

/**
 * The NOTIFY payload: `<runner id>` or `<runner id> <pod key>` (pod keys hold no spaces), or
 * `<runner id> !<command>` (pod keys hold no `!`).
 */
const encodeWork = (runnerId: number, podKey?: string) => (podKey ? `${runnerId} ${podKey}` : String(runnerId));

type Decoded = { runnerId: number; podKey: string | null } | { runnerId: number; command: RunnerCommand };

function decodeWork(payload: string): Decoded | null {
  const [id, rest] = payload.split(' ');
  const runnerId = Number(id);
  if (!Number.isInteger(runnerId)) return null;
  if (rest?.startsWith('!')) return COMMANDS.includes(rest.slice(1)) ? { runnerId, command: rest.slice(1) as RunnerCommand } : null;
  return { runnerId, podKey: rest || null };
}

/** One process (SQLite): an event emitter. */
export class InProcessNotifier implements RunnerNotifier {
  private readonly events = new EventEmitter();
  async publish(runnerId: number, pod?: PodRow): Promise<void> {
    this.events.emit('work', runnerId, pod ?? null);
  }
  subscribe(handler: RunnerWorkHandler): void {
    this.events.on('work', handler);
  }
  async command(runnerId: number, command: RunnerCommand): Promise<void> {
    this.events.emit('command', runnerId, command);
  }
  subscribeCommands(handler: RunnerCommandHandler): void {
    this.events.on('command', handler);
  }
  async close(): Promise<void> {
    this.events.removeAllListeners();
  }
}

/** PostgreSQL: NOTIFY on publish, one LISTEN connection per replica, re-established if it drops. */
export class PostgresNotifier implements RunnerNotifier {
  private readonly handlers: RunnerWorkHandler[] = [];
  private readonly commandHandlers: RunnerCommandHandler[] = [];
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
      const work = decodeWork(message.payload ?? '');
      if (!work) return;
      if ('command' in work) for (const handler of this.commandHandlers) handler(work.runnerId, work.command);
      else for (const handler of this.handlers) handler(work.runnerId, work.podKey);
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

  async publish(runnerId: number, pod?: PodRow): Promise<void> {
    await notify(this.store.db, this.channel, encodeWork(runnerId, pod?.key));
  }

  subscribe(handler: RunnerWorkHandler): void {
    this.handlers.push(handler);
  }

  async command(runnerId: number, command: RunnerCommand): Promise<void> {
    await notify(this.store.db, this.channel, `${runnerId} !${command}`);
  }

  subscribeCommands(handler: RunnerCommandHandler): void {
    this.commandHandlers.push(handler);
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
