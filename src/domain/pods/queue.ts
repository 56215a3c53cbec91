/**
 * Pods that wait for a runner (docs/decisions.md "Runners and pods"). A pod no runner can take when
 * it is created is stored `queued`, without a runner; it gets one, first in first out per
 * organization, when a slot frees: a pod on a runner of the org ends, a runner connects (or stops
 * draining), and, as a backstop for any of those missed, on every sweep. Every placement of an
 * organization (new pods and queued ones alike) happens in a transaction that holds the org's runner
 * rows (PostgreSQL `FOR UPDATE`; SQLite runs one writer at a time), reads the runners' loads once and
 * places the queue first: so a new pod never takes a slot an older queued pod could use, and of
 * several replicas promoting at once each queued pod is placed by exactly one (its step out of
 * `queued` is guarded, and the queued rows are read `FOR UPDATE SKIP LOCKED`).
 */
import type { FastifyBaseLogger } from 'fastify';
import { countActivePods } from '../../store/org-quotas.ts';
import * as queue from '../../store/pod-queue.ts';
import * as pods from '../../store/pods.ts';
import * as runners from '../../store/runners.ts';
import type { Executor } from '../../store/db.ts';
import type { RunnerWithCount } from '../../store/runners.ts';
import type { PodRow } from '../../store/schema-runners.ts';
import type { DomainContext } from '../context.ts';
import { orgQuotas } from '../quotas/service.ts';
import { capacityProblem, isAvailable, pickRunnerPreferring } from '../runners/selection.ts';
import { recordPodEvent } from './events.ts';
import { labelled, storedLabels } from '../runners/labels.ts';
import { podLost } from './lifecycle.ts';
import type { PodConfig } from './model.ts';

/** DROVER_POD_QUEUE_TIMEOUT_MINUTES's default. */
export const DEFAULT_QUEUE_TIMEOUT_MINUTES = 60;
/** Queued pods read per round trip of one placement pass. */
const PAGE = 100;

const hasRoom = (candidates: RunnerWithCount[], now: number) => candidates.some((r) => capacityProblem(r, now) === null);

/** The runner a queued pod can have now: the one it asked for, else its preferred one, else any; null: none. */
function runnerFor(candidates: RunnerWithCount[], pod: PodRow, now: number): RunnerWithCount | null {
  const config = JSON.parse(pod.config) as PodConfig;
  const eligible = labelled(candidates, storedLabels(pod.runner_labels));
  if (config.requested_runner_id != null) {
    const asked = eligible.find((r) => r.id === config.requested_runner_id);
    return asked && isAvailable(asked, pod.agent_slug, now) === null ? asked : null;
  }
  return pickRunnerPreferring(eligible, pod.agent_slug, config.prefer_runner_id, now);
}

/**
 * Gives the organization's queued pods their runners, oldest first, while a runner (as loaded in
 * `candidates`, whose pod counts are kept up to date here) has room, and at most `room` of them
 * (what the organization's active-pods quota leaves). A pod that no runner can take now (no free
 * slot has its agent, or the runner it asked for is full) keeps its place, and the next one is
 * tried. Runs in the caller's placement transaction; returns the pods placed.
 */
export async function placeQueued(
  trx: Executor,
  ctx: DomainContext,
  orgId: number,
  candidates: RunnerWithCount[],
  now: number,
  room = Infinity,
): Promise<PodRow[]> {
  const placed: PodRow[] = [];
  let after: PodRow | null = null;
  while (placed.length < room && hasRoom(candidates, now)) {
    const page: PodRow[] = await queue.queuedPodsOf(trx, orgId, after, PAGE);
    for (const pod of page) {
      const runner = runnerFor(candidates, pod, now);
      if (!runner) continue;
      const moved = await pods.transitionPodRow(trx, pod.id, ['queued'], { status: 'initializing', runner_id: runner.id, updated_at: now });
      if (!moved) continue;
      await recordPodEvent(ctx, trx, 'pod.updated', moved);
      runner.pod_count++;
      placed.push(moved);
      if (placed.length >= room || !hasRoom(candidates, now)) break;
    }
    if (page.length < PAGE) break;
    after = page[page.length - 1];
  }
  return placed;
}

