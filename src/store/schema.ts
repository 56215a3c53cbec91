import type { SenderType } from '../protocol/enums.ts';
import type { CustomAgentsTable, PodOutputChunksTable, PodPatchesTable, PodsTable, RunnerTokensTable, RunnersTable, WorkspaceRemovalsTable } from './schema-runners.ts';
import type { LoopRunsTable, LoopsTable, WebhookAttemptsTable, WebhookDeliveriesTable } from './schema-loops.ts';
import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

/**
 * Table shapes, shared by both dialects. Times are epoch milliseconds (bigint), booleans are 0/1,
 * and JSON values are text, so that one query layer serves SQLite and PostgreSQL alike.
 */
export interface OrgsTable {
  id: Generated<number>;
  slug: string;
  name: string;
  ticket_prefix: string;
  created_at: number;
  /**
   * JSON array of canonical `host:port` / `*.domain:port` entries (migration 0016). Not part of
   * OrgRow (an organization as a credential carries it needs none): read by orgs.ts's own function.
   */
  network_allow: Generated<string>;
}

export interface ApiKeysTable {
  id: Generated<number>;
  org_id: number;
  name: string;
  prefix: string;
  key_hash: string;
  scopes: string;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
  /** The person the key belongs to (migration 0020); null: no one. */
  user_id: number | null;
  created_at: number;
}

export interface UsersTable {
  id: Generated<number>;
  org_id: number;
  name: string;
  email: string;
  created_at: number;
}

export interface RepositoriesTable {
  id: Generated<number>;
  org_id: number;
  name: string;
  full_name: string;
  provider: string;
  url: string;
  default_branch: string;
  ticket_prefix: string | null;
  api_base_url: string | null;
  token_encrypted: string | null;
  created_at: number;
}

export interface TicketsTable {
  id: Generated<number>;
  org_id: number;
  slug: string;
  type: string;
  title: string;
  description: string | null;
  status: string;
  priority: string;
  /** urgent = 3 … low = 0, so the board can order by an index. */
  priority_rank: number;
  assignee_id: number | null;
  repository_id: number | null;
  labels: string;
  parent_id: number | null;
  /** Actors as JSON (migration 0020; see domain/activity/actor.ts); null on older tickets. */
  created_by: string | null;
  updated_by: string | null;
  created_at: number;
  updated_at: number;
}

export interface TicketLabelsTable {
  ticket_id: number;
  org_id: number;
  label: string;
}

export interface TicketSequencesTable {
  org_id: number;
  prefix: string;
  last_number: number;
}

/** Ticket totals per (org, repository or 0, status), kept in the same transaction as the tickets. */
export interface TicketCountsTable {
  org_id: number;
  repo_key: number;
  status: string;
  n: number;
}

/** Per-organization overrides of the server-wide quotas (migration 0011); null: the default. */
export interface OrgQuotasTable {
  org_id: number;
  max_active_pods: number | null;
  max_queued_pods: number | null;
  max_loops: number | null;
  pod_output_bytes_per_sec: number | null;
  /** US dollars per calendar month (UTC) of model calls (migration 0018); null: none. */
  max_cost_usd_per_month: number | null;
  updated_at: number;
}

/** The ledger of model calls the runners' relays passed (migration 0018). */
export interface ModelCallsTable {
  id: string;
  org_id: number;
  pod_id: number;
  provider: string;
  model: string | null;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number | null;
  created_at: number;
}

export interface TicketVersionsTable {
  org_id: number;
  version: number;
}

export interface IdempotencyKeysTable {
  api_key_id: number;
  key: string;
  method_path: string;
  request_hash: string;
  state: 'in_progress' | 'done';
  status_code: number | null;
  response_body: string | null;
  created_at: number;
}

export interface ChannelsTable {
  id: Generated<number>;
  org_id: number;
  name: string;
  /** `name` lower-cased; unique per org. */
  name_key: string;
  description: string | null;
  repository_id: number | null;
  /** The ticket's canonical (upper-case) slug. */
  ticket_slug: string | null;
  document: string | null;
  archived: Generated<number>;
  created_at: number;
  updated_at: number;
}

export interface ChannelMessagesTable {
  id: Generated<number>;
  org_id: number;
  channel_id: number;
  content: string;
  sender_type: SenderType;
  pod_key: string | null;
  /** The sender as an actor, JSON (migration 0020); null on older messages. */
  sender: string | null;
  created_at: number;
}

/** Hits of one rate-limit bucket in one fixed window, summed over replicas (PostgreSQL only). */
export interface RateLimitHitsTable {
  bucket: string;
  window_start: number;
  expires_at: number;
  hits: number;
}

/** The event log (docs/events.md); see migrations/0014_events.ts. */
export interface EventsTable {
  id: Generated<number>;
  org_id: number;
  type: string;
  channel_id: number | null;
  pod_key: string | null;
  loop_slug: string | null;
  ticket_slug: string | null;
  /** The resource as the API shows it, as JSON. */
  payload: string;
  /** Who made the change, JSON `{type, id, name}` (migration 0020), and its type for the activity filter. */
  actor: string | null;
  actor_type: string | null;
  created_at: number;
}

/** A named agent and agentfile lines pods and loops start from (migration 0020). */
export interface PresetsTable {
  id: Generated<number>;
  org_id: number;
  name: string;
  description: string | null;
  agent_slug: string;
  agentfile_layer: string | null;
  created_at: number;
  updated_at: number;
}

export interface EventHeadsTable {
  org_id: number;
  last_event_id: number;
  pruned_through: Generated<number>;
}

export interface Database {
  orgs: OrgsTable;
  api_keys: ApiKeysTable;
  users: UsersTable;
  repositories: RepositoriesTable;
  tickets: TicketsTable;
  ticket_labels: TicketLabelsTable;
  ticket_sequences: TicketSequencesTable;
  ticket_counts: TicketCountsTable;
  ticket_versions: TicketVersionsTable;
  idempotency_keys: IdempotencyKeysTable;
  channels: ChannelsTable;
  channel_messages: ChannelMessagesTable;
  runner_tokens: RunnerTokensTable;
  runners: RunnersTable;
  custom_agents: CustomAgentsTable;
  pods: PodsTable;
  pod_output_chunks: PodOutputChunksTable;
  pod_patches: PodPatchesTable;
  workspace_removals: WorkspaceRemovalsTable;
  loops: LoopsTable;
  loop_runs: LoopRunsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  rate_limit_hits: RateLimitHitsTable;
  webhook_attempts: WebhookAttemptsTable;
  org_quotas: OrgQuotasTable;
  events: EventsTable;
  event_heads: EventHeadsTable;
  presets: PresetsTable;
  model_calls: ModelCallsTable;
}

export type OrgRow = Omit<Selectable<OrgsTable>, 'network_allow'>;
/** An organization with every column (admin views). */
export type OrgRecord = Selectable<OrgsTable>;
export type EventRow = Selectable<EventsTable>;
export type PresetRow = Selectable<PresetsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type UserRow = Selectable<UsersTable>;
export type RepositoryRow = Selectable<RepositoriesTable>;
export type TicketRow = Selectable<TicketsTable>;
export type NewTicket = Insertable<TicketsTable>;
export type TicketUpdate = Updateable<TicketsTable>;
export type ChannelRow = Selectable<ChannelsTable>;
export type NewChannel = Insertable<ChannelsTable>;
export type ChannelUpdate = Updateable<ChannelsTable>;
export type ChannelMessageRow = Selectable<ChannelMessagesTable>;
export type NewChannelMessage = Insertable<ChannelMessagesTable>;
