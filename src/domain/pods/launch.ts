import { limitsRequest } from './limits.ts';
import { AppError, invalid } from '../../errors.ts';
import * as channels from '../../store/channels.ts';
import * as customAgents from '../../store/custom-agents.ts';
import type { Executor } from '../../store/db.ts';
import { countActivePods, countQueuedPods } from '../../store/org-quotas.ts';
import * as pods from '../../store/pods.ts';
import * as repositories from '../../store/repositories.ts';
import * as runners from '../../store/runners.ts';
import type { RunnerWithCount } from '../../store/runners.ts';
import type { PodRow, PodsTable } from '../../store/schema-runners.ts';
import type { OrgRow } from '../../store/schema.ts';
import { findTicketBySlug } from '../../store/tickets.ts';
import { hashSecret } from '../auth/keys.ts';
import { recordPodEvent } from './events.ts';
import type { DomainContext } from '../context.ts';
import { fits } from '../quotas/model.ts';
import { orgQuotas, quotaExceeded } from '../quotas/service.ts';
import { capacityProblem, hasAgent, isAvailable, pickRunnerPreferring, queueProblem } from '../runners/selection.ts';
import { placeQueued, wakePlaced } from './queue.ts';
import { carriesLabels, labelled, labelsColumn } from '../runners/labels.ts';
import { actorJson } from '../../events/actor.ts';
import { checkFanOut } from './spawn.ts';
import { canonicalSlug } from '../tickets/model.ts';
import type { AgentfileLayer, AgentfileLines } from './agentfile.ts';
import { agentfileError } from './agentfile-syntax.ts';
import { isBuiltinAgentSlug, permissionModeProblem } from '../../agents/builtin.ts';
import { EMPTY_USAGE_COLUMNS } from './results.ts';
import { parseNetworkAllow, podNetwork } from './network.ts';
import * as orgs from '../../store/orgs.ts';
import { deliverSettings, PENDING_DELIVERY } from '../deliveries/model.ts';
import { DEFAULT_ITERATION_TIMEOUT_SEC, DEFAULT_MAX_ITERATIONS, POD_TOKEN_PREFIX_LENGTH, newPodKey, newPodToken, type PodConfig } from './model.ts';

/** The API's fields of a new pod (POST /pods), the agentfile text aside. */
export interface PodInput {
  agent_slug: string;
  runner_id?: number;
  ticket_slug?: string;
  alias?: string;
  /** Only runners carrying all of these qualify (runners/labels.ts). */
  runner_labels?: string[];
  /** The preset the pod was made from, recorded on it (its agent and lines are already merged in). */
  preset?: string;
}

/** What loops add on top of the API's fields. */
export interface PodExtras {
  persistentKey?: string | null;
  keepWorkspace?: boolean;
  resumeSessionId?: string | null;
  /** Use this runner when it is available (a persistent sandbox lives there), else any runner. */
  preferRunnerId?: number | null;
  loopRunId?: number | null;
  /** The pod whose token spawns this one (docs/mcp.md): recorded as parent_pod_key; its channel and ticket are inherited unless given. */
  parent?: PodRow | null;
  /** The agent starts no earlier than this (epoch ms, server clock): a run prepared ahead of its cron slot. */
  startAt?: number | null;
  /** Who the pod is created for (a loop run's trigger), JSON actor; default: the current actor. */
  createdBy?: string | null;
}

export interface LaunchRequest {
  input: PodInput;
  layer: AgentfileLayer;
  extras?: PodExtras;
  /** Where each directive stood in the agentfile text, so reference errors can name the line. */
  lines?: AgentfileLines;
}

/** A pod ready to be placed: every column but its runner. */
type Unplaced = Omit<PodsTable, 'id' | 'runner_id' | 'created_at' | 'updated_at'>;

