import fs from 'node:fs';
import path from 'node:path';
import { EXIT_REVOKED, RunnerDaemon } from '../runner/daemon.ts';
import { operatorLimits } from '../runner/limits/settings.ts';
import { SANDBOX_MODES, type SandboxMode } from '../runner/sandbox/index.ts';
import type { LocalRunnerMessage } from '../protocol/runner-link.ts';
import { readPriceFile } from '../runner/relay/index.ts';

export interface RunnerFlags {
  server?: string;
  token?: string;
  name?: string;
  labels?: string;
  'max-pods'?: string;
  'work-dir'?: string;
  'drain-seconds'?: string;
  sandbox?: string;
  /** `--allow-host H[:P]`, repeatable, each possibly comma-separated (docs/runners.md "Network"). */
  'allow-host'?: string[];
  'pod-memory-mb'?: string;
  'pod-pids'?: string;
  'pod-cpus'?: string;
  'pod-disk-mb'?: string;
  prices?: string;
}

/**
 * Credentials a runner may hand to agents (CREDENTIAL directives): `<work dir>/credentials.json`
 * ({"NAME": "value"}) and variables `DROVER_CREDENTIAL_<NAME>` of the runner's environment.
 */
function loadCredentials(workDir: string, env: NodeJS.ProcessEnv): Record<string, string> {
  const credentials: Record<string, string> = {};
  const file = path.join(workDir, 'credentials.json');
  if (fs.existsSync(file)) Object.assign(credentials, JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string>);
  for (const [name, value] of Object.entries(env)) {
    if (name.startsWith('DROVER_CREDENTIAL_') && value !== undefined) credentials[name.slice('DROVER_CREDENTIAL_'.length)] = value;
  }
  return credentials;
}

function positiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${/^[A-Z]/.test(name) ? name : `--${name}`} must be a positive integer, got "${raw}"`);
  return value;
}

function sandboxMode(raw: string | undefined): SandboxMode {
  const value = raw ?? 'bwrap';
  if (!(SANDBOX_MODES as readonly string[]).includes(value)) throw new Error(`--sandbox must be one of ${SANDBOX_MODES.join(', ')}, got "${value}"`);
  return value as SandboxMode;
}

/** The operator's model prices (docs/agents.md "The model relay"); a bad file stops the runner at start. */
function priceFile(file: string | undefined) {
  if (!file) return {};
  try {
    return readPriceFile(file);
  } catch (error) {
    throw new Error(`--prices: ${(error as Error).message}`, { cause: error });
  }
}

/** A colon-separated list of paths (like PATH), empty entries dropped. */
const pathList = (raw: string | undefined): string[] => (raw ?? '').split(':').filter((p) => p !== '');

/** `drover runner`: runs until SIGTERM/SIGINT, then drains (no new pods; running ones get a grace period). */
export async function runRunner(flags: RunnerFlags, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const server = flags.server ?? env.DROVER_SERVER_URL;
  if (!server) throw new Error('--server <url> is required (or DROVER_SERVER_URL)');
  const servers = server.split(',').map((url) => url.trim()).filter(Boolean);
  for (const url of servers) if (!/^https?:\/\/[^\s/]/.test(url)) throw new Error(`--server: "${url}" is not an http(s) URL`);
  const workDir = path.resolve(flags['work-dir'] ?? env.DROVER_RUNNER_WORK_DIR ?? './.drover-runner');
  let stopping: Promise<void> | null = null;
  const daemon: RunnerDaemon = new RunnerDaemon({
    server: servers,
    token: flags.token ?? env.DROVER_RUNNER_TOKEN ?? null,
    name: flags.name,
    // Absent flags keep what the work dir remembers (src/runner/daemon.ts, resolveSettings).
    labels: flags.labels === undefined ? undefined : flags.labels.split(',').map((l) => l.trim()).filter(Boolean),
    maxPods: flags['max-pods'] === undefined ? undefined : positiveInt('max-pods', flags['max-pods'], 4),
    onRevoked: () => {
      // Its pods were failed by the server; stop what still runs here, and exit for good.
      // Set first: the process may also end on its own once the last handle has closed.
      process.exitCode = EXIT_REVOKED;
      stopping ??= daemon.shutdown().finally(() => process.exit(EXIT_REVOKED));
    },
    workDir,
    sandbox: sandboxMode(flags.sandbox ?? env.DROVER_RUNNER_SANDBOX),
    sandboxHidden: pathList(env.DROVER_SANDBOX_HIDE),
    sandboxReadOnly: pathList(env.DROVER_SANDBOX_READ_ONLY),
    bwrap: env.DROVER_BWRAP || undefined,
    podLimits: operatorLimits({
      memory_mb: flags['pod-memory-mb'] ?? env.DROVER_RUNNER_POD_MEMORY_MB,
      pids: flags['pod-pids'] ?? env.DROVER_RUNNER_POD_PIDS,
      cpus: flags['pod-cpus'] ?? env.DROVER_RUNNER_POD_CPUS,
      disk_mb: flags['pod-disk-mb'] ?? env.DROVER_RUNNER_POD_DISK_MB,
    }),
    cgroupRoot: env.DROVER_RUNNER_CGROUP || undefined,
    credentials: loadCredentials(workDir, env),
    allowHosts: [...(flags['allow-host'] ?? []), ...(env.DROVER_RUNNER_ALLOW_HOSTS ? [env.DROVER_RUNNER_ALLOW_HOSTS] : [])],
    prices: priceFile(flags.prices ?? env.DROVER_RUNNER_PRICES),
    env,
    // Tests shorten it; the server expects one at least every 30 s.
    heartbeatMs: env.DROVER_RUNNER_HEARTBEAT_MS ? positiveInt('DROVER_RUNNER_HEARTBEAT_MS', env.DROVER_RUNNER_HEARTBEAT_MS, 10_000) : undefined,
  });
  if (process.channel) {
    await runEmbedded(daemon);
    return;
  }
  if (await startHoldingSignals(daemon)) return;
  const drainMs = positiveInt('drain-seconds', flags['drain-seconds'], 60) * 1000;
  const onSignal = () => {
    process.stderr.write(`draining: no new pods; running pods get up to ${drainMs / 1000} s\n`);
    void exitWhenDone(daemon.drain(drainMs));
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  process.stderr.write(`runner connecting to ${servers.join(', ')} (work dir ${workDir}, pod sandbox: ${daemon.sandboxMode})\n`);
}

/**
 * Started by `drover serve` as its local runner (src/serve/local-runner.ts), over an IPC channel: it
 * says when it is connected, and stops with its pods when the server says so or is gone.
 */
async function runEmbedded(daemon: RunnerDaemon): Promise<void> {
  const welcomed = daemon.connected(60_000);
  let stopping: Promise<void> | null = null;
  const stop = () => (stopping ??= exitWhenDone(daemon.shutdown()));
  // Listened for from the start: a shutdown asked while the runner starts is done once it has.
  let started = false;
  let shutdownAsked = false;
  process.on('message', (message: { t?: string }) => {
    if (message?.t !== 'shutdown') return;
    shutdownAsked = true;
    if (started) void stop();
  });
  if (await startHoldingSignals(daemon)) return;
  started = true;
  // Asked to stop while it started, or the server gone meanwhile (its IPC channel closed, unheard).
  if (shutdownAsked || !process.connected) return void stop();
  process.once('disconnect', () => void stop());
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
  welcomed.then(
    () => process.send?.({ t: 'connected', runner_id: Number(daemon.runnerId) } satisfies LocalRunnerMessage),
    (error: Error) => process.stderr.write(`${error.message}\n`),
  );
}

/**
 * Starts the runner with SIGTERM and SIGINT held: one that comes during the start (before the
 * handlers that drain or stop exist) lets the start finish and then stops the runner in order, its
 * control groups and files removed, instead of killing it half made; a second one ends it at once
 * (a start waiting on a server that does not answer takes up to 30 s). Answers whether it stopped.
 */
async function startHoldingSignals(daemon: RunnerDaemon): Promise<boolean> {
  let signalled = false;
  const hold = (signal: NodeJS.Signals) => {
    if (signalled) process.exit(signal === 'SIGINT' ? 130 : 143);
    signalled = true;
    process.stderr.write(`${signal} while starting: the runner stops once its start is done (${signal} again stops it at once)\n`);
  };
  process.on('SIGTERM', hold);
  process.on('SIGINT', hold);
  try {
    await daemon.start();
  } finally {
    process.off('SIGTERM', hold);
    process.off('SIGINT', hold);
  }
  if (!signalled) return false;
  await exitWhenDone(daemon.shutdown());
  return true;
}

/** Exits 0 once `stopped` resolves, 1 if it fails. */
const exitWhenDone = (stopped: Promise<void>): Promise<void> =>
  stopped.then(
    () => process.exit(0),
    () => process.exit(1),
  );
