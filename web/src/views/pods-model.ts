import type { Delivery } from './delivery.tsx';
import { resourceOf, type DroverEvent } from '../live.ts';

export interface Usage {
  input_tokens: number | null;
  output_tokens: number | null;
  cache_read_tokens: number | null;
  cache_write_tokens: number | null;
  cost_usd: number | null;
  turns: number | null;
}

export interface PodItem {
  key: string;
  status: string;
  agent_slug: string;
  runner_id: number | null;
  prompt: string;
  result: string | null;
  usage: Usage;
  queue_position: number | null;
  created_at: string;
  updated_at: string;
}

export interface Pod extends PodItem {
  error_message: string | null;
  exit_code: number | null;
  started_at: string | null;
  finished_at: string | null;
  mode: string;
  alias: string | null;
  ticket_slug: string | null;
  channel_id: number | null;
  parent_pod_key?: string | null;
  session_id: string | null;
  repository_id: number | null;
  branch: string | null;
  env?: Record<string, string>;
  /** Present once the delivery work lands on the server (null for pods without REPO). */
  delivery?: Delivery | null;
  created_by?: Actor | null;
}

/** Who made a change (people work): shown by name. */
export interface Actor {
  type: string;
  id: number | null;
  name: string | null;
}

export interface Runner {
  id: number;
  name: string;
  status: string;
  version: string;
  os: string;
  arch: string;
  labels: string[];
  sandbox: string | null;
  agents: Array<{ slug: string; version: string | null }>;
  pod_count: number;
  max_pods: number;
  last_heartbeat_at: string | null;
}

export const ACTIVE = ['queued', 'initializing', 'running', 'orphaned'];

/** The pod a `pod.*` event carries, with its `key` (`pod_key` in a created pod's short form). */
export function podFromEvent(event: DroverEvent): (Partial<Pod> & { key: string }) | null {
  const pod = resourceOf<Partial<Pod> & { key?: string; pod_key?: string }>(event, 'pod');
  if (!pod) return null;
  const key = pod.key ?? pod.pod_key;
  return key ? { ...pod, key } : null;
}

/** `PROMPT "…"` for an agentfile, in the grammar's quoted form (JSON escapes). */
export const promptLine = (prompt: string) => `PROMPT ${JSON.stringify(prompt)}`;
