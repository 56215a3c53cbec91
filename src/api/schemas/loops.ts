import { Type } from 'typebox';
import { MAX_VARIABLES_DEPTH, SLUG_PATTERN } from '../../domain/loops/model.ts';
import { CONCURRENCY_POLICIES, EXECUTION_MODES, RUN_STATUSES, SANDBOX_STRATEGIES } from '../../protocol/enums.ts';
import { CRON_PATTERN, TIMEZONE_PATTERN, expressionProblem, timezoneProblem } from '../../domain/loops/schedule.ts';
import { ActorOrNull, Id, Limit, NO_NUL, PresetName, RunnerLabels, NonBlank, Nullable, Offset, OrgParams, Text, Timestamp, explainedPattern } from './common.ts';
import { resultFields } from './pods.ts';
import { deliveryField } from './deliveries.ts';

const AutopilotConfig = Type.Object(
  {
    max_iterations: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    iteration_timeout_sec: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400 })),
  },
  { additionalProperties: false },
);
const CallbackUrl = Type.String({
  maxLength: 2048,
  pattern: explainedPattern('^https?://[^\\s\\u0000]+$', 'must be an http(s) URL without whitespace'),
  description:
    'http(s) URL with a host, as a URL parser reads it (`http://[`, `http://%zz` or `http://a:b:c` are 400). Addresses that resolve to loopback, private, link-local or metadata ranges are refused (400) unless the server allows them.',
});
const AgentSlug = Text({ minLength: 1, maxLength: 100 });
/**
 * Template values by name: any JSON values (see JsonValue), nested at most MAX_VARIABLES_DEPTH
 * levels, names up to 200 characters.
 */
const Variables = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  propertyNames: { maxLength: 200, pattern: NO_NUL },
  additionalProperties: { $ref: 'JsonValue' },
  description: `values by placeholder name; values that are not strings are rendered as JSON. Objects and arrays may nest at most ${MAX_VARIABLES_DEPTH} levels (400 beyond).`,
});
const AGENT_RULE =
  'Give agent_slug (a built-in agent) or custom_agent_slug (a custom agent of the organization), not both; ' +
  "with neither, the server's default agent. An unknown slug is 400.";
const CronExpression = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: explainedPattern(CRON_PATTERN, (value) => expressionProblem(String(value), 'UTC') ?? 'must have five fields (minute hour day-of-month month day-of-week)'),
  description:
    'Five fields: minute hour day-of-month month day-of-week (lists, ranges, steps, names; L, W, # and ? as croner reads them). ' +
    'Six- and seven-field forms and nicknames such as @hourly are refused; so is an expression that matches no date (400 with the reason).',
});
const CronTimezone = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: explainedPattern(TIMEZONE_PATTERN, (value) => timezoneProblem(String(value)) ?? 'must be an IANA time zone name'),
  description:
    "An IANA time zone name (e.g. UTC, Europe/Berlin), matched ignoring case; it must exist in the server's time zone data (400 otherwise). Offsets such as +01:00 are refused.",
});

