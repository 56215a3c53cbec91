/**
 * The closed value sets the API, the store, the CLI, the MCP server and the dashboard all speak.
 * Each list is defined once here; the database types, the TypeBox schemas and the client-side
 * filters take it from here, so a new status cannot reach one side and not the other.
 */

export const POD_STATUSES = ['queued', 'initializing', 'running', 'completed', 'failed', 'terminated', 'orphaned'] as const;
export type PodStatus = (typeof POD_STATUSES)[number];

export const RUN_STATUSES = ['queued', 'pending', 'running', 'completed', 'failed', 'cancelled', 'timeout', 'skipped'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/**
 * "Active" is two sets, one per resource, each named for it: pods that can still be terminated
 * (waiting for a runner slot, `queued`, or holding one), and loop runs that have not ended.
 */
export const ACTIVE_POD_STATUSES: readonly PodStatus[] = ['queued', 'initializing', 'running', 'orphaned'];
export const ACTIVE_RUN_STATUSES: readonly RunStatus[] = ['queued', 'pending', 'running'];

export const TICKET_TYPES = ['feature', 'bug', 'task', 'chore', 'improvement'] as const;
export const TICKET_STATUSES = ['backlog', 'todo', 'in_progress', 'in_review', 'done'] as const;
export const TICKET_PRIORITIES = ['low', 'medium', 'high', 'urgent'] as const;
export type TicketType = (typeof TICKET_TYPES)[number];
export type TicketStatus = (typeof TICKET_STATUSES)[number];
export type TicketPriority = (typeof TICKET_PRIORITIES)[number];

export const EXECUTION_MODES = ['direct', 'autopilot'] as const;
export const SANDBOX_STRATEGIES = ['persistent', 'fresh'] as const;
export const CONCURRENCY_POLICIES = ['skip', 'queue', 'replace'] as const;

/**
 * Who sent a message: `api` (an API key), `agent` (a pod token, with its pod) or `system`
 * (the service itself, e.g. "pod p-… finished").
 */
export const SENDER_TYPES = ['api', 'user', 'agent', 'system'] as const;
export type SenderType = (typeof SENDER_TYPES)[number];

/**
 * Who made a change (docs/api.md "Actors and activity"): a person (through a key of theirs), a key
 * of no one, a pod, a loop (its schedule), the admin token, the server itself.
 */
export const ACTOR_TYPES = ['user', 'api_key', 'pod', 'loop', 'admin', 'system'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

/** The built-in agents (src/agents/builtin.ts describes each); the dashboard's loop form offers them. */
export const BUILTIN_AGENT_SLUGS = ['claude-code', 'codex', 'gemini-cli', 'aider', 'opencode', 'shell'] as const;
export type BuiltinAgentSlug = (typeof BUILTIN_AGENT_SLUGS)[number];
