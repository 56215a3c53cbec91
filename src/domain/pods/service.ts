import { AppError, notFound } from '../../errors.ts';
import * as podOutput from '../../store/pod-output.ts';
import * as pods from '../../store/pods.ts';
import type { PodRow } from '../../store/schema-runners.ts';
import type { Principal } from '../auth/authenticate.ts';
import type { DomainContext } from '../context.ts';
import { terminateOnServer } from './lifecycle.ts';
import { parseAgentfileLayerWithLines } from './agentfile.ts';
import { launchPod, type PodInput } from './launch.ts';
import { podPreset, withPreset } from '../presets/apply.ts';
import { ACTIVE_POD_STATUSES } from '../../protocol/enums.ts';
import { queuePositions } from './queue.ts';
import { checkMayTerminate, spawningParent } from './spawn.ts';

export interface CreatePodInput extends Omit<PodInput, 'agent_slug' | 'preset'> {
  agent_slug?: string;
  /** Instead of agent_slug: the preset's agent, its lines under the pod's own. */
  preset?: string;
  agentfile_layer?: string;
}

/**
 * POST /pods: validates, places the pod on a runner, records it, and wakes that runner. A pod
 * token's pod spawns a child of its own (spawn.ts); an API key creates a pod of no parent.
 */
export async function createPod(ctx: DomainContext, principal: Principal, input: CreatePodInput): Promise<PodRow> {
  const { layer: own, lines } = parseAgentfileLayerWithLines(input.agentfile_layer ?? '');
  const { agentSlug, preset } = await podPreset(ctx.store.db, principal.org.id, input);
  const layer = preset ? withPreset(preset, own) : own;
  const parent = await spawningParent(ctx.store.db, principal);
  return launchPod(ctx, principal.org, { input: { ...input, agent_slug: agentSlug, preset: preset?.name }, layer, lines, extras: { parent } });
}

export async function getPod(ctx: DomainContext, orgId: number, key: string): Promise<PodRow> {
  const pod = await pods.findPod(ctx.store.db, orgId, key);
  if (!pod) throw notFound('pod');
  return pod;
}

/** GET /pods/:key: the pod, and its place in the queue while it is queued (else null). */
export async function getPodWithPosition(ctx: DomainContext, orgId: number, key: string): Promise<{ pod: PodRow; queuePosition: number | null }> {
  const pod = await getPod(ctx, orgId, key);
  return { pod, queuePosition: (await queuePositions(ctx.store.db, [pod])).get(pod.id) ?? null };
}

/** GET /pods: a page, its total, and the queue positions of its queued pods (by pod id). */
export async function listPods(ctx: DomainContext, orgId: number, filter: pods.PodFilter, page: { limit: number; offset: number }) {
  const [rows, total] = await Promise.all([
    pods.listPods(ctx.store.db, orgId, filter, page),
    pods.countPods(ctx.store.db, orgId, filter),
  ]);
  return { rows, total, positions: await queuePositions(ctx.store.db, rows) };
}

/** POST /pods/:key/terminate: a pod token terminates only the pods its pod spawned. */
export async function terminatePodAs(ctx: DomainContext, principal: Principal, key: string): Promise<PodRow> {
  checkMayTerminate(principal, await getPod(ctx, principal.org.id, key));
  return terminatePod(ctx, principal.org.id, key);
}

/** Ends an active pod now (status `terminated`) and tells its runner to stop the process. */
export async function terminatePod(ctx: DomainContext, orgId: number, key: string, reason = 'terminated through the API'): Promise<PodRow> {
  const pod = await getPod(ctx, orgId, key);
  if (!(await terminateOnServer(ctx, pod, ACTIVE_POD_STATUSES, reason))) throw new AppError('POD_NOT_ACTIVE', `pod ${key} has already ended (${pod.status})`);
  return (await pods.findPod(ctx.store.db, orgId, key))!;
}

export async function readOutput(ctx: DomainContext, orgId: number, key: string, tailBytes: number | undefined) {
  const pod = await getPod(ctx, orgId, key);
  const { data, totalBytes } = await podOutput.readPodOutput(ctx.store.db, pod.id);
  const output = tailBytes === undefined ? data : podOutput.keepTail(data, tailBytes);
  return { output, truncated: Buffer.byteLength(output) < totalBytes, total_bytes: totalBytes };
}
