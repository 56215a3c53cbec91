import { findOrgById } from '../../store/orgs.ts';
import * as pods from '../../store/pods.ts';
import * as runners from '../../store/runners.ts';
import type { PodRow, RunnerRow } from '../../store/schema-runners.ts';
import { credentialFingerprint, HEARTBEAT_INTERVAL_MS, type PodSpec, type RunnerMessage } from '../../protocol/runner-link.ts';
import { hashSecret } from '../auth/keys.ts';
import type { DomainContext } from '../context.ts';
import { ACTIVE_POD_STATUSES } from '../../protocol/enums.ts';
import { podBackFromOrphan, podLost } from '../pods/lifecycle.ts';
import { podSpec } from '../pods/spec.ts';
import { newRunnerCredential } from './service.ts';
import { runnerConnected, runnerHeartbeat } from './status.ts';

/*
 * The runner-link rules: what a runner's messages change in runners, pods and credentials, and
 * what the server sends for each pod. src/gateway/ only carries them (sockets, framing, the order
 * of messages, dispatch). docs/design.md "The runner link" says where a new message goes.
 */

type Hello = Extract<RunnerMessage, { type: 'hello' }>;

/**
 * A runner said hello on a new connection: its record takes what it advertises (its registered
 * labels plus its own). False when the runner is no longer current (deleted): its link is revoked.
 */
export async function runnerHello(ctx: DomainContext, runner: RunnerRow, connectionId: string, hello: Hello): Promise<boolean> {
  const labels = [...new Set([...(JSON.parse(runner.labels) as string[]), ...hello.labels])];
  const current = await runnerConnected(
    ctx,
    runner.id,
    {
      version: hello.version,
      os: hello.os,
      arch: hello.arch,
      labels: JSON.stringify(labels),
      agents: JSON.stringify(hello.agents),
      sandbox: hello.sandbox,
      isolation: hello.isolation ? JSON.stringify(hello.isolation) : null,
      max_pods: hello.max_pods,
      status: hello.draining ? 'draining' : 'online',
      connection_id: connectionId,
    },
    ctx.now(),
  );
  // Its slots (maybe more of them than before) are there for the queue.
  if (current && !hello.draining) ctx.slotFreed?.(runner.org_id);
  return current;
}

/**
 * A heartbeat on the link: `revoked` when the runner was deleted meanwhile (a revoke notice that
 * was lost), else `ok` (a link replaced by a newer one is closed by the gateway).
 */
export async function runnerBeat(
  ctx: DomainContext,
  runner: RunnerRow,
  connectionId: string,
  draining: { was: boolean; now: boolean },
): Promise<'ok' | 'revoked'> {
  if (draining.was && !draining.now) ctx.slotFreed?.(runner.org_id);
  if (await runnerHeartbeat(ctx, runner.id, connectionId, draining.now ? 'draining' : 'online', ctx.now())) return 'ok';
  const row = await runners.findRunnerById(ctx.store.db, runner.id);
  return !row || row.deleted_at !== null ? 'revoked' : 'ok';
}

/** A new credential for a runner, with what is kept of it until the runner confirms storing it. */
export function rotatedCredential(): { credential: string; hash: string; fingerprint: string } {
  const credential = newRunnerCredential();
  return { credential, hash: hashSecret(credential), fingerprint: credentialFingerprint(credential) };
}

/** The runner confirmed storing its new credential: from now on only that one works. */
export const credentialStored = (ctx: DomainContext, runnerId: number, hash: string): Promise<boolean> =>
  runners.replaceCredential(ctx.store.db, runnerId, hash, ctx.now());

/** The pods that should run on the runner now. */
export const desiredPods = (ctx: DomainContext, runnerId: number): Promise<PodRow[]> => pods.desiredPodsOfRunner(ctx.store.db, runnerId);

/**
 * The pod a notification names, if it is the runner's: `run` when it should run there, `stop`
 * when it should not; null when it is not the runner's (any more).
 */
export async function notifiedPod(ctx: DomainContext, runnerId: number, podOrKey: PodRow | string): Promise<{ pod: PodRow; wanted: 'run' | 'stop' } | null> {
  const pod = typeof podOrKey === 'string' ? await pods.findPodByKey(ctx.store.db, podOrKey) : podOrKey;
  if (!pod || pod.runner_id !== runnerId) return null;
  return { pod, wanted: pod.desired_state === 'run' && ACTIVE_POD_STATUSES.includes(pod.status) ? 'run' : 'stop' };
}

/** What the link knows of a pod that should run on its runner. */
export interface PodOnLink {
  /** The runner has it (last report, or sent since). */
  known: boolean;
  /** The runner's own report is at hand (hello, heartbeat), not just a notification. */
  reported: boolean;
  draining: boolean;
  /** When start_pod last went out for it, if it did. */
  startSentAt: number | undefined;
}

/**
 * Settles a pod that should run on the runner: an orphan the runner still has is back; one it
 * lacks is started (true: send start_pod), unless it already ran there and the runner's report
 * says it lost it. A start sent less than a heartbeat ago is not repeated: a report written
 * before the runner received it does not list the pod yet.
 */
export async function settleDesiredPod(ctx: DomainContext, pod: PodRow, link: PodOnLink, now: number): Promise<boolean> {
  if (link.known) {
    if (pod.status === 'orphaned') await podBackFromOrphan(ctx, pod);
    return false;
  }
  if (pod.status === 'initializing' || (pod.status === 'orphaned' && pod.started_at === null)) {
    if (link.draining) return false;
    return link.startSentAt === undefined || now - link.startSentAt >= HEARTBEAT_INTERVAL_MS;
  }
  if (link.reported) await podLost(ctx, pod, 'the runner no longer has this pod (it restarted or lost the process)');
  return false;
}

/** The start_pod spec of a pod; `orgSlug` is the runner's organization (its pods' `DROVER_ORG`). */
export const startSpec = (ctx: DomainContext, pod: PodRow, orgSlug: string, apiUrl: string): Promise<PodSpec> => podSpec(ctx, pod, orgSlug, apiUrl);

/** The slug of a runner's organization. */
export const runnerOrgSlug = async (ctx: DomainContext, runner: RunnerRow): Promise<string> => (await findOrgById(ctx.store.db, runner.org_id))?.slug ?? '';
