import { ACTIVE_POD_STATUSES } from '../../../src/protocol/enums.ts';
import { resourceOf, type DroverEvent } from '../live.ts';

// The API's shapes, from the generated client (web/src/api-types.ts).
export type { Actor, Pod, PodItem, Runner, Usage } from '../api-types.ts';
import type { Pod } from '../api-types.ts';

export const ACTIVE: readonly string[] = ACTIVE_POD_STATUSES;

/** The pod a `pod.*` event carries, with its `key` (`pod_key` in a created pod's short form). */
export function podFromEvent(event: DroverEvent): (Partial<Pod> & { key: string }) | null {
  const pod = resourceOf<Partial<Pod> & { key?: string; pod_key?: string }>(event, 'pod');
  if (!pod) return null;
  const key = pod.key ?? pod.pod_key;
  return key ? { ...pod, key } : null;
}

/** `PROMPT "…"` for an agentfile, in the grammar's quoted form (JSON escapes). */
export const promptLine = (prompt: string) => `PROMPT ${JSON.stringify(prompt)}`;
