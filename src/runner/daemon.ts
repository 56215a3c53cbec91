import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { decodeServerMessage, encode, sendCoalesced, type PodOutcome, type RunnerBody, type ServerMessage } from '../gateway/protocol.ts';
import { detectAgentVersions } from '../agents/detect.ts';
import { openSandbox, type SandboxMode } from './sandbox/index.ts';
import { PodSupervisor } from './supervisor.ts';
import { networkCause } from '../client/network.ts';

export const RUNNER_VERSION = '0.1.0';
/** Output kept for the server while disconnected (the server keeps a 1 MiB tail per pod). */
const OUTBOX_MAX_CHARS = 8 * 1024 * 1024;

export interface RunnerOptions {
  server: string;
  /** Registration token; needed only until the runner has its own credential. */
  token?: string | null;
  name?: string;
  labels?: string[];
  maxPods?: number;
  workDir: string;
  /** How agents run (contract §9); default `bwrap`. */
  sandbox?: SandboxMode;
  /** More paths the sandbox hides (the server's data dir for the local runner) and shows read-only. */
  sandboxHidden?: string[];
  sandboxReadOnly?: string[];
  /** The bubblewrap program (default `bwrap` on PATH). */
  bwrap?: string;
  credentials?: Record<string, string>;
  env?: NodeJS.ProcessEnv;
  heartbeatMs?: number;
  killGraceMs?: number;
  log?: (line: string) => void;
}

interface StoredIdentity {
  server: string;
  runner_id: number;
  org: string;
  credential: string;
}

/**
 * `drover runner`: registers once, then keeps one WebSocket to the server (reconnecting with
 * backoff and jitter), reports what it runs, and does what the server's desired state says.
 */
export class RunnerDaemon {
  private socket: WebSocket | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private attempt = 0;
  private stopped = false;
  private draining = false;
  /** Outcomes not yet acknowledged by the server: resent after a reconnect, never lost. */
  private readonly unacked = new Map<string, PodOutcome>();
  /** Made by start(), once the sandbox is open. */
  private supervisor!: PodSupervisor;
  private identity: StoredIdentity | null = null;
  private agents: { slug: string; version: string | null }[] = [];
  private readonly workDir: string;
  private readonly log: (line: string) => void;
  runnerId: number | null = null;
  private readonly welcomeWaiters: (() => void)[] = [];
  /**
   * pod_started / pod_output made while there was no connection: sent right after the next
   * hello, in order, instead of being dropped (outcomes have `unacked`). Bounded: past
   * OUTBOX_MAX_CHARS the oldest output goes first.
   */
  private readonly outbox: RunnerBody[] = [];
  private outboxChars = 0;

  constructor(private readonly options: RunnerOptions) {
    this.log = options.log ?? ((line) => process.stderr.write(line + '\n'));
    fs.mkdirSync(options.workDir, { recursive: true, mode: 0o700 });
    // The real path: the sandbox binds pods' directories at the same paths as on the host.
    this.workDir = fs.realpathSync(options.workDir);
  }

  private get identityFile(): string {
    return path.join(this.workDir, 'runner.json');
  }

  /** How agents run here (known once started). */
  get sandboxMode(): SandboxMode {
    return this.supervisor.sandboxMode;
  }

  /** Opens the sandbox (its self-test may refuse to start), registers if needed, and connects. */
  async start(): Promise<void> {
    const pathEnv = (this.options.env ?? process.env).PATH ?? '';
    const mode = this.options.sandbox ?? 'bwrap';
    const sandbox = await openSandbox(mode, {
      workDir: this.workDir,
      pathEnv,
      hidden: this.options.sandboxHidden,
      readOnly: this.options.sandboxReadOnly,
      bwrap: this.options.bwrap,
    });
    if (mode === 'none') this.log('warning: --sandbox none: agents run as this user and can read everything it can, this work dir included');
    this.supervisor = new PodSupervisor({
      workDir: this.workDir,
      credentials: this.options.credentials ?? {},
      runnerEnv: this.options.env ?? process.env,
      sandbox,
      killGraceMs: this.options.killGraceMs,
      hooks: {
        started: (key) => this.sendOrKeep({ type: 'pod_started', key }),
        output: (key, data) => this.sendOrKeep({ type: 'pod_output', key, data }),
        exited: (outcome) => {
          this.unacked.set(outcome.key, outcome);
          this.send({ type: 'pod_exited', result: outcome });
        },
      },
    });
    this.identity = await this.loadOrRegister();
    this.runnerId = this.identity.runner_id;
    this.agents = await detectAgentVersions(pathEnv);
    await this.supervisor.open();
    this.connect();
  }

