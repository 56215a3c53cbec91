import type { FastifyBaseLogger } from 'fastify';
import type { WebSocket } from 'ws';
import type { DomainContext } from '../domain/context.ts';
import type { PodRow, RunnerRow } from '../store/schema-runners.ts';
import { RunnerLink } from './link.ts';
import type { RunnerCommand, RunnerNotifier } from './notifier.ts';

/**
 * The server side of runner links on this replica. Each runner's socket is held by one replica;
 * any replica can ask for a runner to be reconciled through the notifier. What a message changes
 * is decided in src/domain/runners/link.ts (docs/design.md "The runner link").
 */

export class RunnerGateway {
  private readonly links = new Map<number, RunnerLink>();
  private shuttingDown = false;

  constructor(
    private readonly ctx: DomainContext,
    private readonly notifier: RunnerNotifier,
    private readonly apiUrl: () => string,
    private readonly log: FastifyBaseLogger,
  ) {
    notifier.subscribe((runnerId, pod) => {
      const link = this.links.get(runnerId);
      if (!link) return;
      if (pod) void link.settlePod(pod);
      else void link.reconcile(null);
    });
    notifier.subscribeCommands((runnerId, command) => {
      const link = this.links.get(runnerId);
      if (!link) return;
      if (command === 'revoke') link.revoke();
      else link.rotateCredential();
    });
  }

  /** Asks whichever replica holds the runner's link to close it for good, or to give it a new credential. */
  command = async (runnerId: number, command: RunnerCommand): Promise<void> => {
    await this.notifier.command(runnerId, command);
  };

  /** Asks whichever replica holds the runner to reconcile it now (or just the pod given). */
  wake = async (runnerId: number, pod?: PodRow): Promise<void> => {
    await this.notifier.publish(runnerId, pod);
  };

  /** True once the server has begun shutting down: no new runner link is taken. */
  get closing(): boolean {
    return this.shuttingDown;
  }

  attach(socket: WebSocket, runner: RunnerRow): void {
    if (this.shuttingDown) {
      socket.close(1001, 'server shutting down');
      return;
    }
    this.links.get(runner.id)?.close(4000, 'replaced by a newer connection');
    const link = new RunnerLink(this.ctx, socket, runner, this.apiUrl, this.log.child({ runner_id: runner.id }), () => {
      if (this.links.get(runner.id) === link) this.links.delete(runner.id);
    });
    this.links.set(runner.id, link);
  }

  connectedRunnerIds(): number[] {
    return [...this.links.keys()];
  }

  /**
   * Closes every runner link and resolves once each has applied what its runner sent before the
   * close and recorded the disconnect: the caller may close the store then. Runners reconnect
   * (to another replica, or to this server when it is back).
   */
  async close(): Promise<void> {
    this.shuttingDown = true;
    await Promise.all([...this.links.values()].map((link) => link.shutdown()));
    this.links.clear();
  }
}
