import type { Generated, Selectable } from 'kysely';

import type { RunStatus } from '../protocol/enums.ts';

export type { RunStatus };

export interface LoopsTable {
  id: Generated<number>;
  org_id: number;
  slug: string;
  name: string;
  description: string | null;
  agent_slug: string | null;
  custom_agent_slug: string | null;
  prompt_template: string;
  prompt_variables: string;
  repository_id: number | null;
  runner_id: number | null;
  branch_name: string | null;
  execution_mode: 'direct' | 'autopilot';
  cron_expression: string | null;
  cron_timezone: string;
  sandbox_strategy: 'persistent' | 'fresh';
  session_persistence: number;
  concurrency_policy: 'skip' | 'queue' | 'replace';
  max_concurrent_runs: number;
  timeout_minutes: number;
  callback_url: string | null;
  callback_secret_encrypted: string;
  autopilot_config: string;
  /** The agentfile every run's pod gets (migration 0013); null: none. */
  agentfile_layer: string | null;
  /** US dollars a day (UTC) the loop's runs may spend on model calls (migration 0018); null: none. */
  budget_usd_per_day: number | null;
  status: 'enabled' | 'disabled';
  next_run_at: number | null;
  run_counter: number;
  sandbox_runner_id: number | null;
  /** The session of the loop's latest `completed` run that reported one: what the next run resumes. */
  last_session_id: string | null;
  /** Labels its runs' runner must carry, JSON array (migration 0020); null: any runner. */
  runner_labels: string | null;
  /** The preset it was made from (migration 0020). */
  preset: string | null;
  created_at: number;
  updated_at: number;
}

export interface LoopRunsTable {
  id: Generated<number>;
  org_id: number;
  loop_id: number;
  run_number: number;
  status: RunStatus;
  trigger_type: 'manual' | 'cron';
  variables: string;
  resolved_prompt: string | null;
  pod_key: string | null;
  runner_id: number | null;
  scheduled_at: number | null;
  started_at: number | null;
  deadline_at: number | null;
  finished_at: number | null;
  error_message: string | null;
  callback_status: 'none' | 'pending' | 'delivered' | 'failed';
  /** Who started the run, JSON actor (migration 0020): a person or key, the loop's cron slot, a pod. */
  triggered_by: string | null;
  /** Until when one starter is launching the run's pod (migration 0022); null when no start is in flight. */
  start_claimed_until: number | null;
  created_at: number;
  updated_at: number;
}

export type LoopRow = Selectable<LoopsTable>;
export type LoopRunRow = Selectable<LoopRunsTable>;

/** The webhook outbox (migration 0006): one row per event, attempted until delivered or given up. */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  org_id: number;
  event_id: string;
  url: string;
  secret_encrypted: string;
  payload: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: number;
  last_status_code: number | null;
  last_error: string | null;
  subject_type: string;
  subject_id: number;
  created_at: number;
  updated_at: number;
}

export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;

/** One attempt of a webhook delivery (migration 0011). */
export interface WebhookAttemptsTable {
  id: Generated<number>;
  delivery_id: number;
  attempt: number;
  attempted_at: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

export type WebhookAttemptRow = Selectable<WebhookAttemptsTable>;
