import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import type { DomainContext } from '../domain/context.ts';
import type { LocalRunnerMessage } from '../protocol/runner-link.ts';
import { issueRegistrationToken } from '../domain/runners/registration-tokens.ts';
import { findOrgBySlug } from '../store/orgs.ts';
import { packageFile } from '../paths.ts';
import { EXIT_REVOKED } from '../runner/daemon.ts';

const DROVER_BIN = packageFile('bin/drover.mjs');
/** The local runner's libuv thread pool, unless UV_THREADPOOL_SIZE is set (docs/runners.md "What a pod start costs"). */
const RUNNER_THREADPOOL_SIZE = 16;
/** Restarts wait 1 s, doubling (up to 30 s) while the runner keeps dying within a minute of its start. */
const RESTART_DELAY_MS = 1_000;
const MAX_RESTART_DELAY_MS = 30_000;
const STABLE_AFTER_MS = 60_000;

/** What the embedded runner tells `drover serve` over its IPC channel (see src/cli/runner.ts). */
export interface LocalRunnerOptions {
  dataDir: string;
  serverUrl: string;
  maxPods: number;
  /** How long `start` waits for the runner to connect before it goes on. */
  startWaitMs: number;
  /** How it sandboxes its pods (DROVER_LOCAL_RUNNER_SANDBOX). */
  sandbox: 'bwrap' | 'none';
  /** Lines for the server's log; `warn` for the runner's warnings and errors. */
  log: (line: string, level?: 'info' | 'warn') => void;
  /**
   * Each time the runner says it is connected: at its start, however long that took (a loaded
   * machine may take longer than the start waits), and after each restart.
   */
  connected: (runnerId: number, workDir: string) => void;
}

/**
 * The runner `drover serve` starts on the embedded default: `drover runner` as a child process,
 * registered to the `default` organization, so the first command of the README gives a working
 * system. A process of its own keeps the runner's work (workspaces, agent output, its socket) off
 * the server's event loop, so starting many pods does not slow the API down.
 *
 * It is tied to the server: it stops when told to (server shutdown) or when the server is gone
 * (its IPC channel closes, e.g. after kill -9), stopping its pods; if it dies on its own, the
 * server starts it again.
 */
export class LocalRunner {
  private child: ChildProcess | null = null;
  /** The child that said it is connected (so it listens for `shutdown`). */
  private childConnected: ChildProcess | null = null;
  private stopping = false;
  private restartTimer: NodeJS.Timeout | null = null;
  private nextRestartDelayMs = RESTART_DELAY_MS;

  private constructor(
    private readonly options: LocalRunnerOptions,
    readonly workDir: string,
    /** The registration token, until the runner has registered (a restart before that needs it again). */
    private token: string | null,
  ) {}

  /** The runner's id once it has connected. */
  runnerId: number | null = null;

  /**
   * The local runner, registered but not started yet (`start`); null without an organization
   * `default`. The server holds it before it starts, so a shutdown during the start stops it too.
   */
  static async prepare(ctx: DomainContext, options: LocalRunnerOptions): Promise<LocalRunner | null> {
    const workDir = path.join(options.dataDir, 'runner');
    let token: string | null = null;
    if (!fs.existsSync(path.join(workDir, 'runner.json'))) {
      const org = await findOrgBySlug(ctx.store.db, 'default');
      if (!org) {
        options.log('no organization "default": the local runner is not started');
        return null;
      }
      // A few uses: a runner that dies between registering and writing its credential can try again.
      token = (await issueRegistrationToken(ctx, org.id, { labels: ['local'], expires_in_hours: 1, uses: 5 })).token;
    }
    return new LocalRunner(options, workDir, token);
  }

  /**
   * Starts the runner and waits until it is connected (unless it is being shut down already). If
   * it dies, the server goes on and the runner is started again; if it takes longer than the wait,
   * the server goes on and `connected` tells when it is.
   */
  async start(): Promise<void> {
    if (this.stopping) return;
    await this.spawn().catch((error: Error) => this.options.log(`local runner: ${error.message}`, 'warn'));
  }

  /** Stops the runner and its pods (server shutdown). */
  async shutdown(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    // A runner still starting may not listen for the message yet: SIGTERM ends it then (it has no
    // pods yet), or stops it as the message would once it listens.
    if (child.connected) child.send({ t: 'shutdown' });
    if (!child.connected || this.childConnected !== child) child.kill('SIGTERM');
    await exited;
  }