/**
 * Validates, places and records pods of one organization, and wakes their runners: each request
 * gets its pod or the AppError that refused it (an unknown reference, no runner with the agent).
 * They are placed and recorded in one transaction, against one reading of the runners' loads, so a
 * burst (a cron slot firing hundreds of loops) costs one commit, not one per pod. The org's queue
 * is placed first (queue.ts): a new pod takes no slot an older queued pod could use, and is itself
 * `queued` when no runner can take it now but one could later (docs/agents.md).
 */
export async function launchPods(ctx: DomainContext, org: OrgRow, requests: LaunchRequest[]): Promise<(PodRow | AppError)[]> {
  const references = new References(ctx.store.db, org.id);
  const prepared: (Unplaced | AppError)[] = [];
  for (const request of requests) {
    try {
      prepared.push(await unplacedPod(ctx, org, request, references));
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      prepared.push(error);
    }
  }
  if (prepared.every((p) => p instanceof AppError)) return prepared as AppError[];

  const { results, promoted } = await ctx.store.transaction(async (trx) => {
    await runners.lockRunners(trx, org.id);
    const candidates = await runners.listRunners(trx, org.id);
    // Counted under the runners' lock, which every placement in the org takes: concurrent
    // creates cannot both take the last slot of a quota. A pod the active-pods quota has no room
    // for waits in the queue like one no runner has room for; the queue is bounded by its own quota.
    const limits = await orgQuotas(ctx, trx, org.id);
    let active = limits.max_active_pods === 0 ? 0 : await countActivePods(trx, org.id);
    let queued = limits.max_queued_pods === 0 ? 0 : await countQueuedPods(trx, org.id);
    const now = ctx.now();
    const room = limits.max_active_pods === 0 ? Infinity : limits.max_active_pods - active;
    const promoted = room > 0 && candidates.some((r) => capacityProblem(r, now) === null) ? await placeQueued(trx, ctx, org.id, candidates, now, room) : [];
    active += promoted.length;
    queued -= promoted.length;
    const placed: (PodRow | AppError)[] = [];
    const children = new Map<string, number>();
    for (const [i, pod] of prepared.entries()) {
      if (pod instanceof AppError) {
        placed.push(pod);
        continue;
      }
      const { input, extras } = requests[i];
      if (pod.parent_pod_key !== null) {
        const pending = children.get(pod.parent_pod_key) ?? 0;
        const refused = await checkFanOut(trx, pod.parent_pod_key, pending);
        if (refused) {
          placed.push(refused);
          continue;
        }
        children.set(pod.parent_pod_key, pending + 1);
      }
      const found = place(candidates, input, extras?.preferRunnerId ?? null, now);
      const runner = found instanceof AppError || fits(limits.max_active_pods, active) ? found : 'queued';
      if (runner instanceof AppError) {
        placed.push(runner);
        continue;
      }
      const times = { created_at: now, updated_at: now };
      if (runner === 'queued') {
        if (!fits(limits.max_queued_pods, queued)) {
          placed.push(quotaExceeded('max_queued_pods', limits.max_queued_pods, `${queued} pods of this organization are waiting for a runner`));
          continue;
        }
        queued++;
        const config: PodConfig = { ...(JSON.parse(pod.config) as PodConfig), requested_runner_id: input.runner_id ?? null, prefer_runner_id: extras?.preferRunnerId ?? null };
        const queuedPod = await pods.insertPod(trx, { ...pod, status: 'queued', config: JSON.stringify(config), runner_id: null, ...times });
        await recordPodEvent(ctx, trx, 'pod.created', queuedPod);
        placed.push(queuedPod);
        continue;
      }
      runner.pod_count++;
      active++;
      const inserted = await pods.insertPod(trx, { ...pod, runner_id: runner.id, ...times });
      await recordPodEvent(ctx, trx, 'pod.created', inserted);
      placed.push(inserted);
    }
    return { results: placed, promoted };
  });
  await wakePlaced(ctx, promoted);
  await wakePlaced(ctx, results.filter((pod): pod is PodRow => !(pod instanceof AppError)));
  return results;
}

