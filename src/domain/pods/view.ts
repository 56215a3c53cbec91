import { limitsRequest } from './limits.ts';
import type { PodRow } from '../../store/schema-runners.ts';
import { iso, isoOrNull } from '../iso.ts';
import type { PodConfig } from './model.ts';
import { podResultsView } from './results.ts';
import { parseActor } from '../../events/actor.ts';
import { storedLabels } from '../runners/labels.ts';
import { parseDelivery } from '../deliveries/model.ts';

export function podListItem(pod: PodRow, queuePosition: number | null = null) {
  return {
    key: pod.key,
    status: pod.status,
    agent_slug: pod.agent_slug,
    runner_id: pod.runner_id,
    prompt: pod.prompt,
    repository_id: pod.repository_id,
    branch: pod.branch,
    ...podResultsView(pod),
    queue_position: queuePosition,
    created_by: parseActor(pod.created_by),
    created_at: iso(pod.created_at),
    updated_at: iso(pod.updated_at),
  };
}

/** A pod as `GET /pods/{key}` and its events show it. */
export function podView(pod: PodRow, queuePosition: number | null) {
  const config = JSON.parse(pod.config) as PodConfig;
  return {
    ...podListItem(pod, queuePosition),
    ticket_slug: pod.ticket_slug,
    channel_id: pod.channel_id,
    sandbox_type: config.sandbox_type,
    auto_close: config.auto_close,
    pod_timeout_minutes: config.pod_timeout_minutes,
    max_turns: config.max_turns,
    max_cost_usd: config.max_cost_usd ?? null,
    mode: pod.mode,
    alias: pod.alias,
    parent_pod_key: pod.parent_pod_key,
    env: config.env ?? {},
    network: { mode: config.network ?? 'restricted', allow: config.allow ?? [], refused: Number(pod.network_refused ?? 0) },
    runner_labels: storedLabels(pod.runner_labels),
    preset: pod.preset,
    limits: config.limits ?? limitsRequest({}),
    error_message: pod.error_message,
    exit_code: pod.exit_code,
    started_at: isoOrNull(pod.started_at),
    finished_at: isoOrNull(pod.finished_at),
    delivery: parseDelivery(pod.delivery),
  };
}