/** Tells the runners of pods that left the queue to start them. */
export async function wakePlaced(ctx: DomainContext, placed: readonly PodRow[]): Promise<void> {
  for (const pod of placed) if (pod.runner_id !== null) await ctx.wakeRunner?.(pod.runner_id, pod);
}

/** One placement pass over the organization's queue; the pods that got a runner. */
export async function promoteQueuedPods(ctx: DomainContext, orgId: number): Promise<PodRow[]> {
  const placed = await ctx.store.transaction(async (trx) => {
    if (!(await queue.hasQueuedPods(trx, orgId))) return [];
    await runners.lockRunners(trx, orgId);
    const candidates = await runners.listRunners(trx, orgId);
    const now = ctx.now();
    const limit = (await orgQuotas(ctx, trx, orgId)).max_active_pods;
    const room = limit === 0 ? Infinity : limit - (await countActivePods(trx, orgId));
    return room > 0 && hasRoom(candidates, now) ? placeQueued(trx, ctx, orgId, candidates, now, room) : [];
  });
  await wakePlaced(ctx, placed);
  return placed;
}

/**
 * The queue positions of the queued pods among `rows` (a page of a pod list, or one pod), by pod
 * id. A list page is a contiguous stretch of the queue (lists are ordered newest first, the queue
 * oldest first, by the same columns), so one count gives the position of the oldest and the others
 * follow it.
 */
export async function queuePositions(db: Executor, rows: readonly PodRow[]): Promise<Map<number, number>> {
  const queued = rows.filter((pod) => pod.status === 'queued').sort((a, b) => a.created_at - b.created_at || a.id - b.id);
  const positions = new Map<number, number>();
  if (queued.length === 0) return positions;
  const first = await queue.queuePosition(db, queued[0]);
  queued.forEach((pod, i) => positions.set(pod.id, first + i));
  return positions;
}

/** The error_message of a pod that waited too long. */
export function queueTimeoutMessage(timeoutMs: number): string {
  const minutes = Math.round((timeoutMs / 60_000) * 100) / 100;
  return `no runner slot freed up within the queue timeout (DROVER_POD_QUEUE_TIMEOUT_MINUTES = ${minutes}): the pod waited in the queue for ${minutes} minutes and never started`;
}

/** Queued pods older than `timeoutMs` fail, saying so (their loop runs follow). */
export async function expireQueuedPods(ctx: DomainContext, timeoutMs: number): Promise<number> {
  let expired = 0;
  for (;;) {
    const due = await queue.queuedPodsCreatedBefore(ctx.store.db, ctx.now() - timeoutMs, PAGE);
    for (const pod of due) if (await podLost(ctx, pod, queueTimeoutMessage(timeoutMs), ['queued'])) expired++;
    if (due.length < PAGE) return expired;
  }
}

/** The sweeper's part: time out what waited too long, then try every organization's queue. */
export async function sweepQueue(ctx: DomainContext, timeoutMs: number): Promise<void> {
  await expireQueuedPods(ctx, timeoutMs);
  for (const orgId of await queue.orgsWithQueuedPods(ctx.store.db)) await promoteQueuedPods(ctx, orgId);
}

/**
 * Runs placement passes when slots free up (DomainContext.slotFreed), one pass at a time per
 * organization: wake-ups that arrive while a pass runs are folded into one more pass, so a burst
 * of pods ending costs a few passes, not one per pod.
 */
export class QueuePromoter {
  private readonly passes = new Map<number, { again: boolean; done: Promise<void> }>();

  constructor(
    private readonly ctx: () => DomainContext,
    private readonly log: FastifyBaseLogger,
  ) {}

  wake = (orgId: number): void => {
    const pass = this.passes.get(orgId);
    if (pass) {
      pass.again = true;
      return;
    }
    const state = { again: false, done: Promise.resolve() };
    this.passes.set(orgId, state);
    state.done = (async () => {
      try {
        do {
          state.again = false;
          await promoteQueuedPods(this.ctx(), orgId);
        } while (state.again);
      } catch (error) {
        // The sweeper's next pass places what this one could not.
        this.log.warn({ err: error, org_id: orgId }, 'placing queued pods failed');
      } finally {
        this.passes.delete(orgId);
      }
    })();
  };

  /** Resolves when no pass is running (shutdown: the store is closed after). */
  async idle(): Promise<void> {
    while (this.passes.size > 0) await Promise.all([...this.passes.values()].map((pass) => pass.done));
  }
}
