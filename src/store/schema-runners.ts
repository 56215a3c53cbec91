import type { Generated, Selectable } from 'kysely';

/** Tables of runners and pods (migration 0004). */
export interface RunnerTokensTable {
  id: Generated<number>;
  org_id: number;
  token_hash: string;
  /** The first 12 characters of the token, to recognise it; null for tokens issued before 0010. */
  prefix: string | null;
  labels: string;
  /** Registrations the token allows in all, and how many are left. */
  uses: number;
  uses_left: number;
  expires_at: number;
  revoked_at: number | null;
  created_at: number;
}

export interface RunnersTable {
  id: Generated<number>;
  org_id: number;
  name: string;
  credential_hash: string;
  status: 'online' | 'offline' | 'draining';
  version: string;
  os: string;
  arch: string;
  labels: string;
  /** JSON `[{slug, version}]` (plain slugs in rows written before migration 0008). */
  agents: string;
  /** How the runner sandboxes its pods: `bwrap` or `none`; null until it has connected. */
  sandbox: 'bwrap' | 'none' | null;
  /** JSON `{network, memory, pids, cpu, disk}` (migration 0017); null until a runner reporting it connects. */
  isolation: string | null;
  max_pods: number;
  /** The live socket's id (whichever replica holds it); a stale close must not mark a reconnected runner offline. */
  connection_id: string | null;
  last_heartbeat_at: number | null;
  created_at: number;
  updated_at: number;
  /** Set when an administrator deleted the runner (migration 0011): its credential no longer matches. */
  deleted_at: number | null;
  /** When the runner last confirmed a new credential (POST …/rotate-credential). */
  credential_rotated_at: number | null;
}

export interface CustomAgentsTable {
  id: Generated<number>;
  org_id: number;
  slug: string;
  name: string;
  command: string;
  args: string;
  prompt_position: string;
  created_at: number;
}

import type { PodStatus } from '../protocol/enums.ts';

export type { PodStatus };

export interface PodsTable {
  id: Generated<number>;
  org_id: number;
  key: string;
  /** Null while the pod is `queued` (migration 0013): it gets its runner when a slot frees. */
  runner_id: number | null;
  agent_slug: string;
  status: PodStatus;
  desired_state: 'run' | 'stop';
  prompt: string;
  mode: 'direct' | 'autopilot';
  config: string;
  repository_id: number | null;
  branch: string | null;
  ticket_slug: string | null;
  channel_id: number | null;
  alias: string | null;
  /** The pod whose token spawned this one (migration 0015); null for pods created with an API key or by a loop. */
  parent_pod_key: string | null;
  /** Who created the pod, JSON actor (migration 0020). */
  created_by: string | null;
  /** Labels its runner must carry, JSON array (migration 0020); null: any runner. */
  runner_labels: string | null;
  /** The preset it was made from (migration 0020). */
  preset: string | null;
  credentials: string;
  token_prefix: string;
  token_hash: string;
  token_encrypted: string;
  error_message: string | null;
  exit_code: number | null;
  session_id: string | null;
  /** The agent's final message (migration 0012). */
  result: string | null;
  usage_input_tokens: number | null;
  usage_output_tokens: number | null;
  usage_cache_read_tokens: number | null;
  usage_cache_write_tokens: number | null;
  usage_cost_usd: number | null;
  usage_turns: number | null;
  /** Connections the pod's egress proxy refused (migration 0016). */
  network_refused: number;
  /** What became of the pod's work, as JSON text (migration 0019); null without a repository. */
  delivery: string | null;
  started_at: number | null;
  deadline_at: number | null;
  finished_at: number | null;
  created_at: number;
  updated_at: number;
}

/** A pod's output as appended chunks (migration 0011): bytes [start_offset, end_offset) of its output. */
export interface PodOutputChunksTable {
  pod_id: number;
  start_offset: number;
  end_offset: number;
  data: string;
}

/** A pod's work as `git format-patch` text (migration 0019). */
export interface PodPatchesTable {
  pod_id: number;
  patch: string;
  created_at: number;
}

/** A deleted loop's persistent workspace its runner is to deliver and remove (migration 0021). */
export interface WorkspaceRemovalsTable {
  runner_id: number;
  persistent_key: string;
  pod_key: string | null;
  created_at: number;
}

export type RunnerTokenRow = Selectable<RunnerTokensTable>;
export type RunnerRow = Selectable<RunnersTable>;
export type PodRow = Selectable<PodsTable>;
export type CustomAgentRow = Selectable<CustomAgentsTable>;
