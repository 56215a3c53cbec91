import { AppError, invalid, notFound } from '../../errors.ts';
import * as customAgents from '../../store/custom-agents.ts';
import { isUniqueViolation, type Executor } from '../../store/db.ts';
import * as runs from '../../store/loop-runs.ts';
import * as loops from '../../store/loops.ts';
import { lockOrg } from '../../store/org-quotas.ts';
import * as repositories from '../../store/repositories.ts';
import * as runners from '../../store/runners.ts';
import type { LoopRow, LoopsTable } from '../../store/schema-loops.ts';
import type { DomainContext } from '../context.ts';
import { recordLoopEvent, updateLoopWithEvent } from './events.ts';
import { loopFields } from './view.ts';
import { isBuiltinAgentSlug } from '../../agents/builtin.ts';
import { branchProblem } from '../pods/agentfile.ts';
import { fits } from '../quotas/model.ts';
import { orgQuotas, quotaExceeded } from '../quotas/service.ts';
import { generateWebhookSecret } from '../webhooks/signing.ts';
import { checkLoopLayer } from './agentfile.ts';
import { callbackGuardProblem } from '../webhooks/callback-check.ts';
import { labelsColumn } from '../runners/labels.ts';
import { applyLoopPreset } from '../presets/apply.ts';
import { type LoopFields, DEFAULT_AUTOPILOT_CONFIG, DEFAULT_TIMEOUT_MINUTES, callbackUrlProblem, checkVariablesDepth, slugFromName, uniqueSlug } from './model.ts';
import { cancelRuns, giveWayToTrigger, withdrawPreparedRuns } from './run-follow.ts';
import { startQueuedRuns, triggerRun } from './runs.ts';
import { nextRunAt, validateCron, validateTimezone } from './schedule.ts';
import { scheduleWorkspaceRemovals } from '../runners/workspace-removals.ts';

type OptionalFields = Partial<Omit<LoopFields, 'autopilot_config'>> & { autopilot_config?: Partial<LoopFields['autopilot_config']> };
export type CreateLoopInput = OptionalFields & Pick<LoopFields, 'name' | 'prompt_template'> & { slug?: string };
export type UpdateLoopInput = OptionalFields;

export async function requireLoop(db: Executor, orgId: number, slug: string): Promise<LoopRow> {
  const loop = await loops.findLoop(db, orgId, slug);
  if (!loop) throw notFound('loop');
  return loop;
}

/** Checks what the schema cannot: references exist in the org, the agent is known, the cron parses. */
async function checkFields(ctx: DomainContext, orgId: number, fields: LoopFields): Promise<void> {
  const db = ctx.store.db;
  if (fields.agent_slug !== null && fields.custom_agent_slug !== null) {
    throw invalid('/custom_agent_slug', 'may not be given together with agent_slug: choose one');
  }
  if (fields.agent_slug !== null && !isBuiltinAgentSlug(fields.agent_slug)) {
    throw invalid('/agent_slug', `"${fields.agent_slug}" is not a built-in agent (custom agents go in custom_agent_slug)`);
  }
  if (fields.custom_agent_slug !== null && !(await customAgents.findCustomAgent(db, orgId, fields.custom_agent_slug))) {
    throw invalid('/custom_agent_slug', `"${fields.custom_agent_slug}" is not a custom agent of this organization`);
  }
  if (fields.repository_id !== null && !(await repositories.findRepository(db, orgId, fields.repository_id))) {
    throw invalid('/repository_id', 'must be the id of a repository of this organization');
  }
  if (fields.runner_id !== null && !(await runners.findRunner(db, orgId, fields.runner_id))) {
    throw invalid('/runner_id', 'must be the id of a runner of this organization');
  }
  if (fields.callback_url !== null) {
    const problem = callbackUrlProblem(fields.callback_url) ?? (await callbackGuardProblem(fields.callback_url, ctx.webhookAllowPrivate ?? false));
    if (problem) throw invalid('/callback_url', problem);
  }
  // Checked like an agentfile BRANCH: a name git (and the runner) would refuse fails at the door, not in every run.
  const branch = fields.branch_name === null ? null : branchProblem(fields.branch_name);
  if (branch !== null) throw invalid('/branch_name', branch);
  if (fields.agentfile_layer !== null) await checkLoopLayer(db, orgId, fields.agentfile_layer, fields.custom_agent_slug ?? fields.agent_slug ?? ctx.defaultAgent ?? 'claude-code');
  checkVariablesDepth('/prompt_variables', fields.prompt_variables);
  if (fields.cron_expression !== null) validateCron(fields.cron_expression, fields.cron_timezone);
  else validateTimezone(fields.cron_timezone);
}

