import { limitsRequest } from './limits.ts';
import type { PodSpec } from '../../protocol/runner-link.ts';
import * as customAgents from '../../store/custom-agents.ts';
import * as repositories from '../../store/repositories.ts';
import type { PodRow } from '../../store/schema-runners.ts';
import type { DomainContext } from '../context.ts';
import { isBuiltinAgentSlug } from '../../agents/builtin.ts';
import type { PodConfig } from './model.ts';
import * as orgs from '../../store/orgs.ts';
import { networkForRunner, parseNetworkAllow } from './network.ts';
import { podBudgets } from '../usage/budgets.ts';

/** The repository a pod's work comes from and goes to, with its token, as the runner gets it. */
export async function podRepo(ctx: DomainContext, pod: PodRow): Promise<PodSpec['repo']> {
  const repo = pod.repository_id === null ? undefined : await repositories.findRepository(ctx.store.db, pod.org_id, pod.repository_id);
  const secrets = ctx.secrets;
  if (!secrets) throw new Error('building a pod spec needs the secret box');
  return repo ? { url: repo.url, token: repo.token_encrypted ? secrets.decrypt(repo.token_encrypted) : null, default_branch: repo.default_branch } : null;
}

/** `CONFIG deliver` and `deliver_branch` as the runner gets them (docs/agents.md "Getting the work back"). */
export const podDeliver = (config: PodConfig): NonNullable<PodSpec['deliver']> => ({ mode: config.deliver ?? 'branch', branch: config.deliver_branch ?? null });

/** What the runner needs to start a pod, built from its stored row (on any replica, at any time). */
export async function podSpec(ctx: DomainContext, pod: PodRow, orgSlug: string, apiUrl: string): Promise<PodSpec> {
  const db = ctx.store.db;
  const config = JSON.parse(pod.config) as PodConfig;
  const secrets = ctx.secrets;
  if (!secrets) throw new Error('building a pod spec needs the secret box');
  const custom = isBuiltinAgentSlug(pod.agent_slug) ? undefined : await customAgents.findCustomAgent(db, pod.org_id, pod.agent_slug);
  return {
    key: pod.key,
    agent: {
      slug: pod.agent_slug,
      custom: custom
        ? { command: custom.command, args: JSON.parse(custom.args) as string[], prompt_position: custom.prompt_position as 'last' }
        : null,
    },
    prompt: pod.prompt,
    mode: pod.mode,
    model: config.model,
    max_turns: config.max_turns,
    permission_mode: config.permission_mode,
    mcp: config.mcp ?? true,
    pod_timeout_minutes: config.pod_timeout_minutes,
    auto_close: config.auto_close,
    max_iterations: config.max_iterations,
    iteration_timeout_sec: config.iteration_timeout_sec,
    repo: await podRepo(ctx, pod),
    branch: pod.branch,
    deliver: podDeliver(config),
    credentials: JSON.parse(pod.credentials) as string[],
    agent_env: config.env ?? {},
    limits: config.limits ?? limitsRequest({}),
    budgets: await podBudgets(ctx, pod, config),
    persistent_key: config.persistent_key,
    keep_workspace: config.keep_workspace,
    resume_session_id: config.resume_session_id,
    ...slotWait(config.start_at, ctx.now()),
    network: networkForRunner(parseNetworkAllow(await orgs.findOrgNetworkAllow(db, pod.org_id)), config),
    env: {
      api_url: apiUrl,
      org: orgSlug,
      pod_token: secrets.decrypt(pod.token_encrypted),
      channel_id: pod.channel_id,
      ticket_slug: pod.ticket_slug,
    },
  };
}

/**
 * A start of a pod prepared ahead of its slot (`start_at`) waits the time left, relative, as this
 * start goes out: a runner's clock may be skewed (docs/runners.md "Pods prepared ahead of their slot").
 * Nothing once the slot has come.
 */
function slotWait(startAt: number | null | undefined, now: number): { start_in_ms?: number; slot_key?: string } {
  return typeof startAt === 'number' && startAt > now ? { start_in_ms: Math.ceil(startAt - now), slot_key: String(startAt) } : {};
}