/** One pod (POST /pods); its refusal is thrown. */
export async function launchPod(ctx: DomainContext, org: OrgRow, request: LaunchRequest): Promise<PodRow> {
  const [result] = await launchPods(ctx, org, [request]);
  if (result instanceof AppError) throw result;
  return result;
}

async function unplacedPod(ctx: DomainContext, org: OrgRow, request: LaunchRequest, references: References): Promise<Unplaced> {
  const { input, layer, extras = {}, lines = {} } = request;
  if (!isBuiltinAgentSlug(input.agent_slug) && !(await references.customAgentExists(input.agent_slug))) {
    throw invalid('/agent_slug', `"${input.agent_slug}" is neither a built-in agent nor a custom agent of this organization`);
  }
  const mode = layer.config.permission_mode;
  const modeProblem = mode === undefined ? null : permissionModeProblem(input.agent_slug, mode);
  if (modeProblem !== null) throw agentfileError(lines['CONFIG permission_mode'] ?? null, `CONFIG ${modeProblem}`);
  const repository = await references.repository(layer, lines);
  const delivering = deliverSettings(layer.config, lines, repository);
  let channelId = layer.config.channel_id ?? null;
  if (channelId !== null && !(await references.channelExists(channelId))) {
    throw agentfileError(lines['CONFIG channel_id'] ?? null, `CONFIG channel_id ${channelId} is not a channel of this organization`);
  }
  const parent = extras.parent ?? null;
  // A spawned pod reaches no runner credential its parent was not given (docs/mcp.md leaves the
  // agentfile open; a pod token must not widen what the pod's agent can get).
  const foreign = parent ? layer.credentials.filter((name) => !(JSON.parse(parent.credentials) as string[]).includes(name)) : [];
  if (foreign.length > 0) {
    throw agentfileError(null, `CREDENTIAL ${foreign.join(', ')}: a spawned pod may name only the credentials of its parent pod (${parent!.key})`);
  }
  // A spawned pod inherits its parent's channel and ticket unless given its own (one deleted since is dropped).
  if (channelId === null && parent?.channel_id != null && (await references.channelExists(parent.channel_id))) channelId = parent.channel_id;
  let ticketSlug: string | null = null;
  if (input.ticket_slug !== undefined) {
    const ticket = await findTicketBySlug(ctx.store.db, org.id, canonicalSlug(input.ticket_slug));
    if (!ticket) throw invalid('/ticket_slug', 'must be the slug of a ticket of this organization');
    ticketSlug = ticket.slug;
  } else if (parent?.ticket_slug != null && (await findTicketBySlug(ctx.store.db, org.id, parent.ticket_slug))) {
    ticketSlug = parent.ticket_slug;
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
    mcp: layer.config.mcp ?? true,
    ...(await podNetwork(async () => parseNetworkAllow(await orgs.findOrgNetworkAllow(ctx.store.db, org.id)), layer, lines, parent)),
    limits: limitsRequest(layer.config),
    ...delivering,
    max_cost_usd: layer.config.max_cost_usd ?? null,
    env: layer.env,
    persistent_key: extras.persistentKey ?? null,
    keep_workspace: extras.keepWorkspace ?? false,
    resume_session_id: extras.resumeSessionId ?? null,
    loop_run_id: extras.loopRunId ?? null,
    ...(extras.startAt ? { start_at: extras.startAt } : {}),
  };
  const secrets = ctx.secrets;
  if (!secrets) throw new Error('creating pods needs the secret box (DomainContext.secrets)');
  const token = newPodToken();
  return {
    org_id: org.id,
    key: newPodKey(),
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
    parent_pod_key: parent?.key ?? null,
    created_by: extras.createdBy ?? actorJson(),
    runner_labels: labelsColumn(input.runner_labels),
    preset: input.preset ?? null,
    credentials: JSON.stringify(layer.credentials),
    token_prefix: token.slice(0, POD_TOKEN_PREFIX_LENGTH),
    token_hash: hashSecret(token),
    token_encrypted: secrets.encrypt(token),
    error_message: null,
    exit_code: null,
    session_id: null,
    result: null,
    ...EMPTY_USAGE_COLUMNS,
    network_refused: 0,
    delivery: repository && delivering.deliver !== 'none' ? JSON.stringify(PENDING_DELIVERY) : null,
    started_at: null,
    deadline_at: null,
    finished_at: null,
  };
}

