import fs from 'node:fs';
import { credentialFingerprint, type Isolation, type PodOutcome, type RunnerBody, type ServerMessage } from '../protocol/runner-link.ts';
import { detectAgentVersions } from '../agents/detect.ts';
import { IdentityStore, RUNNER_VERSION, loadOrRegister, type RunnerSettings, type StoredIdentity } from './identity.ts';
import { ServerConnection } from './connection.ts';
import { openCgroups } from './limits/cgroups.ts';
import { isolationWarning, probeIsolation } from './limits/isolation.ts';
import { DEFAULT_POD_LIMITS, type PodLimits } from './limits/settings.ts';
import { openSandbox, type SandboxMode } from './sandbox/index.ts';
import { RunnerOutbox, type KeptMessage } from './outbox.ts';
import { UnackedPatches, withoutPatch } from './patch-parts.ts';
import { UnackedOutcomeFiles } from './unacked-outcomes.ts';
import type { WorkspaceRemoval } from './workspace-removal.ts';
import { PodSupervisor } from './supervisor.ts';
import { runnerNetwork } from './network/runner.ts';
import { parseOperatorAllow } from './network/index.ts';
import { matchesHost } from '../net/host-pattern.ts';
import { openRelay } from './relay/index.ts';
import type { PriceOverrides } from './relay/pricing.ts';
import type { ModelRelay } from './relay/server.ts';

/** Exit code of a runner the server refused for good (deleted, credential revoked): a supervisor should not restart it. */
export const EXIT_REVOKED = 78;
export interface RunnerOptions {
  /**
   * The server's base URL, or several (replicas of one server): the runner uses one at a time and
   * moves on to the next whenever a connection fails or is lost.
   */
  server: string | string[];
  /** Registration token; needed only until the runner has its own credential. */
  token?: string | null;
  name?: string;
  /** Given: used and remembered in the work dir. Absent: what the work dir remembers (else none). */
  labels?: string[];
  /** Given: used and remembered in the work dir. Absent: what the work dir remembers (else 4). */
  maxPods?: number;
  workDir: string;
  /** How agents run (docs/runners.md); default `bwrap`. */
  sandbox?: SandboxMode;
  /** More paths the sandbox hides (the server's data dir for the local runner) and shows read-only. */
  sandboxHidden?: string[];
  sandboxReadOnly?: string[];
  /** The bubblewrap program (default `bwrap` on PATH). */
  bwrap?: string;
  /** The operator's pod limits (default DEFAULT_POD_LIMITS) and a delegated cgroup v2 subtree. */
  podLimits?: PodLimits;
  cgroupRoot?: string;
  credentials?: Record<string, string>;
  /** The operator's `--allow-host` entries (`host[:port]`, docs/runners.md "Network"). */
  allowHosts?: string[];
  /** The operator's model prices (`--prices FILE`), over the maintained table. */
  prices?: PriceOverrides;
  env?: NodeJS.ProcessEnv;
  heartbeatMs?: number;
  killGraceMs?: number;
  log?: (line: string) => void;
  /**
   * The server refused this runner for good (deleted, its credential revoked): it stops
   * reconnecting and calls this (the command exits). Without it the runner just stays stopped.
   */
  onRevoked?: (reason: string) => void;
}

/**
 * `drover runner`: registers once, then keeps one WebSocket to the server (reconnecting with
 * backoff and jitter), reports what it runs, and does what the server's desired state says.
 */
export class RunnerDaemon {
  private draining = false;
  /** Outcomes not yet acknowledged by the server: resent after a reconnect, never lost. */
  private readonly unacked = new Map<string, PodOutcome>();
  /** Made by start(), once the sandbox is open. */
  private supervisor!: PodSupervisor;
  private relay: ModelRelay | null = null;
  private readonly identityStore: IdentityStore;
  /** The work dir's real path: the sandbox binds pods' directories at the same paths as on the host. */
  private readonly workDir: string;
  private identity: StoredIdentity | null = null;
  private settings: RunnerSettings | null = null;
  private readonly servers: string[];
  /** The link to the server (./connection.ts). */
  private readonly link: ServerConnection;
  private agents: { slug: string; version: string | null }[] = [];
  /** The walls this runner enforces, found at start (./limits/isolation.ts). */
  private isolation: Isolation | undefined;
  private readonly log: (line: string) => void;
  runnerId: number | null = null;
  private readonly welcomeWaiters: (() => void)[] = [];
  /** What was made while there was no connection, sent after the next hello (outcomes have `unacked`). */
  private readonly outbox = new RunnerOutbox();
  /** The patches of `unacked` (./patch-parts.ts). */
  private readonly patches = new UnackedPatches();
  /** `unacked` pods' outcomes on disk, so a restart does not lose their work (./unacked-outcomes.ts). */
  private readonly outcomeFiles: UnackedOutcomeFiles;
  /** Persistent workspaces being delivered and removed. */
  private readonly removing = new Set<string>();

