import type { RunnerWithCount } from '../../store/runners.ts';
import { iso, isoOrNull } from '../iso.ts';
import { advertisedAgents, runnerIsolation } from './advertised.ts';

/** A runner as `GET /runners/{id}` and its events show it. */
export function runnerView(runner: RunnerWithCount) {
  return {
    id: runner.id,
    name: runner.name,
    status: runner.status,
    version: runner.version,
    os: runner.os,
    arch: runner.arch,
    labels: JSON.parse(runner.labels) as string[],
    sandbox: runner.sandbox,
    isolation: runnerIsolation(runner.isolation),
    agents: advertisedAgents(runner.agents),
    pod_count: runner.pod_count,
    max_pods: runner.max_pods,
    last_heartbeat_at: isoOrNull(runner.last_heartbeat_at),
    created_at: iso(runner.created_at),
  };
}
