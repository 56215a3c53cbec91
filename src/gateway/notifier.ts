import { EventEmitter } from 'node:events';
import type { Store } from '../store/db.ts';
import { publish, type StoreListener } from '../store/notifications.ts';
import type { PodRow } from '../store/schema-runners.ts';

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

/**
 * Several replicas (PostgreSQL): NOTIFY on publish, heard through the replica's one LISTEN
 * connection (src/store/notifications.ts).
 */
export class ReplicasNotifier implements RunnerNotifier {
  private readonly handlers: RunnerWorkHandler[] = [];
  private readonly commandHandlers: RunnerCommandHandler[] = [];

  constructor(
    private readonly store: Store,
    listener: StoreListener,
  ) {
    listener.on('runner_work', (payload) => {
      const work = decodeWork(payload);
      if (!work) return;
      if ('command' in work) for (const handler of this.commandHandlers) handler(work.runnerId, work.command);
      else for (const handler of this.handlers) handler(work.runnerId, work.podKey);
    });
  }

  async publish(runnerId: number, pod?: PodRow): Promise<void> {
    await publish(this.store, this.store.db, 'runner_work', encodeWork(runnerId, pod?.key));
  }

  subscribe(handler: RunnerWorkHandler): void {
    this.handlers.push(handler);
  }

  async command(runnerId: number, command: RunnerCommand): Promise<void> {
    await publish(this.store, this.store.db, 'runner_work', `${runnerId} !${command}`);
  }

  subscribeCommands(handler: RunnerCommandHandler): void {
    this.commandHandlers.push(handler);
  }

  /** The listener is the replica's, closed with it. */
  async close(): Promise<void> {}
}
