import type { PodOutcome } from '../protocol/runner-link.ts';
import type { ProcessResult } from './process-group.ts';
import type { RunningPod } from './running-pod.ts';

/**
 * What a pod's end is reported as: a stop (terminated, timeout) or a limit it went over wins over
 * how its agent ended.
 */
export function podOutcome(pod: RunningPod, outcome: PodOutcome['outcome'], exitCode: number | null, error: string | null): PodOutcome {
  if (pod.failure && !pod.stopReason) return { key: pod.spec.key, outcome: 'failed', exit_code: exitCode, error_message: pod.failure, ...pod.results.get() };
  return {
    key: pod.spec.key,
    outcome: pod.stopReason ? 'terminated' : outcome,
    exit_code: exitCode,
    error_message: pod.stopReason === 'timeout' ? 'timeout' : pod.stopReason ? 'terminated' : error,
    ...pod.results.get(),
    ...(pod.network ? { network_refused: pod.network.refused } : {}),
  };
}

/** The outcome of a pod whose agent process ended with `result`. */
export function outcomeOfResult(pod: RunningPod, result: ProcessResult): PodOutcome {
  if (result.spawnError) return podOutcome(pod, 'failed', null, result.spawnError);
  if (result.code === 0) return podOutcome(pod, 'completed', 0, null);
  const how = result.code !== null ? `exit code ${result.code}` : `signal ${result.signal}`;
  return podOutcome(pod, 'failed', result.code, `the agent ended with ${how}`);
}
