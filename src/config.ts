import path from 'node:path';
import { DEFAULT_STREAM_CAPS, type StreamCaps } from './domain/auth/credential-streams.ts';
import { DEFAULT_QUOTAS, QUOTA_ENV, QUOTA_NAMES, type Quotas } from './domain/quotas/model.ts';
import { parseSecretKey } from './domain/secrets.ts';
import { LOG_FORMATS, type LogFormat } from './logger.ts';

/** Everything `drover serve` can be told, from flags first and the environment second. */
export interface ServerConfig {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  readonly databaseUrl: string | null;
  readonly localRunner: boolean;
  readonly adminToken: string | null;
  readonly rateLimitPerMinute: number;
  /** DROVER_AUTH_FAILURE_LIMIT_PER_MINUTE: failed authentications per client address before 429 (30; 0 off). */
  readonly authFailuresPerMinute: number;
  /** DROVER_REGISTER_LIMIT_PER_MINUTE: runner registrations per client address (30; 0 off). */
  readonly registerPerMinute: number;
  /** DROVER_REQUEST_TIMEOUT_MS: headers and body must arrive within this, else 408 (30000). */
  readonly requestTimeoutMs: number;
  /** DROVER_TRUST_PROXY: false, true, or the proxies' addresses/CIDRs (comma-separated) whose X-Forwarded-For counts. */
  readonly trustProxy: boolean | string;
  readonly logLevel: string;
  /** DROVER_LOG_FORMAT: auto (pretty on a terminal, JSON otherwise), json or pretty. */
  readonly logFormat: LogFormat;
  readonly publicUrl: string | null;
  /** DROVER_SECRET_KEY (32 bytes, base64 or hex), checked here; null: `<data dir>/secret-key`. */
  readonly secretKey: string | null;
  /** DROVER_PROVIDER_TIMEOUT_MS: budget of one Git provider call, every page included. */
  readonly providerTimeoutMs: number;
  /** DROVER_LOCAL_RUNNER_MAX_PODS: slots of the in-process runner. */
  readonly localRunnerMaxPods: number;
  /** DROVER_LOCAL_RUNNER_START_WAIT_SECONDS: how long the start waits for the local runner before it goes on (30). */
  readonly localRunnerStartWaitMs: number;
  /** DROVER_LOCAL_RUNNER_SANDBOX: how the local runner sandboxes its pods (`bwrap`, the default, or `none`). */
  readonly localRunnerSandbox: 'bwrap' | 'none';
  /** DROVER_POD_ORPHAN_GRACE_SECONDS: runner silence before its pods are `orphaned` (120). */
  readonly orphanGraceMs: number;
  /** DROVER_POD_ORPHAN_FAIL_SECONDS: runner silence before orphaned pods are `failed` (3600). */
  readonly orphanFailMs: number;
  /** DROVER_POD_QUEUE_TIMEOUT_MINUTES: how long a pod may wait for a runner slot before it fails (60; fractions allowed). */
  readonly podQueueTimeoutMs: number;
  /** DROVER_EVENT_RETENTION_HOURS: how long the event log keeps events (720: 30 days; fractions allowed). */
  readonly eventRetentionMs: number;
  /** DROVER_SWEEP_INTERVAL_MS: how often liveness and deadlines are checked (5000; run timeouts need ≤ 5000). */
  readonly sweepIntervalMs: number;
  /** DROVER_CRON_CATCHUP_SECONDS: after downtime, only a missed slot younger than this fires (3600). */
  readonly cronCatchupMs: number;
  /** DROVER_CRON_TICK_MS: how often due cron slots are looked for (1000). */
  readonly cronTickMs: number;
  /**
   * DROVER_CRON_PREPARE_AHEAD_MS: how long before its slot a loop's run is prepared, its pod on a
   * runner and its sandbox built, the agent started at the slot (30000; 0: at the slot, not ahead).
   */
  readonly cronPrepareAheadMs: number;
  /** DROVER_DEFAULT_AGENT: the agent of loops that name none (claude-code). */
  readonly defaultAgent: string;
  /** DROVER_WEBHOOK_ALLOW_PRIVATE: let callbacks reach loopback and private addresses (false). */
  readonly webhookAllowPrivate: boolean;
  /** DROVER_ORG_MAX_ACTIVE_PODS, DROVER_ORG_MAX_QUEUED_PODS, DROVER_ORG_MAX_LOOPS, DROVER_POD_OUTPUT_BYTES_PER_SEC (0: no limit). */
  readonly quotas: Quotas;
  /**
   * DROVER_TEST_CRON_CLOCK_FILE, for tests only: the cron scheduler reads "now" (epoch ms) from this
   * file instead of the system clock, so a test can step several processes through cron slots together.
   */
  readonly testCronClockFile: string | null;
  /** DROVER_DASHBOARD: serve the web dashboard at `/` (true). */
  readonly dashboard: boolean;
  /** DROVER_MAX_STREAMS_PER_KEY (20), DROVER_MAX_STREAMS_PER_ORG (500): concurrent event and output streams (0: no cap). */
  readonly streamCaps: StreamCaps;
}