  constructor(private readonly options: RunnerOptions) {
    this.log = options.log ?? ((line) => process.stderr.write(line + '\n'));
    fs.mkdirSync(options.workDir, { recursive: true, mode: 0o700 });
    this.workDir = fs.realpathSync(options.workDir);
    this.identityStore = new IdentityStore(this.workDir, this.log);
    this.outcomeFiles = new UnackedOutcomeFiles(this.workDir, this.log);
    this.servers = (Array.isArray(options.server) ? options.server : [options.server]).map((url) => url.trim().replace(/\/+$/, '')).filter(Boolean);
    if (this.servers.length === 0) throw new Error('no server URL given');
    this.link = new ServerConnection(this.servers, options.heartbeatMs ?? 10_000, this.log, {
      credential: () => this.identity!.credential,
      opened: () => {
        this.sendHello();
        for (const key of this.unacked.keys()) for (const part of this.patches.parts(key, false)) this.send(part);
        for (const message of this.outbox.takeAll()) this.send(message);
      },
      heartbeat: () => ({ type: 'heartbeat', draining: this.draining, pods: this.supervisor.reports() }),
      message: (message) => this.onMessage(message),
      revoked: (reason) => {
        this.log(`${reason}; not reconnecting (register again with a new registration token after removing ${this.identityStore.file})`);
        this.options.onRevoked?.(reason);
      },
    });
  }

  /** How agents run here (known once started). */
  get sandboxMode(): SandboxMode {
    return this.supervisor.sandboxMode;
  }

  /** Opens the sandbox (its self-test may refuse to start), registers if needed, and connects. */
  async start(): Promise<void> {
    const pathEnv = (this.options.env ?? process.env).PATH ?? '';
    // Each agent's `--version` runs beside the self-tests and the registration; a failed start waits for them (they clean up their HOME).
    const agentVersions = detectAgentVersions(pathEnv, `${this.workDir}/agent-versions`);
    try {
      await this.open(pathEnv, agentVersions);
    } catch (error) {
      await agentVersions.catch(() => {});
      throw error;
    }
  }

  private async open(pathEnv: string, agentVersions: ReturnType<typeof detectAgentVersions>): Promise<void> {
    const mode = this.options.sandbox ?? 'bwrap';
    const sandbox = await openSandbox(mode, {
      workDir: this.workDir,
      pathEnv,
      hidden: this.options.sandboxHidden,
      readOnly: this.options.sandboxReadOnly,
      bwrap: this.options.bwrap,
    });
    if (mode === 'none') this.log('warning: --sandbox none: agents run as this user and can read everything it can, this work dir included');
    const cgroups = openCgroups(this.workDir, this.options.cgroupRoot);
    try {
      // The pods' network walls; their self-test (the sandbox's, run in a network namespace) decides isolation.network.
      const network = await runnerNetwork(sandbox, { workDir: this.workDir, pathEnv, allowHosts: this.options.allowHosts ?? [], servers: this.servers });
      this.isolation = await probeIsolation({ sandbox: mode, cgroups, pathEnv, bwrap: this.options.bwrap, podNetwork: network !== null });
      const warning = isolationWarning(this.isolation);
      if (warning) this.log(warning);
      const operatorAllow = parseOperatorAllow(this.options.allowHosts ?? []);
      this.relay = await openRelay(this.options.prices ?? {}, {
        call: (call) => {
          this.supervisor.relayed(call);
          this.sendOrKeep({ type: 'model_call', call });
        },
        budgetReached: (key, message) => this.supervisor.failPod(key, message),
        upstreamAllowed: (host, port) => operatorAllow.some((p) => matchesHost(p, host, port)),
      });
      this.supervisor = new PodSupervisor({
        relay: this.relay,
        workDir: this.workDir,
        credentials: this.options.credentials ?? {},
        runnerEnv: this.options.env ?? process.env,
        sandbox,
        network,
        cgroups,
        podLimits: this.options.podLimits ?? DEFAULT_POD_LIMITS,
        killGraceMs: this.options.killGraceMs,
        hooks: {
          started: (key) => this.sendOrKeep({ type: 'pod_started', key }),
          output: (key, data) => this.sendOrKeep({ type: 'pod_output', key, data }),
          networkRefused: (key, refused) => this.send({ type: 'pod_network', key, refused }),
          exited: (outcome) => {
            // On disk before it is sent: acknowledged only once the server has stored it.
            this.outcomeFiles.save(outcome);
            // A patch too large for one message goes before it in parts (./patch-parts.ts).
            const sent = this.patches.keep(outcome);
            this.unacked.set(outcome.key, outcome);
            for (const part of this.patches.parts(outcome.key, true)) this.send(part);
            this.send({ type: 'pod_exited', result: sent });
          },
        },
      });
      const { identity, settings } = await loadOrRegister(this.identityStore, this.servers, this.options, this.log);
      this.identity = identity;
      this.settings = settings;
      this.runnerId = this.identity.runner_id;
      this.agents = await agentVersions;
      // Outcomes an earlier run of this runner had not got acknowledged: reported in the first hello.
      for (const outcome of this.outcomeFiles.load()) {
        this.unacked.set(outcome.key, outcome);
        this.patches.keep(outcome);
      }
      await this.supervisor.open();
      this.link.connect();
    } catch (error) {
      // A start that fails after the runner's control groups were made (a refused registration, an
      // unreachable server) leaves none of them behind: the process exits right after.
      await this.relay?.close().catch(() => {});
      await cgroups.close().catch(() => {});
      throw error;
    }
  }

