import crypto from 'node:crypto';
import { Ajv, type ValidateFunction } from 'ajv';
import { Type, type Static, type TSchema } from 'typebox';
import { DeliverSpec, DeliveryReport, MAX_PATCH_PARTS } from './delivery.ts';

/**
 * The runner link: JSON text frames over one WebSocket dialled by the runner. Every message is
 * defined once here and validated on both ends. Version 2: `hello` says how the runner sandboxes
 * its pods and which version of each agent it has.
 */
export const PROTOCOL_VERSION = 2;
export const HEARTBEAT_INTERVAL_MS = 10_000;

const message = <T extends string, P extends Record<string, TSchema>>(type: T, properties: P) =>
  Type.Object({ v: Type.Literal(PROTOCOL_VERSION), type: Type.Literal(type), ...properties }, { additionalProperties: false });

/** What a runner has: pods it is preparing or running. */
export const PodReport = Type.Object(
  { key: Type.String({ maxLength: 64 }), state: Type.Enum(['preparing', 'running']) },
  { additionalProperties: false },
);

const Count = Type.Union([Type.Number({ minimum: 0 }), Type.Null()]);

/** What the agent reported using (docs/agents.md "Results"); each null where it reports nothing. */
export const PodUsage = Type.Object(
  {
    input_tokens: Count,
    output_tokens: Count,
    cache_read_tokens: Count,
    cache_write_tokens: Count,
    cost_usd: Count,
    turns: Count,
  },
  { additionalProperties: false },
);

export const PodOutcome = Type.Object(
  {
    key: Type.String({ maxLength: 64 }),
    outcome: Type.Enum(['completed', 'failed', 'terminated']),
    exit_code: Type.Union([Type.Integer(), Type.Null()]),
    error_message: Type.Union([Type.String({ maxLength: 4000 }), Type.Null()]),
    session_id: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]),
    // Optional: a runner of an earlier version reports none of them.
    /** The agent's final message (at most 64 KiB of UTF-8, i.e. at most 65,536 characters). */
    result: Type.Optional(Type.Union([Type.String({ maxLength: 65_536 }), Type.Null()])),
    usage: Type.Optional(Type.Union([PodUsage, Type.Null()])),
    /** Connections its egress proxy refused (docs/runners.md "Network"); absent from earlier runners. */
    network_refused: Type.Optional(Type.Integer({ minimum: 0 })),
    /** What became of the pod's work (a pod with a repository); null or absent: nothing delivered. */
    delivery: Type.Optional(Type.Union([DeliveryReport, Type.Null()])),
  },
  { additionalProperties: false },
);

/** What a runner enforces around each pod, each true only when its self-test passed. */
export const Isolation = Type.Object(
  { network: Type.Boolean(), memory: Type.Boolean(), pids: Type.Boolean(), cpu: Type.Boolean(), disk: Type.Boolean() },
  { additionalProperties: false },
);
export type Isolation = Static<typeof Isolation>;

export const RunnerInfo = {
  version: Type.String({ maxLength: 100 }),
  os: Type.String({ maxLength: 100 }),
  arch: Type.String({ maxLength: 100 }),
  labels: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50 }),
  max_pods: Type.Integer({ minimum: 1, maximum: 1000 }),
  agents: Type.Array(
    Type.Object(
      { slug: Type.String({ maxLength: 100 }), version: Type.Union([Type.String({ maxLength: 100 }), Type.Null()]) },
      { additionalProperties: false },
    ),
    { maxItems: 200 },
  ),
  sandbox: Type.Enum(['bwrap', 'none']),
  /** Which walls the runner can put around a pod (docs/runners.md "Isolation"); absent from older runners. */
  isolation: Type.Optional(Isolation),
};

