import type { RunnerWithCount } from '../../store/runners.ts';
import { isBuiltinAgentSlug } from '../../agents/builtin.ts';
import { advertisedAgents } from './advertised.ts';

/** A runner is out of touch when its last heartbeat is older than this (docs/runners.md). */
export const RUNNER_SILENCE_MS = 30_000;

/** Why the runner cannot take any pod now (online, fresh heartbeat, free capacity), or null. */
export function capacityProblem(runner: RunnerWithCount, now: number): string | null {
  return connectionProblem(runner, now) ?? fullness(runner);
}

function connectionProblem(runner: RunnerWithCount, now: number): string | null {
  if (runner.status !== 'online') return `it is ${runner.status}`;
  if (runner.last_heartbeat_at === null || now - runner.last_heartbeat_at > RUNNER_SILENCE_MS) return 'its heartbeat is stale';
  return null;
}

function fullness(runner: RunnerWithCount): string | null {
  return runner.pod_count >= runner.max_pods ? `it is full (${runner.pod_count}/${runner.max_pods} pods)` : null;
}

/**
 * Whether the runner can run pods of this agent at all. Custom agents run the org's own command,
 * which no runner can advertise: every runner counts (a missing program fails the pod).
 */
export function hasAgent(runner: RunnerWithCount, agentSlug: string): boolean {
  return !isBuiltinAgentSlug(agentSlug) || advertisedAgents(runner.agents).some((agent) => agent.slug === agentSlug);
}

/**
 * Why a pod of this agent cannot wait in the queue for this runner (docs/agents.md: it is offline,
 * draining or silent, or lacks the agent), or null: the runner is only full, or has room.
 */
export function queueProblem(runner: RunnerWithCount, agentSlug: string, now: number): string | null {
  return connectionProblem(runner, now) ?? (hasAgent(runner, agentSlug) ? null : `it does not have the agent "${agentSlug}"`);
}

/** Why the runner cannot take a pod of this agent now, or null when it can. */
export function isAvailable(runner: RunnerWithCount, agentSlug: string, now: number): string | null {
  return queueProblem(runner, agentSlug, now) ?? fullness(runner);
}

/** The available runner with the fewest pods (on a tie, the one registered first: the lowest id), or null. */
export function pickRunner(runners: RunnerWithCount[], agentSlug: string, now: number): RunnerWithCount | null {
  let best: RunnerWithCount | null = null;
  for (const r of runners) {
    if (isAvailable(r, agentSlug, now) !== null) continue;
    if (!best || r.pod_count < best.pod_count || (r.pod_count === best.pod_count && r.id < best.id)) best = r;
  }
  return best;
}

/** `preferId`'s runner when it is available (a loop's persistent sandbox lives there), else `pickRunner`'s. */
export function pickRunnerPreferring(runners: RunnerWithCount[], agentSlug: string, preferId: number | null | undefined, now: number): RunnerWithCount | null {
  const preferred = preferId == null ? undefined : runners.find((r) => r.id === preferId);
  if (preferred && isAvailable(preferred, agentSlug, now) === null) return preferred;
  return pickRunner(runners, agentSlug, now);
}
