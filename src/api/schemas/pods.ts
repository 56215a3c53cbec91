import { Type } from 'typebox';
import { POD_STATUSES } from '../../protocol/enums.ts';
import { deliveryField } from './deliveries.ts';
import { ActorOrNull, Id, Limit, Nullable, Offset, OrgParams, PresetName, RunnerLabels, Text, Timestamp } from './common.ts';

export const PodStatus = Type.Enum(POD_STATUSES);
export const PodKey = Text({ minLength: 1, maxLength: 64 });

const Count = (description: string) => Nullable(Type.Number({ minimum: 0, description }));

/**
 * What the pod's model calls used (docs/agents.md "The model relay"): the runner's relay's exact
 * sums, or what the agent reported for calls no relay saw; each null where neither says.
 */
export const Usage = Type.Object({
  input_tokens: Count('input tokens read neither from nor into a prompt cache'),
  output_tokens: Count('output tokens'),
  cache_read_tokens: Count('input tokens read from the prompt cache'),
  cache_write_tokens: Count('input tokens written to the prompt cache'),
  cost_usd: Count("cost in US dollars: the relay's priced sum, or as the agent computed it"),
  turns: Count('model turns of the agent loop (with the relay: its model calls)'),
});

/** The agent's results, on pods and on loop runs (their pod's). */
export const resultFields = {
  result: Nullable(Type.String({ description: "the agent's final message (at most 64 KiB), null when it gave none" })),
  session_id: Nullable(Type.String({ description: "the agent's session id, null when it reported none" })),
  usage: Usage,
};