function columns(fields: LoopFields): Omit<LoopsTable, 'id' | 'org_id' | 'slug' | 'callback_secret_encrypted' | 'status' | 'next_run_at' | 'run_counter' | 'sandbox_runner_id' | 'last_session_id' | 'created_at' | 'updated_at'> {
  return {
    name: fields.name,
    description: fields.description,
    agent_slug: fields.agent_slug,
    custom_agent_slug: fields.custom_agent_slug,
    prompt_template: fields.prompt_template,
    prompt_variables: JSON.stringify(fields.prompt_variables),
    repository_id: fields.repository_id,
    runner_id: fields.runner_id,
    branch_name: fields.branch_name,
    execution_mode: fields.execution_mode,
    cron_expression: fields.cron_expression,
    cron_timezone: fields.cron_timezone,
    sandbox_strategy: fields.sandbox_strategy,
    session_persistence: fields.session_persistence ? 1 : 0,
    concurrency_policy: fields.concurrency_policy,
    max_concurrent_runs: fields.max_concurrent_runs,
    timeout_minutes: fields.timeout_minutes,
    callback_url: fields.callback_url,
    autopilot_config: JSON.stringify(fields.autopilot_config),
    agentfile_layer: fields.agentfile_layer,
    runner_labels: labelsColumn(fields.runner_labels),
    preset: fields.preset,
    budget_usd_per_day: fields.budget_usd_per_day,
  };
}

function schedule(fields: Pick<LoopFields, 'cron_expression' | 'cron_timezone'>, status: LoopRow['status'], now: number): number | null {
  return status === 'enabled' && fields.cron_expression !== null ? nextRunAt(fields.cron_expression, fields.cron_timezone, now) : null;
}

