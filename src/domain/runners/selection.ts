import type { RunnerWithCount } from '../../store/runners.ts';
import { isBuiltinAgentSlug } from '../../agents/builtin.ts';
import { advertisedAgents } from './advertised.ts';

/** A runner is out of touch when its last heartbeat is older than this (contract §5). */
export const RUNNER_SILENCE_MS = 30_000;

/** Why the runner cannot take any pod now (online, fresh heartbeat, free capacity), or null. */
export function capacityProblem(runner: RunnerWithCount, now: number): string | null {
  if (runner.status !== 'online') return `it is ${runner.status}`;
  if (runner.last_heartbeat_at === null || now - runner.last_heartbeat_at > RUNNER_SILENCE_MS) return 'its heartbeat is stale';
  if (runner.pod_count >= runner.max_pods) return `it is full (${runner.pod_count}/${runner.max_pods} pods)`;
  return null;
}

/** Why the runner cannot take a pod of this agent now, or null when it can. */
export function isAvailable(runner: RunnerWithCount, agentSlug: string, now: number): string | null {
  const problem = capacityProblem(runner, now);
  if (problem) return problem;
  // Custom agents run the org's own command, which the runner cannot advertise; a missing one fails the pod.
  if (isBuiltinAgentSlug(agentSlug) && !advertisedAgents(runner.agents).some((agent) => agent.slug === agentSlug)) {
    return `it does not have the agent "${agentSlug}"`;
  }
  return null;
}

/** The available runner with the fewest pods (on a tie, the one registered first: the lowest id), or null. */
export function pickRunner(runners: RunnerWithCount[], agentSlug: string, now: number): RunnerWithCount | null {
  const candidates = runners.filter((r) => isAvailable(r, agentSlug, now) === null);
  candidates.sort((a, b) => a.pod_count - b.pod_count || a.id - b.id);
  return candidates[0] ?? null;
}