const listFields = {
  key: Type.String(),
  status: PodStatus,
  agent_slug: Type.String(),
  runner_id: Nullable(Type.Integer({ description: 'null while the pod is queued' })),
  prompt: Type.String(),
  repository_id: Nullable(Type.Integer()),
  branch: Nullable(Type.String()),
  ...resultFields,
  queue_position: Nullable(
    Type.Integer({ minimum: 1, description: "while the pod is queued: its place in the organization's queue (1 = the next to get a runner slot); null otherwise" }),
  ),
  created_by: ActorOrNull,
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const PodListItem = Type.Object(listFields, { $id: 'PodListItem' });
export const Pod = Type.Object(
  {
    ...listFields,
    ticket_slug: Nullable(Type.String()),
    channel_id: Nullable(Type.Integer()),
    sandbox_type: Nullable(Type.String()),
    auto_close: Type.Boolean(),
    pod_timeout_minutes: Nullable(Type.Integer()),
    max_turns: Nullable(Type.Integer()),
    max_cost_usd: Nullable(
      Type.Number({ description: "`CONFIG max_cost_usd`: what its model calls may cost, checked by the runner's relay before each call (its spend is `usage.cost_usd`); null: no pod budget" }),
    ),
    mode: Type.Enum(['direct', 'autopilot']),
    alias: Nullable(Type.String()),
    parent_pod_key: Nullable(Type.String({ description: 'the pod that spawned this one with its pod token (docs/mcp.md); null for pods created with an API key or by a loop' })),
    env: Type.Record(Type.String(), Type.String(), { description: 'the agentfile\'s ENV variables' }),
    network: Type.Object(
      {
        mode: Type.Enum(['restricted', 'none', 'open'], { description: '`CONFIG network` (docs/runners.md "Network")' }),
        allow: Type.Array(Type.String(), { description: "the pod's ALLOW entries (host:port); the organization's network_allow, the agent's model hosts, the Drover server and the runner's --allow-host list apply too" }),
        refused: Type.Integer({ minimum: 0, description: 'connections its network walls refused so far' }),
      },
      { description: 'what the pod may reach beyond its sandbox' },
    ),
    runner_labels: Type.Array(Type.String(), { description: 'only runners carrying all of these could take it' }),
    preset: Nullable(Type.String({ description: 'the preset it was made from' })),
    limits: Type.Object(
      {
        memory_mb: Nullable(Type.Integer()),
        pids: Nullable(Type.Integer()),
        cpus: Nullable(Type.Number()),
        disk_mb: Nullable(Type.Integer()),
      },
      { description: "the agentfile's CONFIG memory_mb, pids, cpus and disk_mb; null: the runner's default (the runner lowers a value over its operator's maximum)" },
    ),
    error_message: Nullable(Type.String()),
    exit_code: Nullable(Type.Integer()),
    started_at: Nullable(Timestamp),
    finished_at: Nullable(Timestamp),
    ...deliveryField,
  },
  { $id: 'Pod' },
);
export const RunnerPodItem = Type.Object(
  { key: Type.String(), status: PodStatus, agent_slug: Type.String(), runner_id: Nullable(Type.Integer()), prompt: Type.String(), created_at: Timestamp },
  { $id: 'RunnerPodItem' },
);

export const CreatePodBody = Type.Object(
  {
    agent_slug: Type.Optional(Text({ minLength: 1, maxLength: 100, description: 'a built-in agent or a custom agent of the organization (400 otherwise); or give preset' })),
    preset: Type.Optional(PresetName),
    runner_labels: Type.Optional(RunnerLabels),
    agentfile_layer: Type.Optional(
      Text({ maxLength: 64 * 1024, description: 'PROMPT, MODE, CONFIG, REPO, BRANCH, CREDENTIAL, ENV and ALLOW directives, one a line; a bad line is 400 naming it' }),
    ),
    runner_id: Type.Optional(Id),
    ticket_slug: Type.Optional(Text({ minLength: 1, maxLength: 80, description: 'a ticket of the organization (400 otherwise)' })),
    alias: Type.Optional(Text({ maxLength: 100 })),
  },
  { additionalProperties: false },
);

export const CreatedPod = Type.Object({
  pod: Type.Object({ pod_key: Type.String(), status: PodStatus, agent_slug: Type.String(), created_at: Timestamp }),
});

export const ListPodsQuery = Type.Object(
  {
    status: Type.Optional(PodStatus),
    ticket_slug: Type.Optional(Text({ minLength: 1, maxLength: 80, description: "only that ticket's pods" })),
    repository_id: Type.Optional(Id),
    agent_slug: Type.Optional(Text({ minLength: 1, maxLength: 100 })),
    runner_id: Type.Optional(Id),
    created_after: Type.Optional(Type.String({ format: 'date-time', description: 'only pods created after this time' })),
    limit: Type.Optional(Limit(20, 100)),
    offset: Type.Optional(Offset),
  },
  { additionalProperties: false },
);
export const RunnerPodsQuery = Type.Object(
  { status: Type.Optional(PodStatus), limit: Type.Optional(Limit(50, 100)), offset: Type.Optional(Offset) },
  { additionalProperties: false },
);
export const OutputQuery = Type.Object(
  { tail_bytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 1024 * 1024 })) },
  { additionalProperties: false },
);
export const PodParams = Type.Object({ ...OrgParams.properties, key: PodKey });

export const Runner = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    status: Type.Enum(['online', 'offline', 'draining']),
    version: Type.String(),
    os: Type.String(),
    arch: Type.String(),
    labels: Type.Array(Type.String()),
    sandbox: Type.Union([Type.Enum(['bwrap', 'none']), Type.Null()], {
      description: 'How the runner sandboxes its pods: `bwrap` (bubblewrap) or `none` (agents run unsandboxed); null until it has connected.',
    }),
    isolation: Nullable(
      Type.Object(
        { network: Type.Boolean(), memory: Type.Boolean(), pids: Type.Boolean(), cpu: Type.Boolean(), disk: Type.Boolean() },
        {
          additionalProperties: false,
          description:
            'Which walls the runner puts around each pod (its self-test at start): network namespace with egress proxy, memory, pids and CPU limits (cgroups), disk watch. Null until a runner that reports it connects (older runners do not).',
        },
      ),
    ),
    agents: Type.Array(
      Type.Object(
        { slug: Type.String(), version: Nullable(Type.String({ description: "The program's `--version`, when it says one." })) },
        { additionalProperties: false },
      ),
      { description: 'The agents the runner advertises.' },
    ),
    pod_count: Type.Integer(),
    max_pods: Type.Integer(),
    last_heartbeat_at: Nullable(Timestamp),
    created_at: Timestamp,
  },
  { $id: 'Runner' },
);
export const RunnerParams = Type.Object({ ...OrgParams.properties, id: Id });