  private async loadOrRegister(): Promise<StoredIdentity> {
    if (fs.existsSync(this.identityFile)) {
      // The credential is the identity; the server's address may change between starts.
      return JSON.parse(fs.readFileSync(this.identityFile, 'utf8')) as StoredIdentity;
    }
    if (!this.options.token) throw new Error(`no runner credential in ${this.identityFile}; pass --token with a registration token`);
    const registerUrl = `${this.serverUrl}/api/v1/runner/register`;
    const response = await fetch(registerUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        token: this.options.token,
        name: this.options.name ?? os.hostname(),
        labels: this.options.labels ?? [],
        max_pods: this.options.maxPods ?? 4,
        version: RUNNER_VERSION,
        os: process.platform,
        arch: process.arch,
      }),
      signal: AbortSignal.timeout(30_000),
    }).catch((error: unknown) => {
      throw new Error(`cannot reach the server at ${registerUrl}: ${networkCause(error)}`);
    });
    const body = (await response.json().catch(() => ({}))) as { runner_id?: number; credential?: string; org?: string; error?: string };
    if (!response.ok || !body.credential || !body.runner_id) {
      throw new Error(`registration failed (${response.status}): ${body.error ?? 'no credential in the answer'}`);
    }
    const identity: StoredIdentity = { server: this.serverUrl, runner_id: body.runner_id, org: body.org ?? '', credential: body.credential };
    fs.writeFileSync(this.identityFile, JSON.stringify(identity, null, 2) + '\n', { mode: 0o600 });
    this.log(`registered as runner ${identity.runner_id} of organization "${identity.org}"`);
    return identity;
  }

  private get serverUrl(): string {
    return this.options.server.replace(/\/+$/, '');
  }

  private connect(): void {
    if (this.stopped) return;
    const url = this.serverUrl.replace(/^http/, 'ws') + '/api/v1/runner/connect';
    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${this.identity!.credential}` }, handshakeTimeout: 10_000 });
    this.socket = socket;
    socket.on('open', () => {
      this.attempt = 0;
      this.sendHello();
      for (const message of this.outbox.splice(0)) this.send(message);
      this.outboxChars = 0;
      const interval = this.options.heartbeatMs ?? 10_000;
      this.heartbeat = setInterval(() => this.send({ type: 'heartbeat', draining: this.draining, pods: this.supervisor.reports() }), interval);
    });
    socket.on('message', (data) => this.onMessage(String(data)));
    socket.on('close', (code, reason) => {
      if (this.heartbeat) clearInterval(this.heartbeat);
      this.heartbeat = null;
      if (this.socket === socket) this.socket = null;
      if (!this.stopped) {
        if (code === 4401) this.log(`the server refused the runner credential: ${String(reason)}`);
        this.scheduleReconnect();
      }
    });
    socket.on('error', (error) => {
      if (!this.stopped && this.attempt <= 1) this.log(`runner connection to ${url}: ${error.message}`);
    });
  }

  /** Exponential backoff from 0.5 s to 30 s, with full jitter so a restarted server is not stampeded. */
  private scheduleReconnect(): void {
    const cap = Math.min(30_000, 500 * 2 ** Math.min(this.attempt, 6));
    this.attempt++;
    this.reconnectTimer = setTimeout(() => this.connect(), Math.random() * cap);
  }

  private sendHello(): void {
    this.send({
      type: 'hello',
      version: RUNNER_VERSION,
      os: process.platform,
      arch: process.arch,
      labels: this.options.labels ?? [],
      max_pods: this.options.maxPods ?? 4,
      agents: this.agents,
      sandbox: this.supervisor.sandboxMode,
      draining: this.draining,
      pods: this.supervisor.reports(),
      finished: [...this.unacked.values()],
    });
  }

  private send(message: RunnerBody): void {
    if (this.socket?.readyState === WebSocket.OPEN) sendCoalesced(this.socket, encode(message));
  }

  private sendOrKeep(message: RunnerBody & { type: 'pod_started' | 'pod_output' }): void {
    if (this.socket?.readyState === WebSocket.OPEN) {
      sendCoalesced(this.socket, encode(message));
      return;
    }
    this.outbox.push(message);
    if (message.type === 'pod_output') this.outboxChars += message.data.length;
    while (this.outboxChars > OUTBOX_MAX_CHARS) {
      const index = this.outbox.findIndex((m) => m.type === 'pod_output');
      const [dropped] = this.outbox.splice(index, 1);
      if (dropped.type === 'pod_output') this.outboxChars -= dropped.data.length;
    }
  }

  private onMessage(raw: string): void {
    let message: ServerMessage;
    try {
      message = decodeServerMessage(raw);
    } catch (error) {
      this.log(`ignoring a message from the server: ${(error as Error).message}`);
      return;
    }
    switch (message.type) {
      case 'welcome':
        this.runnerId = message.runner_id;
        for (const resolve of this.welcomeWaiters.splice(0)) resolve();
        return;
      case 'start_pod':
        if (this.supervisor.has(message.pod.key)) return;
        if (this.draining) {
          this.unacked.set(message.pod.key, {
            key: message.pod.key,
            outcome: 'failed',
            exit_code: null,
            error_message: 'the runner is draining and accepts no new pods',
            session_id: null,
            result: null,
            usage: null,
          });
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
        return;
    }
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
    while (this.unacked.size > 0 && this.socket && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await this.close();
    await this.supervisor.close();
  }

  async close(): Promise<void> {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.heartbeat) clearInterval(this.heartbeat);
    const socket = this.socket;
    this.socket = null;
    if (socket && socket.readyState === WebSocket.OPEN) {
      await new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        socket.close(1000, 'runner stopping');
        setTimeout(resolve, 2000).unref();
      });
    } else socket?.terminate();
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
  }
}