const fields = {
  description: Text({ maxLength: 10_000 }),
  agent_slug: AgentSlug,
  custom_agent_slug: AgentSlug,
  prompt_variables: Variables,
  repository_id: Id,
  runner_id: Id,
  branch_name: Text({ minLength: 1, maxLength: 200, description: 'A git branch name, checked like an agentfile BRANCH (no whitespace, none of ~ ^ : ? * [ \\, no .., not starting with -): 400 otherwise' }),
  execution_mode: Type.Enum(EXECUTION_MODES),
  cron_expression: CronExpression,
  cron_timezone: CronTimezone,
  sandbox_strategy: Type.Enum(SANDBOX_STRATEGIES),
  session_persistence: Type.Boolean(),
  concurrency_policy: Type.Enum(CONCURRENCY_POLICIES),
  max_concurrent_runs: Type.Integer({ minimum: 1, maximum: 100 }),
  timeout_minutes: Type.Integer({ minimum: 1, maximum: 10_080 }),
  callback_url: CallbackUrl,
  autopilot_config: AutopilotConfig,
  // Half a pod's: without a PROMPT a layer is a few lines, and the loop's body must fit in 1 MiB.
  agentfile_layer: Text({
    maxLength: 32 * 1024,
    description:
      "The agentfile every run's pod gets (CREDENTIAL, ENV, CONFIG; same grammar as a pod's). PROMPT, MODE, REPO, BRANCH and CONFIG max_iterations / iteration_timeout_sec are 400: the loop's own fields give them.",
  }),
  budget_usd_per_day: Type.Number({
    minimum: 0,
    maximum: 1e9,
    description: 'US dollars a day (UTC) its runs may spend on model calls: a run that would start over it is skipped; each run\'s pod is held to what is left',
  }),
};
const Name = NonBlank({ maxLength: 255 });
const Template = Text({
  minLength: 1,
  maxLength: 100_000,
  description: 'The prompt, with {{name}} placeholders (spaces inside the braces allowed) filled from prompt_variables and trigger variables',
});

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
    runner_labels: Type.Optional(RunnerLabels),
    preset: Type.Optional(PresetName),
    budget_usd_per_day: Type.Optional(Nullable(fields.budget_usd_per_day)),
  },
  { additionalProperties: false, not: { required: ['agent_slug', 'custom_agent_slug'] }, description: AGENT_RULE },
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
    runner_labels: Type.Optional(RunnerLabels),
    preset: Type.Optional(Nullable(PresetName)),
    budget_usd_per_day: Type.Optional(Nullable(fields.budget_usd_per_day)),
  },
  {
    additionalProperties: false,
    // Both given as slugs is the one combination refused; a null clears the other.
    not: { required: ['agent_slug', 'custom_agent_slug'], properties: { agent_slug: { type: 'string' }, custom_agent_slug: { type: 'string' } } },
    description: `${AGENT_RULE} Setting one clears the other.`,
  },
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
    execution_mode: Type.Enum(EXECUTION_MODES),
    cron_expression: Nullable(Type.String()),
    cron_timezone: Type.String(),
    sandbox_strategy: Type.Enum(SANDBOX_STRATEGIES),
    session_persistence: Type.Boolean(),
    concurrency_policy: Type.Enum(CONCURRENCY_POLICIES),
    max_concurrent_runs: Type.Integer(),
    timeout_minutes: Type.Integer(),
    callback_url: Nullable(Type.String()),
    callback_secret: Type.Optional(Type.String({ description: 'only for keys holding loops:write' })),
    autopilot_config: Type.Object({ max_iterations: Type.Integer(), iteration_timeout_sec: Type.Integer() }),
    agentfile_layer: Nullable(Type.String({ description: "the agentfile every run's pod gets; null when none" })),
    runner_labels: Type.Array(Type.String(), { description: 'only runners carrying all of these run its pods' }),
    preset: Nullable(Type.String({ description: "the preset its runs start from (its agent and lines, the loop's own lines on top)" })),
    budget_usd_per_day: Nullable(Type.Number({ description: 'US dollars a day its runs may spend; null: no budget' })),
    spent_usd_today: Type.Number({ description: 'what its runs spent on model calls today (UTC)' }),
    status: Type.Enum(['enabled', 'disabled']),
    next_run_at: Nullable(Timestamp),
    last_run_at: Nullable(Timestamp),
    total_runs: Type.Integer(),
    successful_runs: Type.Integer(),
    failed_runs: Type.Integer({ description: 'runs that failed or timed out' }),
    cancelled_runs: Type.Integer({ description: 'runs cancelled before they ended' }),
    active_run_count: Type.Integer(),
    total_cost_usd: Nullable(Type.Number({ description: "the sum of its runs' costs (the relay's priced sums, or as their agents reported them); null when none has one" })),
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
    status: Type.Enum(RUN_STATUSES),
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
    ...deliveryField,
    callback_status: Type.Enum(['none', 'pending', 'delivered', 'failed']),
    triggered_by: ActorOrNull,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Run' },
);

export const LoopParams = Type.Object({ ...OrgParams.properties, slug: Text({ minLength: 1, maxLength: 63 }) });
export const RunParams = Type.Object({ ...LoopParams.properties, run_id: Id });
export const ListLoopsQuery = Type.Object(
  // No defaults here: without limit and offset the list holds every loop (docs/api.md "Paging"); a
  // default would be filled in by the validator and cut the list at 100.
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, description: 'no default (all loops); values above 100 are clamped' })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'default 0' })),
  },
  { additionalProperties: false },
);
export const ListRunsQuery = Type.Object(
  { status: Type.Optional(Type.Enum(RUN_STATUSES)), limit: Type.Optional(Limit(20, 100)), offset: Type.Optional(Offset) },
  { additionalProperties: false },
);

/** The body of the `loop.run.finished` callback (docs/api.md), as src/domain/loops/callbacks.ts sends it. */
export const LoopRunFinishedEvent = Type.Object(
  {
    type: Type.Literal('loop.run.finished'),
    timestamp: Timestamp,
    data: Type.Object({
      loop: Type.Object({ id: Type.Integer(), slug: Type.String(), name: Type.String() }),
      run: Type.Ref('Run'),
    }),
  },
  { $id: 'LoopRunFinishedEvent' },
);
/** One callback delivery of a run's event (the first, or a redelivery) with its attempts. */
export const WebhookDelivery = Type.Object(
  {
    id: Type.Integer(),
    webhook_id: Type.String({ description: 'the `webhook-id` header: the same for the event and its redeliveries' }),
    url: Type.String(),
    status: Type.Enum(['pending', 'delivered', 'failed']),
    attempt_count: Type.Integer(),
    next_attempt_at: Nullable(Timestamp),
    created_at: Timestamp,
    updated_at: Timestamp,
    attempts: Type.Array(
      Type.Object({
        attempt: Type.Integer({ description: '1 for the first attempt of this delivery' }),
        attempted_at: Timestamp,
        status_code: Nullable(Type.Integer()),
        error: Nullable(Type.String({ description: 'why it did not count as delivered (HTTP status, timeout, refused address, …); null on a 2xx' })),
        duration_ms: Type.Integer(),
      }),
      { description: 'newest first' },
    ),
  },
  { $id: 'WebhookDelivery' },
);
export const ListDeliveriesQuery = Type.Object({ limit: Type.Optional(Limit(20, 100)), offset: Type.Optional(Offset) }, { additionalProperties: false });
