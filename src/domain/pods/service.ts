import { AppError, invalid, notFound } from '../../errors.ts';
import * as channels from '../../store/channels.ts';
import * as customAgents from '../../store/custom-agents.ts';
import type { Executor } from '../../store/db.ts';
import * as podOutput from '../../store/pod-output.ts';
import * as pods from '../../store/pods.ts';
import * as repositories from '../../store/repositories.ts';
import * as runners from '../../store/runners.ts';
import type { PodRow } from '../../store/schema-runners.ts';
import type { OrgRow } from '../../store/schema.ts';
import { findTicketBySlug } from '../../store/tickets.ts';
import { hashSecret } from '../auth/keys.ts';
import type { DomainContext } from '../context.ts';
import { canonicalSlug } from '../tickets/model.ts';
import { afterEnd } from './lifecycle.ts';
import { agentfileError, parseAgentfileLayerWithLines, type AgentfileLayer, type AgentfileLines } from './agentfile.ts';
import { isBuiltinAgent } from './agents.ts';
import {
  ACTIVE_STATUSES,
  DEFAULT_ITERATION_TIMEOUT_SEC,
  DEFAULT_MAX_ITERATIONS,
  POD_TOKEN_PREFIX_LENGTH,
  newPodKey,
  newPodToken,
  type PodConfig,
} from './model.ts';
import { isAvailable, pickRunner } from '../runners/selection.ts';

export interface CreatePodInput {
  agent_slug: string;
  agentfile_layer?: string;
  runner_id?: number;
  ticket_slug?: string;
  alias?: string;
}

/** What loops add on top of the API's fields (the loops issue builds on this). */
export interface PodExtras {
  persistentKey?: string | null;
  keepWorkspace?: boolean;
  resumeSessionId?: string | null;
  /** Use this runner when it is available (a persistent sandbox lives there), else any runner. */
  preferRunnerId?: number | null;
  loopRunId?: number | null;
}

async function resolveRepository(db: Executor, orgId: number, layer: AgentfileLayer, lines: AgentfileLines) {
  if (!layer.repo) return null;
  const repo =
    'id' in layer.repo
      ? await repositories.findRepository(db, orgId, layer.repo.id)
      : await repositories.findRepositoryByName(db, orgId, layer.repo.name);
  if (!repo) {
    const named = 'id' in layer.repo ? `id ${layer.repo.id}` : `"${layer.repo.name}"`;
    throw agentfileError(lines.REPO ?? null, `REPO names no repository of this organization (${named})`);
  }
  return repo;
}

/** POST /pods: validates, places the pod on a runner, records it, and wakes that runner. */
export async function createPod(ctx: DomainContext, org: OrgRow, input: CreatePodInput): Promise<PodRow> {
  const { layer, lines } = parseAgentfileLayerWithLines(input.agentfile_layer ?? '');
  return launchPod(ctx, org, input, layer, {}, lines);
}

/** A pod from an already-parsed layer: the API parses agentfile text, loops build the layer from their fields. */
export async function launchPod(
  ctx: DomainContext,
  org: OrgRow,
  input: Omit<CreatePodInput, 'agentfile_layer'>,
  layer: AgentfileLayer,
  extras: PodExtras = {},
  /** Where each directive stood in the agentfile text, so reference errors can name the line. */
  lines: AgentfileLines = {},
): Promise<PodRow> {
  const db = ctx.store.db;
  const builtin = isBuiltinAgent(input.agent_slug);
  if (!builtin && !(await customAgents.findCustomAgent(db, org.id, input.agent_slug))) {
    throw invalid('/agent_slug', `"${input.agent_slug}" is neither a built-in agent nor a custom agent of this organization`);
  }
  const repository = await resolveRepository(db, org.id, layer, lines);
  const channelId = layer.config.channel_id ?? null;
  if (channelId !== null && !(await channels.findChannel(db, org.id, channelId))) {
    throw agentfileError(lines['CONFIG channel_id'] ?? null, `CONFIG channel_id ${channelId} is not a channel of this organization`);
  }
  let ticketSlug: string | null = null;
  if (input.ticket_slug !== undefined) {
    const ticket = await findTicketBySlug(db, org.id, canonicalSlug(input.ticket_slug));
    if (!ticket) throw invalid('/ticket_slug', 'must be the slug of a ticket of this organization');
    ticketSlug = ticket.slug;
  }
  const config: PodConfig = {
    model: layer.config.model ?? null,
    max_turns: layer.config.max_turns ?? null,
    pod_timeout_minutes: layer.config.pod_timeout_minutes ?? null,
    auto_close: layer.config.auto_close ?? true,
    sandbox_type: layer.config.sandbox_type ?? null,
    max_iterations: layer.config.max_iterations ?? DEFAULT_MAX_ITERATIONS,
    iteration_timeout_sec: layer.config.iteration_timeout_sec ?? DEFAULT_ITERATION_TIMEOUT_SEC,
    permission_mode: layer.config.permission_mode ?? null,
    persistent_key: extras.persistentKey ?? null,
    keep_workspace: extras.keepWorkspace ?? false,
    resume_session_id: extras.resumeSessionId ?? null,
    loop_run_id: extras.loopRunId ?? null,
  };
  const secrets = ctx.secrets;
  if (!secrets) throw new Error('creating pods needs the secret box (DomainContext.secrets)');
  const token = newPodToken();

  const pod = await db.transaction().execute(async (trx) => {
    await runners.lockRunners(trx, ctx.store.kind, org.id);
    const now = ctx.now();
    const runnerId = await placePod(trx, org.id, input.agent_slug, input.runner_id, now, extras.preferRunnerId ?? null);
    return pods.insertPod(trx, {
      org_id: org.id,
      key: newPodKey(),
      runner_id: runnerId,
      agent_slug: input.agent_slug,
      status: 'initializing',
      desired_state: 'run',
      prompt: layer.prompt ?? '',
      mode: layer.mode,
      config: JSON.stringify(config),
      repository_id: repository?.id ?? null,
      branch: layer.branch,
      ticket_slug: ticketSlug,
      channel_id: channelId,
      alias: input.alias ?? null,
      credentials: JSON.stringify(layer.credentials),
      token_prefix: token.slice(0, POD_TOKEN_PREFIX_LENGTH),
      token_hash: hashSecret(token),
      token_encrypted: secrets.encrypt(token),
      error_message: null,
      exit_code: null,
      session_id: null,
      started_at: null,
      deadline_at: null,
      finished_at: null,
      created_at: now,
      updated_at: now,
    });
  });
  await ctx.wakeRunner?.(pod.runner_id);
  return pod;
}