  private spawn(): Promise<number> {
    if (this.token && fs.existsSync(path.join(this.workDir, 'runner.json'))) this.token = null;
    const token = this.token;
    const { serverUrl, maxPods, sandbox, dataDir, log, startWaitMs } = this.options;
    const args = ['runner', '--server', serverUrl, '--work-dir', this.workDir, '--name', 'local', '--labels', 'local', '--max-pods', String(maxPods)];
    args.push('--sandbox', sandbox);
    // The registration token goes through the environment, not the command line (ps shows that).
    const env: NodeJS.ProcessEnv = { ...process.env };
    if (token) env.DROVER_RUNNER_TOKEN = token;
    else delete env.DROVER_RUNNER_TOKEN;
    // Its pods must not see the server's data dir (the admin token, the secret key, the database),
    // even where it lies inside a directory the sandbox shows.
    env.DROVER_SANDBOX_HIDE = [dataDir, env.DROVER_SANDBOX_HIDE].filter(Boolean).join(':');
    // The local runner's own operator list (docs/runners.md "Network"), not a remote runner's.
    if (env.DROVER_LOCAL_RUNNER_ALLOW_HOSTS) env.DROVER_RUNNER_ALLOW_HOSTS = env.DROVER_LOCAL_RUNNER_ALLOW_HOSTS;
    else delete env.DROVER_RUNNER_ALLOW_HOSTS;
    // The local runner's pod limits (docs/runners.md "Limits") are its own settings.
    for (const limit of ['MEMORY_MB', 'PIDS', 'CPUS', 'DISK_MB']) {
      const value = env[`DROVER_LOCAL_RUNNER_POD_${limit}`];
      if (value !== undefined) env[`DROVER_RUNNER_POD_${limit}`] = value;
    }
    // A larger libuv thread pool than Node's 4 threads: a burst of pods' file work (workspaces,
    // HOMEs, PATH lookups, disk watches) queues on it (docs/runners.md "What a pod start costs").
    // Read by libuv when the pool starts, before any of the runner's code runs: only the
    // environment it is started with can set it. An operator's own setting wins.
    env.UV_THREADPOOL_SIZE ??= String(RUNNER_THREADPOOL_SIZE);
    // Its own process group: a Ctrl-C in the terminal reaches the server, which stops it in order.
    const child = fork(DROVER_BIN, args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    const startedAt = Date.now();
    this.child = child;
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      readline.createInterface({ input: stream }).on('line', (line) => log(`local runner: ${line}`, /^(warning|drover):/.test(line) ? 'warn' : 'info'));
    }
    const connected = new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the local runner has not connected within ${startWaitMs / 1000} s; the server goes on, and says so when it does`)),
        startWaitMs,
      );
      child.on('message', (message: LocalRunnerMessage) => {
        if (message?.t !== 'connected') return;
        clearTimeout(timer);
        this.childConnected = child;
        this.runnerId = message.runner_id;
        this.options.connected(message.runner_id, this.workDir);
        resolve(message.runner_id);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`the local runner exited before connecting (${signal ?? `exit code ${code}`})`));
      });
    });
    child.once('exit', (code, signal) => {
      if (this.child === child) this.child = null;
      if (this.stopping) return;
      if (code === EXIT_REVOKED) {
        // Deleted by an administrator: starting it again would only be refused again.
        log(`the local runner's credential was revoked (the runner was deleted); it is not restarted. Remove ${path.join(this.workDir, 'runner.json')} and restart the server to register a new one`);
        return;
      }
      const delay = Date.now() - startedAt >= STABLE_AFTER_MS ? RESTART_DELAY_MS : this.nextRestartDelayMs;
      this.nextRestartDelayMs = Math.min(delay * 2, MAX_RESTART_DELAY_MS);
      log(`local runner exited (${signal ?? `exit code ${code}`}); starting it again in ${delay / 1000} s`, 'warn');
      this.restartTimer = setTimeout(() => {
        this.restartTimer = null;
        if (!this.stopping) this.spawn().catch((error: Error) => log(`local runner: ${error.message}`, 'warn'));
      }, delay);
      this.restartTimer.unref();
    });
    return connected;
  }
}
