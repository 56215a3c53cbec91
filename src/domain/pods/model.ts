import { randomBase62 } from '../auth/keys.ts';
import type { PodStatus } from '../../protocol/enums.ts';
import type { PodLimitsRequest } from './limits.ts';

/** Active pods (ACTIVE_POD_STATUSES, src/protocol/enums.ts) can be terminated; `queued` ones wait for a runner slot (docs/agents.md) and hold none. */
export const FINAL_STATUSES: readonly PodStatus[] = ['completed', 'failed', 'terminated'];

/** What a pod was configured with (the agentfile's CONFIG plus defaults), stored as JSON. */
export interface PodConfig {
  model: string | null;
  max_turns: number | null;
  pod_timeout_minutes: number | null;
  auto_close: boolean;
  sandbox_type: string | null;
  max_iterations: number;
  iteration_timeout_sec: number;
  permission_mode: string | null;
  /** `CONFIG mcp`: the agent gets the `drover` MCP server (absent in pods stored before it existed: true). */
  mcp?: boolean;
  /** `CONFIG network` (absent in pods stored before it existed: restricted). */
  network?: 'restricted' | 'none' | 'open';
  /** The agentfile's `ALLOW` entries, canonical (absent in pods stored before they existed). */
  allow?: string[];
  /** `CONFIG memory_mb | pids | cpus | disk_mb` (absent in pods stored before they existed: none asked). */
  limits?: PodLimitsRequest;
  /** `CONFIG deliver` and `deliver_branch` (absent in pods stored before them: `branch`, none). */
  deliver?: 'branch' | 'merge_request' | 'none';
  deliver_branch?: string | null;
  /** `CONFIG max_cost_usd` (absent in pods stored before it existed: none). */
  max_cost_usd?: number | null;
  /** The agentfile's `ENV` variables (absent in pods stored before they existed). */
  env?: Record<string, string>;
  /** Set by loops: reuse one workspace per loop (persistent sandbox) and resume an agent session. */
  persistent_key: string | null;
  keep_workspace: boolean;
  resume_session_id: string | null;
  /** The loop run this pod executes, if any: the run follows the pod. */
  loop_run_id?: number | null;
  /**
   * A run prepared ahead of its cron slot: the slot (server clock, epoch ms), before which its
   * agent does not start (the runner is told the time left, `start_in_ms`, as the start goes out).
   */
  start_at?: number | null;
  /** A queued pod: the runner it was asked for (`runner_id` of the request), else any. */
  requested_runner_id?: number | null;
  /** A queued pod: the runner to take when it has room (a loop's persistent sandbox), else any. */
  prefer_runner_id?: number | null;
}

export const DEFAULT_MAX_ITERATIONS = 10;
export const DEFAULT_ITERATION_TIMEOUT_SEC = 600;

/** Opaque, URL-safe: `p-` + 14 lower-case letters and digits. */
export function newPodKey(): string {
  return 'p-' + randomBase62(14).toLowerCase();
}

/**
 * A pod's API token: valid while the pod is active, with these scopes (docs/mcp.md). Its
 * `pods:write` covers only spawning pods and terminating the pods it spawned (spawn.ts).
 */
export const POD_TOKEN_SCOPES = ['channels:write', 'tickets:write', 'pods:read', 'pods:write', 'loops:read', 'repos:read', 'runners:read'] as const;
export const newPodToken = (): string => 'drvpod_' + randomBase62(40);
export const POD_TOKEN_PREFIX_LENGTH = 16;