  private sendHello(): void {
    this.send({
      type: 'hello',
      version: RUNNER_VERSION,
      os: process.platform,
      arch: process.arch,
      labels: this.settings!.labels,
      max_pods: this.settings!.max_pods,
      agents: this.agents,
      sandbox: this.supervisor.sandboxMode,
      isolation: this.isolation,
      draining: this.draining,
      pods: this.supervisor.reports(),
      finished: [...this.unacked.values()].map(withoutPatch),
    });
  }

  private send(message: RunnerBody): void {
    this.link.send(message);
  }

  private sendOrKeep(message: KeptMessage): void {
    if (!this.link.send(message)) this.outbox.keep(message);
  }

  private onMessage(message: ServerMessage): void {
    switch (message.type) {
      case 'welcome':
        this.runnerId = message.runner_id;
        for (const resolve of this.welcomeWaiters.splice(0)) resolve();
        return;
      case 'start_pod':
        if (this.supervisor.has(message.pod.key)) return;
        if (this.draining) {
          const error_message = 'the runner is draining and accepts no new pods';
          this.unacked.set(message.pod.key, { key: message.pod.key, outcome: 'failed', exit_code: null, error_message, session_id: null });
          this.send({ type: 'pod_exited', result: this.unacked.get(message.pod.key)! });
          return;
        }
        // No report back: the server counts a pod it sent as here, and pod_started (or
        // pod_exited) follows; a full report after every start would make the server reconcile
        // every pod of the runner once per pod started.
        this.supervisor.start(message.pod);
        return;
      case 'stop_pod':
        this.supervisor.stop(message.key, message.reason === 'timeout' ? 'timeout' : 'terminated');
        return;
      case 'ack_exit':
        this.unacked.delete(message.key);
        this.patches.forget(message.key);
        this.outcomeFiles.remove(message.key);
        return;
      case 'remove_workspace':
        this.removeWorkspace(message);
        return;
      case 'rotate_credential':
        this.storeCredential(message.credential);
        return;
      case 'output_limit':
        this.supervisor.setOutputLimit(message.bytes_per_sec);
        this.log(message.bytes_per_sec === 0 ? 'pod output: no limit' : `pod output limited to ${message.bytes_per_sec} bytes/s per pod (the organization's quota)`);
        return;
    }
  }

  /**
   * A deleted loop's persistent workspace: delivered and removed once no pod uses it
   * (./workspace-removal.ts), then the server is told; asked again after a reconnect meanwhile.
   */
  private removeWorkspace(request: WorkspaceRemoval): void {
    const key = request.persistent_key;
    if (this.removing.has(key)) return;
    this.removing.add(key);
    void this.supervisor
      .removePersistent(request)
      .catch((error: unknown) => ({ removed: false, error: `removing the workspace failed: ${(error as Error).message}`.slice(0, 2000), delivery: null }))
      .then((result) => {
        this.removing.delete(key);
        if (!result.removed) this.log(`persistent workspace ${key} kept: ${result.error ?? ''}`);
        this.send({ type: 'workspace_removed', persistent_key: key, ...result });
      });
  }

  /** A new credential from the server: kept in runner.json first, confirmed after, used from now on. */
  private storeCredential(credential: string): void {
    try {
      this.identity = { ...this.identity!, credential };
      this.identityStore.save(this.identity);
    } catch (error) {
      // Unconfirmed, the server keeps accepting the current credential.
      this.log(`could not store the new credential in ${this.identityStore.file}: ${(error as Error).message}`);
      return;
    }
    this.send({ type: 'credential_stored', fingerprint: credentialFingerprint(credential) });
    this.log(`received a new credential from the server; stored in ${this.identityStore.file}`);
  }

  /**
   * SIGTERM: accept no new pods, let running ones finish for up to `graceMs`, then stop them,
   * report their outcomes, and close.
   */
  async drain(graceMs: number): Promise<void> {
    this.draining = true;
    this.send({ type: 'heartbeat', draining: true, pods: this.supervisor.reports() });
    const finished = await this.supervisor.idle(graceMs);
    if (!finished) await this.supervisor.stopAll('terminated');
    const deadline = Date.now() + 5_000;
    while (this.unacked.size > 0 && this.link.exists && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await this.close();
    await this.supervisor.close();
    await this.relay?.close();
  }

  async close(): Promise<void> {
    await this.link.close();
  }

  /** Resolves once the server has welcomed this runner (or rejects after `timeoutMs`). */
  connected(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the runner did not connect within ${timeoutMs} ms`)), timeoutMs);
      this.welcomeWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Stops without draining (tests, and a runner embedded in `drover serve`). */
  async shutdown(): Promise<void> {
    await this.close();
    // Not there when start() failed (e.g. the sandbox's self-test refused).
    if (!this.supervisor) return;
    await this.supervisor.stopAll('terminated');
    await this.supervisor.close();
    await this.relay?.close();
  }
}