/** One model call the runner's relay passed (docs/agents.md "The model relay"), reported as it ends. */
export const ModelCall = Type.Object(
  {
    id: Type.String({ pattern: '^[0-9a-f-]{36}$' }),
    pod_key: Type.String({ maxLength: 64 }),
    provider: Type.Enum(['anthropic', 'openai', 'gemini']),
    model: Type.Union([Type.String({ maxLength: 200 }), Type.Null()]),
    input_tokens: Type.Number({ minimum: 0 }),
    output_tokens: Type.Number({ minimum: 0 }),
    cache_read_tokens: Type.Number({ minimum: 0 }),
    cache_write_tokens: Type.Number({ minimum: 0 }),
    cost_usd: Type.Union([Type.Number({ minimum: 0 }), Type.Null()]),
    at: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

/** A spending limit the runner's relay holds a pod to; `spent_usd` was spent before the pod started. */
export const PodBudget = Type.Object(
  { name: Type.String(), limit_usd: Type.Number({ minimum: 0 }), spent_usd: Type.Number({ minimum: 0 }) },
  { additionalProperties: false },
);

export const RunnerMessage = Type.Union([
  message('hello', { ...RunnerInfo, draining: Type.Boolean(), pods: Type.Array(PodReport), finished: Type.Array(PodOutcome) }),
  message('heartbeat', { draining: Type.Boolean(), pods: Type.Array(PodReport) }),
  message('pod_started', { key: Type.String({ maxLength: 64 }) }),
  // No maxLength on `data`: the link's maxPayload (2 MiB) bounds it already, and checking a
  // maxLength walks every character of every chunk (half a second of a 200 MiB flood's CPU).
  message('pod_output', { key: Type.String({ maxLength: 64 }), data: Type.String() }),
  message('pod_exited', { result: PodOutcome }),
  /** A running pod's count of refused connections so far (at most one a second per pod). */
  message('pod_network', { key: Type.String({ maxLength: 64 }), refused: Type.Integer({ minimum: 0 }) }),
  message('model_call', { call: ModelCall }),
  /** The runner has stored the credential of `rotate_credential` (its SHA-256, first 16 hex digits). */
  message('credential_stored', { fingerprint: Type.String({ pattern: '^[0-9a-f]{16}$' }) }),
  /**
   * Part of a patch too large for `pod_exited` (docs/agents.md "Getting the work back"): sent
   * before that pod's `pod_exited`, in order; the server keeps the patch once the last part came.
   * No maxLength on `data`, as for pod_output: the link's maxPayload bounds it.
   */
  message('pod_patch', { key: Type.String({ maxLength: 64 }), part: Type.Integer({ minimum: 0 }), parts: Type.Integer({ minimum: 1, maximum: MAX_PATCH_PARTS }), data: Type.String() }),
  /**
   * What became of a `remove_workspace`: `removed` once its work is delivered and the directory
   * gone; false (with `error`) when the delivery failed, the workspace kept for the next request.
   */
  message('workspace_removed', {
    persistent_key: Type.String({ maxLength: 64 }),
    removed: Type.Boolean(),
    error: Type.Union([Type.String({ maxLength: 2000 }), Type.Null()]),
    delivery: Type.Union([DeliveryReport, Type.Null()]),
  }),
]);

const OptionalNumber = Type.Union([Type.Number(), Type.Null()]);
/** A pod's `CONFIG memory_mb | pids | cpus | disk_mb`; null: not asked for (the runner's default). */
export const PodLimits = Type.Object({ memory_mb: OptionalNumber, pids: OptionalNumber, cpus: OptionalNumber, disk_mb: OptionalNumber });
export type PodLimitsRequest = Static<typeof PodLimits>;

export const PodSpec = Type.Object(
  {
    key: Type.String(),
    agent: Type.Object({
      slug: Type.String(),
      custom: Type.Union([
        Type.Object({ command: Type.String(), args: Type.Array(Type.String()), prompt_position: Type.Enum(['last', 'first', 'stdin', 'env']) }),
        Type.Null(),
      ]),
    }),
    prompt: Type.String(),
    mode: Type.Enum(['direct', 'autopilot']),
    model: Type.Union([Type.String(), Type.Null()]),
    max_turns: Type.Union([Type.Integer(), Type.Null()]),
    permission_mode: Type.Union([Type.String(), Type.Null()]),
    /** `CONFIG mcp`: wire the `drover` MCP server into the agent (optional: a server of an earlier version sends none, meaning true). */
    mcp: Type.Optional(Type.Boolean()),
    pod_timeout_minutes: Type.Union([Type.Integer(), Type.Null()]),
    auto_close: Type.Boolean(),
    max_iterations: Type.Integer(),
    iteration_timeout_sec: Type.Integer(),
    repo: Type.Union([Type.Object({ url: Type.String(), token: Type.Union([Type.String(), Type.Null()]), default_branch: Type.String() }), Type.Null()]),
    branch: Type.Union([Type.String(), Type.Null()]),
    deliver: Type.Optional(DeliverSpec),
    credentials: Type.Array(Type.String()),
    /** The agentfile's `ENV` variables (optional: a server of an earlier version sends none). */
    agent_env: Type.Optional(Type.Record(Type.String(), Type.String())),
    /** `CONFIG memory_mb | pids | cpus | disk_mb`, null: the runner's default (optional: an earlier server sends none). */
    limits: Type.Optional(PodLimits),
    /** Budgets the relay checks before each model call (optional: a server of an earlier version sends none). */
    budgets: Type.Optional(Type.Array(PodBudget)),
    persistent_key: Type.Union([Type.String(), Type.Null()]),
    keep_workspace: Type.Boolean(),
    resume_session_id: Type.Union([Type.String(), Type.Null()]),
    /**
     * A run of a cron slot prepared ahead (docs/runners.md "Pods prepared ahead of their slot"):
     * the agent starts this many milliseconds after the runner received the message, its sandbox
     * built meanwhile. Relative, computed as the message is sent, so a runner's skewed clock cannot
     * start it early. Absent or 0: start at once (and absent from a server of an earlier version).
     */
    start_in_ms: Type.Optional(Type.Integer({ minimum: 0 })),
    /**
     * With `start_in_ms`: the server's name for the slot (its time, which the runner never reads as
     * one). Each start of a slot bounds its time from below; the runner lets the slot's pods go at
     * the earliest bound any of them gave, together.
     */
    slot_key: Type.Optional(Type.String({ maxLength: 64 })),
    /**
     * `CONFIG network` and what the organization and the pod's ALLOW lines allow (docs/runners.md
     * "Network"); optional: a server of an earlier version sends none (restricted, nothing added).
     */
    network: Type.Optional(Type.Object({ mode: Type.Enum(['restricted', 'none', 'open']), allow: Type.Array(Type.String()) })),
    env: Type.Object({
      api_url: Type.String(),
      org: Type.String(),
      pod_token: Type.String(),
      channel_id: Type.Union([Type.Integer(), Type.Null()]),
      ticket_slug: Type.Union([Type.String(), Type.Null()]),
    }),
  },
  { additionalProperties: false },
);

export const ServerMessage = Type.Union([
  message('welcome', { runner_id: Type.Integer(), heartbeat_interval_ms: Type.Integer() }),
  message('start_pod', { pod: PodSpec }),
  message('stop_pod', { key: Type.String(), reason: Type.Enum(['terminated', 'timeout', 'unknown']) }),
  message('ack_exit', { key: Type.String() }),
  /**
   * The organization's output quota per pod (bytes per second, 0: none), sent after `welcome` and
   * when it changes: the runner drops the excess at the source; the server holds it to it as well.
   */
  message('output_limit', { bytes_per_sec: Type.Integer({ minimum: 0 }) }),
  /** A new credential for the runner (POST /admin/…/rotate-credential): store it, use it from now on. */
  message('rotate_credential', { credential: Type.String({ minLength: 1, maxLength: 200 }) }),
  /**
   * A deleted loop's persistent workspace (docs/agents.md "Getting the work back"): the runner
   * delivers what is not delivered yet (with `repo` and `deliver`), then removes the directory,
   * and answers `workspace_removed`. Sent again after each reconnect until removed.
   */
  message('remove_workspace', {
    persistent_key: Type.String({ maxLength: 64 }),
    repo: Type.Union([Type.Object({ url: Type.String(), token: Type.Union([Type.String(), Type.Null()]), default_branch: Type.String() }), Type.Null()]),
    deliver: DeliverSpec,
  }),
]);

export type RunnerMessage = Static<typeof RunnerMessage>;
export type ServerMessage = Static<typeof ServerMessage>;
export type PodSpec = Static<typeof PodSpec>;
export type PodReport = Static<typeof PodReport>;
export type PodOutcome = Static<typeof PodOutcome>;
export type PodUsage = Static<typeof PodUsage>;
export type ModelCall = Static<typeof ModelCall>;
export type PodBudget = Static<typeof PodBudget>;

const ajv = new Ajv({ allErrors: false, strict: false });
const runnerValidator: ValidateFunction = ajv.compile(RunnerMessage);
const serverValidator: ValidateFunction = ajv.compile(ServerMessage);

function decode<T>(raw: string, validate: ValidateFunction, side: string): T {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new Error(`${side} message is not JSON`);
  }
  const version = (value as { v?: unknown } | null)?.v;
  if (version !== PROTOCOL_VERSION && typeof version === 'number') {
    throw new Error(`${side} speaks protocol version ${version}, this side ${PROTOCOL_VERSION}: run the same Drover release on runners and server`);
  }
  if (!validate(value)) {
    const e = validate.errors?.[0];
    throw new Error(`invalid ${side} message: ${e?.instancePath || '/'} ${e?.message ?? ''}`.trim());
  }
  return value as T;
}

export const decodeRunnerMessage = (raw: string) => decode<RunnerMessage>(raw, runnerValidator, 'runner');
export const decodeServerMessage = (raw: string) => decode<ServerMessage>(raw, serverValidator, 'server');

type Body<M> = M extends unknown ? Omit<M, 'v'> : never;
export type RunnerBody = Body<RunnerMessage>;
export type ServerBody = Body<ServerMessage>;
export const encode = (m: RunnerBody | ServerBody): string => JSON.stringify({ v: PROTOCOL_VERSION, ...m });

/** How a runner confirms which credential it stored: the first 16 hex digits of its SHA-256. */
export const credentialFingerprint = (credential: string): string => crypto.createHash('sha256').update(credential).digest('hex').slice(0, 16);

/** The close code of a link whose runner was deleted (its credential revoked): the runner must not reconnect. */
export const CLOSE_REVOKED = 4401;

/** The raw TCP socket of a `ws` WebSocket (a field ws keeps but does not document). */
interface Corkable {
  cork(): void;
  uncork(): void;
}
const corked = new WeakSet<Corkable>();

/**
 * Sends a message, writing all messages sent in the same turn of the event loop with one system
 * call: a burst (a cron slot starting hundreds of pods, a runner reporting them) costs one write,
 * not one per message. The data goes out when the current turn ends.
 */
export function sendCoalesced(socket: { send(data: string): void }, data: string): void {
  const raw = (socket as { _socket?: Corkable })._socket;
  if (raw && typeof raw.cork === 'function' && !corked.has(raw)) {
    corked.add(raw);
    raw.cork();
    setImmediate(() => {
      corked.delete(raw);
      raw.uncork();
    });
  }
  socket.send(data);
}

/** What `drover serve`'s own runner, a child process, tells its parent over the IPC channel. */
export type LocalRunnerMessage = { t: 'connected'; runner_id: number };