export interface ServeFlags {
  host?: string;
  port?: string;
  'data-dir'?: string;
  'no-local-runner'?: boolean;
}

function intFrom(name: string, raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`);
  }
  return value;
}

/** A positive duration in `unit`s (fractions allowed), in milliseconds. */
function durationFrom(name: string, raw: string | undefined, fallback: number, unit: 'minutes' | 'hours'): number {
  const unitMs = unit === 'minutes' ? 60_000 : 3_600_000;
  if (raw === undefined || raw === '') return fallback * unitMs;
  const value = Number(raw);
  if (!/^\s*[0-9]*\.?[0-9]+\s*$/.test(raw) || !(value > 0)) throw new Error(`${name} must be a positive number of ${unit}, got "${raw}"`);
  return Math.round(value * unitMs);
}

const minutesFrom = (name: string, raw: string | undefined, fallback: number) => durationFrom(name, raw, fallback, 'minutes');
const hoursFrom = (name: string, raw: string | undefined, fallback: number) => durationFrom(name, raw, fallback, 'hours');


function boolFrom(name: string, raw: string | undefined, fallback: boolean): boolean {
  if (raw === undefined || raw === '') return fallback;
  if (['true', '1', 'yes'].includes(raw.toLowerCase())) return true;
  if (['false', '0', 'no'].includes(raw.toLowerCase())) return false;
  throw new Error(`${name} must be true or false, got "${raw}"`);
}

function oneOf<T extends string>(name: string, raw: string | undefined, values: readonly T[], fallback: T): T {
  if (raw === undefined || raw === '') return fallback;
  if (!(values as readonly string[]).includes(raw)) throw new Error(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  return raw as T;
}

function trustProxyFrom(raw: string | undefined): boolean | string {
  const value = raw?.trim() ?? '';
  if (value === '' || ['false', '0', 'no'].includes(value.toLowerCase())) return false;
  if (['true', '1', 'yes'].includes(value.toLowerCase())) return true;
  return value;
}

export function loadServerConfig(flags: ServeFlags = {}, env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const databaseUrl = env.DATABASE_URL?.trim() || null;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error('DATABASE_URL must be a postgres:// or postgresql:// URL (leave it unset for the embedded SQLite store)');
  }
  const port = intFrom('port', flags.port ?? env.DROVER_PORT, 7070, 0);
  if (port > 65535) throw new Error(`port must be at most 65535, got ${port}`);
  const secretKey = env.DROVER_SECRET_KEY?.trim() || null;
  if (secretKey) parseSecretKey(secretKey); // a bad key stops the start with a clear message
  return Object.freeze({
    host: flags.host ?? env.DROVER_HOST ?? '127.0.0.1',
    port,
    dataDir: path.resolve(flags['data-dir'] ?? env.DROVER_DATA_DIR ?? './.drover'),
    databaseUrl,
    // On by default with the embedded store; with PostgreSQL (replicas) only when asked for.
    localRunner: flags['no-local-runner'] ? false : boolFrom('DROVER_LOCAL_RUNNER', env.DROVER_LOCAL_RUNNER, databaseUrl === null),
    adminToken: env.DROVER_ADMIN_TOKEN?.trim() || null,
    rateLimitPerMinute: intFrom('DROVER_RATE_LIMIT_PER_MINUTE', env.DROVER_RATE_LIMIT_PER_MINUTE, 1200, 0),
    authFailuresPerMinute: intFrom('DROVER_AUTH_FAILURE_LIMIT_PER_MINUTE', env.DROVER_AUTH_FAILURE_LIMIT_PER_MINUTE, 30, 0),
    registerPerMinute: intFrom('DROVER_REGISTER_LIMIT_PER_MINUTE', env.DROVER_REGISTER_LIMIT_PER_MINUTE, 30, 0),
    requestTimeoutMs: intFrom('DROVER_REQUEST_TIMEOUT_MS', env.DROVER_REQUEST_TIMEOUT_MS, 30_000, 100),
    trustProxy: trustProxyFrom(env.DROVER_TRUST_PROXY),
    logLevel: env.DROVER_LOG_LEVEL ?? 'info',
    logFormat: oneOf('DROVER_LOG_FORMAT', env.DROVER_LOG_FORMAT?.trim() || undefined, LOG_FORMATS, 'auto'),
    publicUrl: env.DROVER_PUBLIC_URL?.trim() || null,
    secretKey,
    providerTimeoutMs: intFrom('DROVER_PROVIDER_TIMEOUT_MS', env.DROVER_PROVIDER_TIMEOUT_MS, 10_000, 1),
    localRunnerMaxPods: intFrom('DROVER_LOCAL_RUNNER_MAX_PODS', env.DROVER_LOCAL_RUNNER_MAX_PODS, 4, 1),
    localRunnerStartWaitMs: intFrom('DROVER_LOCAL_RUNNER_START_WAIT_SECONDS', env.DROVER_LOCAL_RUNNER_START_WAIT_SECONDS, 30, 0) * 1000,
    localRunnerSandbox: oneOf('DROVER_LOCAL_RUNNER_SANDBOX', env.DROVER_LOCAL_RUNNER_SANDBOX, ['bwrap', 'none'] as const, 'bwrap'),
    orphanGraceMs: intFrom('DROVER_POD_ORPHAN_GRACE_SECONDS', env.DROVER_POD_ORPHAN_GRACE_SECONDS, 120, 1) * 1000,
    orphanFailMs: intFrom('DROVER_POD_ORPHAN_FAIL_SECONDS', env.DROVER_POD_ORPHAN_FAIL_SECONDS, 3600, 1) * 1000,
    podQueueTimeoutMs: minutesFrom('DROVER_POD_QUEUE_TIMEOUT_MINUTES', env.DROVER_POD_QUEUE_TIMEOUT_MINUTES, 60),
    eventRetentionMs: hoursFrom('DROVER_EVENT_RETENTION_HOURS', env.DROVER_EVENT_RETENTION_HOURS, 720),
    sweepIntervalMs: intFrom('DROVER_SWEEP_INTERVAL_MS', env.DROVER_SWEEP_INTERVAL_MS, 5000, 100),
    cronCatchupMs: intFrom('DROVER_CRON_CATCHUP_SECONDS', env.DROVER_CRON_CATCHUP_SECONDS, 3600, 0) * 1000,
    cronTickMs: intFrom('DROVER_CRON_TICK_MS', env.DROVER_CRON_TICK_MS, 1000, 50),
    cronPrepareAheadMs: intFrom('DROVER_CRON_PREPARE_AHEAD_MS', env.DROVER_CRON_PREPARE_AHEAD_MS, 30_000, 0),
    defaultAgent: env.DROVER_DEFAULT_AGENT?.trim() || 'claude-code',
    webhookAllowPrivate: boolFrom('DROVER_WEBHOOK_ALLOW_PRIVATE', env.DROVER_WEBHOOK_ALLOW_PRIVATE, false),
    quotas: Object.freeze(Object.fromEntries(QUOTA_NAMES.map((name) => [name, intFrom(QUOTA_ENV[name], env[QUOTA_ENV[name]], DEFAULT_QUOTAS[name], 0)])) as Quotas),
    testCronClockFile: env.DROVER_TEST_CRON_CLOCK_FILE?.trim() || null,
    dashboard: boolFrom('DROVER_DASHBOARD', env.DROVER_DASHBOARD?.trim(), true),
    streamCaps: Object.freeze({
      perCredential: intFrom('DROVER_MAX_STREAMS_PER_KEY', env.DROVER_MAX_STREAMS_PER_KEY, DEFAULT_STREAM_CAPS.perCredential, 0),
      perOrg: intFrom('DROVER_MAX_STREAMS_PER_ORG', env.DROVER_MAX_STREAMS_PER_ORG, DEFAULT_STREAM_CAPS.perOrg, 0),
    }),
  });
}