export async function createLoop(ctx: DomainContext, orgId: number, input: CreateLoopInput, attempt = 1): Promise<LoopRow> {
  const useDefaultAgent = input.agent_slug == null && input.custom_agent_slug == null;
  const fields: LoopFields = {
    name: input.name,
    description: input.description ?? null,
    agent_slug: useDefaultAgent ? (ctx.defaultAgent ?? 'claude-code') : (input.agent_slug ?? null),
    custom_agent_slug: input.custom_agent_slug ?? null,
    prompt_template: input.prompt_template,
    prompt_variables: input.prompt_variables ?? {},
    repository_id: input.repository_id ?? null,
    runner_id: input.runner_id ?? null,
    branch_name: input.branch_name ?? null,
    execution_mode: input.execution_mode ?? 'autopilot',
    cron_expression: input.cron_expression ?? null,
    cron_timezone: input.cron_timezone ?? 'UTC',
    sandbox_strategy: input.sandbox_strategy ?? 'persistent',
    session_persistence: input.session_persistence ?? true,
    concurrency_policy: input.concurrency_policy ?? 'skip',
    max_concurrent_runs: input.max_concurrent_runs ?? 1,
    timeout_minutes: input.timeout_minutes ?? DEFAULT_TIMEOUT_MINUTES,
    callback_url: input.callback_url ?? null,
    autopilot_config: { ...DEFAULT_AUTOPILOT_CONFIG, ...(input.autopilot_config ?? {}) },
    agentfile_layer: input.agentfile_layer || null,
    runner_labels: input.runner_labels ?? [],
    preset: input.preset ?? null,
    budget_usd_per_day: input.budget_usd_per_day ?? null,
  };
  await applyLoopPreset(ctx.store.db, orgId, fields, input);
  await checkFields(ctx, orgId, fields);
  if (!ctx.secrets) throw new Error('creating loops needs the secret box (callback secrets are stored encrypted)');
  const now = ctx.now();
  const db = ctx.store.db;
  const slug = input.slug ?? uniqueSlug(slugFromName(input.name), new Set(await loops.slugsLike(db, orgId, slugFromName(input.name))));
  try {
    const callbackSecret = ctx.secrets.encrypt(generateWebhookSecret());
    return await ctx.store.transaction(async (trx) => {
      // The org row is locked while counting, so concurrent creates cannot both take the last slot.
      await lockOrg(trx, orgId);
      const limit = (await orgQuotas(ctx, trx, orgId)).max_loops;
      const count = limit === 0 ? 0 : await loops.countLoops(trx, orgId);
      if (!fits(limit, count)) throw quotaExceeded('max_loops', limit, `this organization has ${count} loops`);
      const created = await loops.insertLoop(trx, {
        org_id: orgId,
        slug,
        ...columns(fields),
        callback_secret_encrypted: callbackSecret,
        status: 'enabled',
        next_run_at: schedule(fields, 'enabled', now),
        run_counter: 0,
        sandbox_runner_id: null,
        last_session_id: null,
        created_at: now,
        updated_at: now,
      });
      await recordLoopEvent(ctx, trx, 'loop.created', created);
      return created;
    });
  } catch (error) {
    if (isUniqueViolation(error)) {
      if (input.slug !== undefined) throw new AppError('ALREADY_EXISTS', `a loop with slug "${input.slug}" already exists`);
      // A derived slug raced another create: derive again (a few times; a slug that keeps colliding
      // is a bug, and retrying it without end would spin forever).
      if (attempt < 5) return createLoop(ctx, orgId, input, attempt + 1);
    }
    throw error;
  }
}

/** PUT: only the given fields change; choosing one kind of agent clears the other. */
export async function updateLoop(ctx: DomainContext, orgId: number, slug: string, input: UpdateLoopInput): Promise<LoopRow> {
  const loop = await requireLoop(ctx.store.db, orgId, slug);
  const current = loopFields(loop);
  const fields: LoopFields = { ...current, ...input, autopilot_config: { ...current.autopilot_config, ...(input.autopilot_config ?? {}) } };
  if (input.agentfile_layer === '') fields.agentfile_layer = null;
  if (input.agent_slug != null && input.custom_agent_slug === undefined) fields.custom_agent_slug = null;
  if (input.custom_agent_slug != null && input.agent_slug === undefined) fields.agent_slug = null;
  if (fields.agent_slug === null && fields.custom_agent_slug === null) fields.agent_slug = ctx.defaultAgent ?? 'claude-code';
  if (input.preset !== undefined || input.agent_slug !== undefined || input.custom_agent_slug !== undefined) await applyLoopPreset(ctx.store.db, orgId, fields, input);
  await checkFields(ctx, orgId, fields);
  // A run prepared for a slot still to come was made from the loop as it was: withdrawn, and that
  // slot, if the schedule still has it, is prepared again from the loop as it is now.
  const withdrawn = await withdrawPreparedRuns(ctx, loop.id, 'the loop was changed');
  const now = ctx.now();
  const cronChanged = fields.cron_expression !== current.cron_expression || fields.cron_timezone !== current.cron_timezone;
  const updated = await updateLoopWithEvent(ctx, loop.id, {
    ...columns(fields),
    next_run_at: cronChanged || withdrawn > 0 ? schedule(fields, loop.status, now) : loop.next_run_at,
    updated_at: now,
  });
  // More slots: queued runs that fit now start now (docs/api.md: queued runs start when a slot frees).
  if (fields.max_concurrent_runs > current.max_concurrent_runs) await startQueuedRuns(ctx, loop.id);
  return updated;
}

