import { Type } from 'typebox';
import { CONCURRENCY_POLICIES, EXECUTION_MODES, RUN_STATUSES, SANDBOX_STRATEGIES, SLUG_PATTERN } from '../../domain/loops/model.ts';
import { Id, Limit, Nullable, Offset, OrgParams, Timestamp } from './common.ts';
import { resultFields } from './pods.ts';

const AutopilotConfig = Type.Object(
  {
    max_iterations: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    iteration_timeout_sec: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400 })),
  },
  { additionalProperties: false },
);
const CallbackUrl = Type.String({ maxLength: 2048, pattern: '^https?://[^\\s]+$', description: 'http(s) URL' });
const AgentSlug = Type.String({ minLength: 1, maxLength: 100 });
/**
 * Template values by name. TypeBox turns a Record's key schema into `patternProperties: {"^.*$"}` and
 * drops its maxLength, so the limit on names is stated as `propertyNames`.
 */
const Variables = Type.Record(Type.String(), Type.Unknown(), { propertyNames: { maxLength: 200 } });

const fields = {
  description: Type.String({ maxLength: 10_000 }),
  agent_slug: AgentSlug,
  custom_agent_slug: AgentSlug,
  prompt_variables: Variables,
  repository_id: Id,
  runner_id: Id,
  branch_name: Type.String({ minLength: 1, maxLength: 200 }),
  execution_mode: Type.Enum(EXECUTION_MODES),
  cron_expression: Type.String({ minLength: 1, maxLength: 200 }),
  cron_timezone: Type.String({ minLength: 1, maxLength: 100 }),
  sandbox_strategy: Type.Enum(SANDBOX_STRATEGIES),
  session_persistence: Type.Boolean(),
  concurrency_policy: Type.Enum(CONCURRENCY_POLICIES),
  max_concurrent_runs: Type.Integer({ minimum: 1, maximum: 100 }),
  timeout_minutes: Type.Integer({ minimum: 1, maximum: 10_080 }),
  callback_url: CallbackUrl,
  autopilot_config: AutopilotConfig,
  agentfile_layer: Type.String({
    maxLength: 64 * 1024,
    description:
      "The agentfile every run's pod gets (CREDENTIAL, ENV, CONFIG; same grammar as a pod's). PROMPT, MODE, REPO, BRANCH and CONFIG max_iterations / iteration_timeout_sec are 400: the loop's own fields give them.",
  }),
};
const Name = Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' });
const Template = Type.String({ minLength: 1, maxLength: 100_000 });

export const CreateLoopBody = Type.Object(
  {
    name: Name,
    slug: Type.Optional(Type.String({ pattern: SLUG_PATTERN })),
    prompt_template: Template,
    description: Type.Optional(fields.description),
    agent_slug: Type.Optional(fields.agent_slug),
    custom_agent_slug: Type.Optional(fields.custom_agent_slug),
    prompt_variables: Type.Optional(fields.prompt_variables),
    repository_id: Type.Optional(fields.repository_id),
    runner_id: Type.Optional(fields.runner_id),
    branch_name: Type.Optional(fields.branch_name),
    execution_mode: Type.Optional(fields.execution_mode),
    cron_expression: Type.Optional(fields.cron_expression),
    cron_timezone: Type.Optional(fields.cron_timezone),
    sandbox_strategy: Type.Optional(fields.sandbox_strategy),
    session_persistence: Type.Optional(fields.session_persistence),
    concurrency_policy: Type.Optional(fields.concurrency_policy),
    max_concurrent_runs: Type.Optional(fields.max_concurrent_runs),
    timeout_minutes: Type.Optional(fields.timeout_minutes),
    callback_url: Type.Optional(fields.callback_url),
    autopilot_config: Type.Optional(fields.autopilot_config),
    agentfile_layer: Type.Optional(fields.agentfile_layer),
  },
  { additionalProperties: false },
);