async function placePod(
  trx: Executor,
  orgId: number,
  agentSlug: string,
  runnerId: number | undefined,
  now: number,
  preferRunnerId: number | null,
): Promise<number> {
  if (runnerId !== undefined) {
    const runner = await runners.findRunner(trx, orgId, runnerId);
    if (!runner) throw invalid('/runner_id', 'must be the id of a runner of this organization');
    const why = isAvailable(runner, agentSlug, now);
    if (why !== null) throw new AppError('RUNNER_UNAVAILABLE', `runner ${runnerId} cannot take this pod: ${why}`);
    return runner.id;
  }
  const candidates = await runners.listRunners(trx, orgId);
  const preferred = candidates.find((r) => r.id === preferRunnerId);
  if (preferred && isAvailable(preferred, agentSlug, now) === null) return preferred.id;
  const chosen = pickRunner(candidates, agentSlug, now);
  if (!chosen) throw new AppError('NO_AVAILABLE_RUNNER', `no online runner with free capacity has the agent "${agentSlug}"`);
  return chosen.id;
}

export async function getPod(ctx: DomainContext, orgId: number, key: string): Promise<PodRow> {
  const pod = await pods.findPod(ctx.store.db, orgId, key);
  if (!pod) throw notFound('pod');
  return pod;
}

export async function listPods(ctx: DomainContext, orgId: number, filter: pods.PodFilter, page: { limit: number; offset: number }) {
  const [rows, total] = await Promise.all([
    pods.listPods(ctx.store.db, orgId, filter, page),
    pods.countPods(ctx.store.db, orgId, filter),
  ]);
  return { rows, total };
}

/** Ends an active pod now (status `terminated`) and tells its runner to stop the process. */
export async function terminatePod(ctx: DomainContext, orgId: number, key: string, reason = 'terminated through the API'): Promise<PodRow> {
  const pod = await getPod(ctx, orgId, key);
  const now = ctx.now();
  const changed = await pods.transitionPod(ctx.store.db, pod.id, ACTIVE_STATUSES, {
    status: 'terminated',
    desired_state: 'stop',
    error_message: reason,
    finished_at: now,
    updated_at: now,
  });
  if (!changed) throw new AppError('POD_NOT_ACTIVE', `pod ${key} has already ended (${pod.status})`);
  await ctx.wakeRunner?.(pod.runner_id);
  await afterEnd(ctx, pod, 'terminated', reason);
  return (await pods.findPod(ctx.store.db, orgId, key))!;
}

export async function readOutput(ctx: DomainContext, orgId: number, key: string, tailBytes: number | undefined) {
  const pod = await getPod(ctx, orgId, key);
  const row = await podOutput.readPodOutput(ctx.store.db, pod.id);
  const kept = row?.data ?? '';
  const output = tailBytes === undefined ? kept : podOutput.keepTail(kept, tailBytes);
  const totalBytes = Number(row?.total_bytes ?? 0);
  return { output, truncated: Buffer.byteLength(output) < totalBytes, total_bytes: totalBytes };
}