export async function enableLoop(ctx: DomainContext, orgId: number, slug: string): Promise<LoopRow> {
  const loop = await requireLoop(ctx.store.db, orgId, slug);
  if (loop.status === 'enabled') return loop;
  const now = ctx.now();
  return updateLoopWithEvent(ctx, loop.id, { status: 'enabled', next_run_at: schedule(loopFields(loop), 'enabled', now), updated_at: now });
}

/** Disable: no more cron firings or manual triggers; queued runs and runs prepared for a slot to come are cancelled; active runs go on. */
export async function disableLoop(ctx: DomainContext, orgId: number, slug: string): Promise<LoopRow> {
  const loop = await requireLoop(ctx.store.db, orgId, slug);
  const updated = loop.status === 'disabled' ? loop : await updateLoopWithEvent(ctx, loop.id, { status: 'disabled', next_run_at: null, updated_at: ctx.now() });
  await cancelRuns(ctx, loop.id, ['queued'], 'the loop was disabled');
  await withdrawPreparedRuns(ctx, loop.id, 'the loop was disabled');
  return updated;
}

/** Cancels active runs (terminating their pods), then removes the loop and its history; its runners remove its workspaces. */
export async function deleteLoop(ctx: DomainContext, orgId: number, slug: string): Promise<void> {
  const loop = await requireLoop(ctx.store.db, orgId, slug);
  if (loop.status !== 'disabled') await updateLoopWithEvent(ctx, loop.id, { status: 'disabled', next_run_at: null });
  await cancelRuns(ctx, loop.id, ['queued', 'pending', 'running'], 'the loop was deleted');
  // Its persistent workspaces are removed by their runners once their work is delivered (docs/agents.md "Getting the work back").
  const runnerIds = await ctx.store.transaction(async (trx) => {
    const last = await loops.findLoopById(trx, loop.id);
    if (!last) return [];
    await recordLoopEvent(ctx, trx, 'loop.deleted', last);
    const holding = await scheduleWorkspaceRemovals(trx, loop.id, ctx.now());
    await loops.deleteLoop(trx, loop.id);
    return holding;
  });
  for (const runnerId of runnerIds) await ctx.wakeRunner?.(runnerId);
}

export async function manualTrigger(ctx: DomainContext, orgId: number, slug: string, variables: Record<string, unknown> | undefined) {
  // A bad body is 400 before an unknown loop is 404 (docs/api.md "Authentication").
  checkVariablesDepth('/variables', variables);
  const loop = await requireLoop(ctx.store.db, orgId, slug);
  const withdrawnSlot = await giveWayToTrigger(ctx, loop);
  try {
    return await triggerRun(ctx, loop.id, { type: 'manual', variables });
  } finally {
    // After the trigger is recorded: the slot is then decided with its run counted, at the slot.
    if (withdrawnSlot !== null) await loops.bringSlotBack(ctx.store.db, loop.id, withdrawnSlot);
  }
}

export async function listLoops(ctx: DomainContext, orgId: number, page: { limit: number; offset: number } | null) {
  const [rows, total] = await Promise.all([loops.listLoops(ctx.store.db, orgId, page), loops.countLoops(ctx.store.db, orgId)]);
  return { rows, total, stats: await loops.loopStats(ctx.store.db, rows.map((r) => r.id)) };
}

export async function loopWithStats(ctx: DomainContext, loop: LoopRow) {
  return { loop, stats: (await loops.loopStats(ctx.store.db, [loop.id])).get(loop.id) ?? null };
}

export async function listRuns(ctx: DomainContext, orgId: number, slug: string, status: string | undefined, page: { limit: number; offset: number }) {
  const loop = await requireLoop(ctx.store.db, orgId, slug);
  const [rows, total] = await Promise.all([runs.listRuns(ctx.store.db, loop.id, status, page), runs.countRuns(ctx.store.db, loop.id, status)]);
  return { loop, rows, total };
}

export async function getRun(ctx: DomainContext, orgId: number, slug: string, runId: number) {
  const loop = await requireLoop(ctx.store.db, orgId, slug);
  const run = await runs.findRun(ctx.store.db, loop.id, runId);
  if (!run) throw notFound('run');
  return { loop, run };
}