/** PUT: every field optional; the optional references may be cleared with null. */
export const UpdateLoopBody = Type.Object(
  {
    name: Type.Optional(Name),
    prompt_template: Type.Optional(Template),
    description: Type.Optional(Nullable(fields.description)),
    agent_slug: Type.Optional(Nullable(AgentSlug)),
    custom_agent_slug: Type.Optional(Nullable(AgentSlug)),
    prompt_variables: Type.Optional(fields.prompt_variables),
    repository_id: Type.Optional(Nullable(Id)),
    runner_id: Type.Optional(Nullable(Id)),
    branch_name: Type.Optional(Nullable(fields.branch_name)),
    execution_mode: Type.Optional(fields.execution_mode),
    cron_expression: Type.Optional(Nullable(fields.cron_expression)),
    cron_timezone: Type.Optional(fields.cron_timezone),
    sandbox_strategy: Type.Optional(fields.sandbox_strategy),
    session_persistence: Type.Optional(fields.session_persistence),
    concurrency_policy: Type.Optional(fields.concurrency_policy),
    max_concurrent_runs: Type.Optional(fields.max_concurrent_runs),
    timeout_minutes: Type.Optional(fields.timeout_minutes),
    callback_url: Type.Optional(Nullable(CallbackUrl)),
    autopilot_config: Type.Optional(AutopilotConfig),
    agentfile_layer: Type.Optional(Nullable(fields.agentfile_layer)),
  },
  { additionalProperties: false },
);

export const TriggerBody = Type.Object({ variables: Type.Optional(Variables) }, { additionalProperties: false });

/** Enable, disable, cancel, delete: no body, or an empty object (a field sent there is a mistake, not ignored). */
export const EmptyBody = Type.Object({}, { additionalProperties: false, description: 'no body, or {}' });

export const Loop = Type.Object(
  {
    id: Type.Integer(),
    slug: Type.String(),
    name: Type.String(),
    description: Nullable(Type.String()),
    agent_slug: Nullable(Type.String()),
    custom_agent_slug: Nullable(Type.String()),
    prompt_template: Type.String(),
    prompt_variables: Type.Record(Type.String(), Type.Unknown()),
    repository_id: Nullable(Type.Integer()),
    runner_id: Nullable(Type.Integer()),
    branch_name: Nullable(Type.String()),
    execution_mode: Type.String(),
    cron_expression: Nullable(Type.String()),
    cron_timezone: Type.String(),
    sandbox_strategy: Type.String(),
    session_persistence: Type.Boolean(),
    concurrency_policy: Type.String(),
    max_concurrent_runs: Type.Integer(),
    timeout_minutes: Type.Integer(),
    callback_url: Nullable(Type.String()),
    callback_secret: Type.Optional(Type.String({ description: 'only for keys holding loops:write' })),
    autopilot_config: Type.Object({ max_iterations: Type.Integer(), iteration_timeout_sec: Type.Integer() }),
    agentfile_layer: Nullable(Type.String({ description: "the agentfile every run's pod gets; null when none" })),
    status: Type.Enum(['enabled', 'disabled']),
    next_run_at: Nullable(Timestamp),
    last_run_at: Nullable(Timestamp),
    total_runs: Type.Integer(),
    successful_runs: Type.Integer(),
    failed_runs: Type.Integer(),
    active_run_count: Type.Integer(),
    total_cost_usd: Nullable(Type.Number({ description: 'the sum of the costs its runs\' agents reported; null when none reported one' })),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Loop' },
);

export const Run = Type.Object(
  {
    id: Type.Integer(),
    loop_id: Type.Integer(),
    loop_slug: Type.String(),
    run_number: Type.Integer(),
    status: Type.Enum(RUN_STATUSES as string[]),
    trigger_type: Type.Enum(['manual', 'cron']),
    variables: Type.Record(Type.String(), Type.Unknown()),
    resolved_prompt: Nullable(Type.String()),
    pod_key: Nullable(Type.String()),
    runner_id: Nullable(Type.Integer()),
    scheduled_at: Nullable(Timestamp),
    started_at: Nullable(Timestamp),
    finished_at: Nullable(Timestamp),
    duration_sec: Nullable(Type.Number()),
    error_message: Nullable(Type.String()),
    ...resultFields,
    callback_status: Type.Enum(['none', 'pending', 'delivered', 'failed']),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Run' },
);

export const LoopParams = Type.Object({ ...OrgParams.properties, slug: Type.String({ minLength: 1, maxLength: 63 }) });
export const RunParams = Type.Object({ ...LoopParams.properties, run_id: Id });
export const ListLoopsQuery = Type.Object(
  // No defaults here: without limit and offset the list holds every loop (contract §3, List); a
  // default would be filled in by the validator and cut the list at 100.
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, description: 'no default (all loops); values above 100 are clamped' })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'default 0' })),
  },
  { additionalProperties: false },
);
export const ListRunsQuery = Type.Object(
  { status: Type.Optional(Type.Enum(RUN_STATUSES as string[])), limit: Type.Optional(Limit(20, 100)), offset: Type.Optional(Offset) },
  { additionalProperties: false },
);