/**
 * Where a new pod goes (docs/api.md "Pods"; docs/decisions.md "Runners and pods"), among the org's runners as
 * loaded by this placement: a runner with room, or `queued` when no runner can take it now but one
 * could later. Asked for by id: that runner when it has room, queued for it when it is only full,
 * 409 when it is offline, draining, silent or lacks the agent. Otherwise: 503 only when no runner of
 * the org has the agent at all (every runner counts for a custom agent, which none can advertise).
 */
function place(all: RunnerWithCount[], input: PodInput, preferRunnerId: number | null, now: number): RunnerWithCount | 'queued' | AppError {
  const { agent_slug: agentSlug, runner_id: runnerId, runner_labels: wanted = [] } = input;
  const candidates = labelled(all, wanted);
  if (runnerId !== undefined) {
    const runner = all.find((r) => r.id === runnerId);
    if (!runner) return invalid('/runner_id', 'must be the id of a runner of this organization');
    if (!carriesLabels(runner, wanted)) return new AppError('RUNNER_UNAVAILABLE', `runner ${runnerId} cannot take this pod: it does not carry the labels ${wanted.join(', ')}`);
    const why = queueProblem(runner, agentSlug, now);
    if (why !== null) return new AppError('RUNNER_UNAVAILABLE', `runner ${runnerId} cannot take this pod: ${why}`);
    return isAvailable(runner, agentSlug, now) === null ? runner : 'queued';
  }
  const runner = pickRunnerPreferring(candidates, agentSlug, preferRunnerId, now);
  if (runner) return runner;
  if (candidates.some((r) => hasAgent(r, agentSlug))) return 'queued';
  if (wanted.length > 0) {
    return new AppError('NO_AVAILABLE_RUNNER', `no runner of this organization carrying the labels ${wanted.join(', ')} has the agent "${agentSlug}"`);
  }
  return new AppError('NO_AVAILABLE_RUNNER', `no runner of this organization has the agent "${agentSlug}"`);
}

/** The org's custom agents, repositories and channels that pods name, each looked up once per launch. */
class References {
  private readonly memo = new Map<string, Promise<unknown>>();

  constructor(
    private readonly db: Executor,
    private readonly orgId: number,
  ) {}

  private once<T>(key: string, load: () => Promise<T>): Promise<T> {
    let found = this.memo.get(key) as Promise<T> | undefined;
    if (!found) {
      found = load();
      this.memo.set(key, found);
    }
    return found;
  }

  customAgentExists(slug: string): Promise<boolean> {
    return this.once(`agent ${slug}`, async () => (await customAgents.findCustomAgent(this.db, this.orgId, slug)) !== undefined);
  }

  channelExists(id: number): Promise<boolean> {
    return this.once(`channel ${id}`, async () => (await channels.findChannel(this.db, this.orgId, id)) !== undefined);
  }

  async repository(layer: AgentfileLayer, lines: AgentfileLines) {
    const named = layer.repo;
    if (!named) return null;
    const repo = await this.once(`repo ${JSON.stringify(named)}`, () =>
      'id' in named ? repositories.findRepository(this.db, this.orgId, named.id) : repositories.findRepositoryByName(this.db, this.orgId, named.name),
    );
    if (!repo) {
      throw agentfileError(lines.REPO ?? null, `REPO names no repository of this organization (${'id' in named ? `id ${named.id}` : `"${named.name}"`})`);
    }
    return repo;
  }
}
