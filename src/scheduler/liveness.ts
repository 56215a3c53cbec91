import type { FastifyBaseLogger } from 'fastify';
import type { DomainContext } from '../domain/context.ts';
import { sweepRuns } from '../domain/loops/run-follow.ts';
import { podLost, terminateOnServer } from '../domain/pods/lifecycle.ts';
import { DEFAULT_QUEUE_TIMEOUT_MINUTES, sweepQueue } from '../domain/pods/queue.ts';
import { transitionWithEvent } from '../domain/pods/events.ts';
import { RUNNER_SILENCE_MS } from '../domain/runners/selection.ts';
import { silentRunnersOffline } from '../domain/runners/status.ts';
import * as pods from '../store/pods.ts';

export interface LivenessOptions {
  intervalMs: number;
  /** Runner silence before its active pods become `orphaned` (docs/api.md: 120 s). */
  orphanGraceMs: number;
  /** Runner silence before its orphaned pods are given up as `failed`. */
  orphanFailMs: number;
  /** How long a pod may wait in the queue before it fails (DROVER_POD_QUEUE_TIMEOUT_MINUTES). */
  queueTimeoutMs?: number;
}

/**
 * The sweeper every replica runs (the updates are guarded, so replicas can overlap): silent
 * runners go offline, their pods are orphaned and eventually failed, pods past their deadline
 * are terminated even if their runner's own timer never fired, queued pods past the queue timeout
 * fail and the others get any slot a missed wake-up left free, loop runs past their timeout end
 * as `timeout`, and pending runs that found no runner try again.
 */
export class LivenessSweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly ctx: DomainContext,
    private readonly options: LivenessOptions,
    private readonly log: FastifyBaseLogger,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.running ??= this.sweep()
        .catch((error) => this.log.warn({ err: error }, 'liveness sweep failed'))
        .finally(() => (this.running = null));
    }, this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  async sweep(): Promise<void> {
    const db = this.ctx.store.db;
    const now = this.ctx.now();
    // Silent runners go offline. Their connection_id stays (unlike store/runners.ts
    // expireSilentRunners, which clears it): a connection that was only stalled (a paused
    // process, a slow network) and still delivers must find its row on its next heartbeat and
    // bring the runner back online; a closed socket clears it in markDisconnected.
    await silentRunnersOffline(this.ctx, now - RUNNER_SILENCE_MS, now);
    for (const pod of await pods.podsOnSilentRunners(db, now - this.options.orphanGraceMs, ['initializing', 'running'])) {
      await transitionWithEvent(this.ctx, (trx) => pods.transitionPodRow(trx, pod.id, ['initializing', 'running'], { status: 'orphaned', updated_at: now }));
    }
    for (const pod of await pods.podsOnSilentRunners(db, now - this.options.orphanFailMs, ['orphaned'])) {
      await podLost(this.ctx, pod, 'the runner never came back');
    }
    for (const pod of await pods.podsPastDeadline(db, now - 5_000)) await terminateOnServer(this.ctx, pod, ['running'], 'timeout');
    await sweepQueue(this.ctx, this.options.queueTimeoutMs ?? DEFAULT_QUEUE_TIMEOUT_MINUTES * 60_000);
    await sweepRuns(this.ctx);
  }
}
