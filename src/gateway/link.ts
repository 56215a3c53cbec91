import crypto from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { WebSocket } from 'ws';
import type { DomainContext } from '../domain/context.ts';
import { podFinished, podNetworkRefused, podStarted } from '../domain/pods/lifecycle.ts';
import { PodOutputSink } from '../domain/pods/output.ts';
import {
  credentialStored,
  desiredPods,
  notifiedPod,
  rotatedCredential,
  runnerBeat,
  runnerHello,
  runnerOrgSlug,
  settleDesiredPod,
  startSpec,
} from '../domain/runners/link.ts';
import { runnerDisconnected } from '../domain/runners/status.ts';
import { recordModelCall } from '../domain/usage/service.ts';
import { PatchParts } from '../domain/deliveries/patch-parts.ts';
import { workspaceRemovalMessages, workspaceRemoved } from '../domain/runners/workspace-removals.ts';
import type { PodRow, RunnerRow } from '../store/schema-runners.ts';
import { CLOSE_REVOKED, HEARTBEAT_INTERVAL_MS, decodeRunnerMessage, encode, sendCoalesced, type PodReport, type RunnerMessage, type ServerBody } from '../protocol/runner-link.ts';
import { LinkQueue } from './link-queue.ts';

/** How long a closing link waits for the runner's close frame before dropping the socket. */
const CLOSE_HANDSHAKE_MS = 2_000;

/**
 * One runner's link on this replica: the socket, the order of its messages, and what the link
 * remembers between them (pods sent, a credential awaiting confirmation). Each message is handed
 * to a domain function (src/domain/runners/link.ts, docs/design.md "The runner link").
 */
export class RunnerLink {
  readonly connectionId = crypto.randomUUID();
  /** Messages are applied in order, one at a time but for those about distinct single pods (./link-queue.ts). */
  private readonly queue: LinkQueue;
  /** Pods the runner has, from its last report, plus the ones sent to it since. */
  private readonly known = new Set<string>();
  /**
   * When each start_pod went out: a report written before the runner received it does not list
   * the pod yet, and re-sending it then would only repeat work (a burst of N pods costs N² sends).
   */
  private readonly startSentAt = new Map<string, number>();
  private greeted = false;
  private draining = false;
  /** A notification's reconcile that is queued and has not started yet. */
  private wokenReconcile: Promise<void> | null = null;
  private orgSlugRead: Promise<string> | null = null;
  /** Resolves once the socket has closed and the disconnect is queued. */
  private readonly closed: Promise<void>;
  private readonly output: PodOutputSink;
  /** A credential sent to the runner that it has not confirmed storing yet. */
  private pendingCredential: { hash: string; fingerprint: string } | null = null;
  private outputLimitSent: number | null = null;
  /** Large patches arriving in parts (docs/agents.md "Getting the work back"). */
  private readonly patchParts: PatchParts;
  /** Workspace removals sent on this link (each once a connection; see sendWorkspaceRemovals). */
  private readonly removalsSent = new Set<string>();

  constructor(
    private readonly ctx: DomainContext,
    private readonly socket: WebSocket,
    private readonly runner: RunnerRow,
    private readonly apiUrl: () => string,
    private readonly log: FastifyBaseLogger,
    private readonly onGone: () => void,
  ) {
    let markClosed!: () => void;
    this.closed = new Promise((resolve) => (markClosed = resolve));
    this.output = new PodOutputSink(ctx, runner, Date.now, (error) => this.log.error({ err: error }, 'writing pod output failed'));
    this.patchParts = new PatchParts(ctx, runner.id);
    this.queue = new LinkQueue((error) => this.log.error({ err: error }, 'runner message failed'));
    socket.on('message', (data) => this.receive(String(data)));
    socket.on('close', () => {
      this.onGone();
      this.enqueue(() => this.output.flushAll());
      this.enqueue(async () => void (await runnerDisconnected(this.ctx, this.runner.id, this.connectionId, this.ctx.now())));
      markClosed();
    });
    socket.on('error', (error) => this.log.warn({ err: error }, 'runner socket error'));
  }

  /** `pod`: the task concerns that one pod only, and may run beside tasks about other pods. */
  private enqueue(task: () => Promise<void>, pod: string | null = null): void {
    this.queue.push(task, pod);
  }

  /** A message from the runner, applied in its turn; one that cannot be decoded closes the link then. */
  private receive(raw: string): void {
    let message: RunnerMessage;
    try {
      message = decodeRunnerMessage(raw);
    } catch (error) {
      this.enqueue(async () => {
        this.log.warn({ err: error }, 'invalid message from runner; closing');
        this.close(4400, (error as Error).message.slice(0, 120));
      });
      return;
    }
    // When it arrived, before it waits its turn: a pod's start is dated by its report's arrival
    // (docs/decisions.md "Runners and pods": started_at), not by how busy the link was then.
    const receivedAt = this.ctx.now();
    this.enqueue(() => this.handle(message, receivedAt), podOf(message));
  }

  private send(message: ServerBody): void {
    if (this.socket.readyState === this.socket.OPEN) sendCoalesced(this.socket, encode(message));
  }

  close(code: number, reason: string): void {
    this.socket.close(code, reason);
  }

  /** Closes the link and waits until the messages received before, and the disconnect, are applied. */
  async shutdown(): Promise<void> {
    this.close(1001, 'server shutting down');
    const timer = setTimeout(() => this.socket.terminate(), CLOSE_HANDSHAKE_MS);
    await this.closed;
    clearTimeout(timer);
    await this.queue.idle();
  }

  /** Tells the runner its organization's output quota, when it is new to the runner (after hello, then when it changes). */
  private async sendOutputLimit(): Promise<void> {
    const limit = await this.output.limit();
    if (limit === this.outputLimitSent) return;
    this.outputLimitSent = limit;
    this.send({ type: 'output_limit', bytes_per_sec: limit });
  }

  /** The runner was deleted: its link closes with a code that tells it not to come back. */
  revoke(): void {
    this.log.info('runner deleted: closing its link');
    this.close(CLOSE_REVOKED, 'this runner was deleted and its credential revoked');
  }

  /**
   * Sends the runner a new credential. The stored one changes only once the runner confirms that it
   * has written the new one to its work dir, so a runner that dies in between keeps a credential
   * that works.
   */
  rotateCredential(): void {
    this.enqueue(async () => {
      if (!this.greeted) return;
      const { credential, ...pending } = rotatedCredential();
      this.pendingCredential = pending;
      this.send({ type: 'rotate_credential', credential });
    });
  }

  private async handle(message: RunnerMessage, receivedAt: number): Promise<void> {
    if (!this.greeted && message.type !== 'hello') {
      this.close(4400, 'the first message must be hello');
      return;
    }
    switch (message.type) {
      case 'hello': {
        this.greeted = true;
        this.draining = message.draining;
        if (!(await runnerHello(this.ctx, this.runner, this.connectionId, message))) {
          this.revoke();
          return;
        }
        this.send({ type: 'welcome', runner_id: this.runner.id, heartbeat_interval_ms: HEARTBEAT_INTERVAL_MS });
        await this.sendOutputLimit();
        for (const result of message.finished) {
          await podFinished(this.ctx, this.runner.id, result);
          this.send({ type: 'ack_exit', key: result.key });
        }
        await this.reconcile(message.pods);
        await this.sendWorkspaceRemovals();
        return;
      }
      case 'heartbeat': {
        const beat = await runnerBeat(this.ctx, this.runner, this.connectionId, { was: this.draining, now: message.draining });
        this.draining = message.draining;
        if (beat === 'revoked') {
          this.revoke();
          return;
        }
        await this.sendOutputLimit();
        await this.reconcile(message.pods);
        return;
      }
      case 'pod_started':
        this.known.add(message.key);
        await podStarted(this.ctx, this.runner.id, message.key, receivedAt);
        return;
      case 'pod_output':
        // PostgreSQL text cannot hold NUL (the whole chunk would be refused and lost): NUL shows
        // as U+FFFD, like the bytes that are not UTF-8.
        await this.output.write(message.key, message.data.replaceAll('\0', '\uFFFD'));
        return;
      case 'pod_exited':
        this.known.delete(message.result.key);
        this.startSentAt.delete(message.result.key);
        // Its output is written whole before the pod shows as ended.
        await this.output.finished(message.result.key);
        await podFinished(this.ctx, this.runner.id, message.result);
        this.send({ type: 'ack_exit', key: message.result.key });
        return;
      case 'pod_network':
        await podNetworkRefused(this.ctx, this.runner.id, message.key, message.refused);
        return;
      case 'model_call':
        await recordModelCall(this.ctx, this.runner.id, message.call);
        return;
      case 'pod_patch':
        await this.patchParts.add(message.key, message.part, message.parts, message.data);
        return;
      case 'workspace_removed':
        if (!message.removed) this.log.warn({ persistent_key: message.persistent_key, error: message.error }, 'the runner kept a deleted loop\'s workspace');
        await workspaceRemoved(this.ctx, this.runner.id, message.persistent_key, message.removed, message.delivery);
        return;
      case 'credential_stored': {
        const pending = this.pendingCredential;
        if (!pending || pending.fingerprint !== message.fingerprint) {
          this.log.warn('the runner confirmed a credential this link did not send; ignored');
          return;
        }
        this.pendingCredential = null;
        if (await credentialStored(this.ctx, this.runner.id, pending.hash)) this.log.info('runner credential rotated');
        return;
      }
      // A new runner → server message: its schema in src/protocol/runner-link.ts, its rule in
      // src/domain/runners/link.ts (or the resource's domain room), its dispatch here.
    }
  }

  /**
   * Brings the runner to the stored desired state. With a report (hello, heartbeat) it also
   * settles pods the runner lost or still runs against orders; without one (a notification)
   * it starts what is missing and stops what it knows the runner has.
   */
  reconcile(report: PodReport[] | null): Promise<void> {
    if (report === null) {
      // Notifications coalesce: one reconcile still waiting in the queue will read every pod stored
      // by then, so a burst of N new pods costs one pass, not N passes over N pods. It stops being
      // "waiting" when it starts, so a notification arriving during a pass queues the next one.
      this.wokenReconcile ??= new Promise((resolve) =>
        this.enqueue(async () => {
          this.wokenReconcile = null;
          try {
            await this.reconcileNow(null);
            await this.sendWorkspaceRemovals();
          } finally {
            resolve();
          }
        }),
      );
      return this.wokenReconcile;
    }
    return this.reconcileNow(report);
  }

  /**
   * Settles one pod named by a notification (placed on this runner, or to be stopped): a burst of
   * N new pods costs N small reads, not N reads of every pod of the runner.
   */
  settlePod(podOrKey: PodRow | string): Promise<void> {
    return new Promise((resolve) =>
      this.enqueue(
        async () => {
          try {
            if (!this.greeted) return;
            const notified = await notifiedPod(this.ctx, this.runner.id, podOrKey);
            if (!notified) return;
            if (notified.wanted === 'run') await this.settleDesired(notified.pod, null);
            else this.stopIfKnown(notified.pod.key, null);
          } finally {
            resolve();
          }
        },
        typeof podOrKey === 'string' ? podOrKey : podOrKey.key,
      ),
    );
  }

  private async reconcileNow(report: PodReport[] | null): Promise<void> {
    if (!this.greeted) return;
    if (report) {
      this.known.clear();
      for (const p of report) this.known.add(p.key);
    }
    const desired = await desiredPods(this.ctx, this.runner.id);
    const desiredKeys = new Set(desired.map((p) => p.key));
    for (const pod of desired) await this.settleDesired(pod, report);
    for (const key of [...this.startSentAt.keys()]) if (!desiredKeys.has(key)) this.startSentAt.delete(key);
    for (const key of [...this.known]) if (!desiredKeys.has(key)) this.stopIfKnown(key, report);
  }

  /** A pod that should run here: sends it if the runner lacks it (the domain settles the rest). */
  private async settleDesired(pod: PodRow, report: PodReport[] | null): Promise<void> {
    const now = Date.now();
    const link = { known: this.known.has(pod.key), reported: report !== null, draining: this.draining, startSentAt: this.startSentAt.get(pod.key) };
    if (!(await settleDesiredPod(this.ctx, pod, link, now))) return;
    this.known.add(pod.key);
    this.startSentAt.set(pod.key, now);
    this.send({ type: 'start_pod', pod: await startSpec(this.ctx, pod, await this.orgSlug(), this.apiUrl()) });
  }

  /** Deleted loops' workspaces the runner is to remove, each sent once a connection (it answers workspace_removed). */
  private async sendWorkspaceRemovals(): Promise<void> {
    if (!this.greeted) return;
    for (const message of await workspaceRemovalMessages(this.ctx, this.runner.id)) {
      if (message.type !== 'remove_workspace' || this.removalsSent.has(message.persistent_key)) continue;
      this.removalsSent.add(message.persistent_key);
      this.send(message);
    }
  }

  /** The slug of the runner's organization (its pods' `DROVER_ORG`), read once. */
  private orgSlug(): Promise<string> {
    this.orgSlugRead ??= runnerOrgSlug(this.ctx, this.runner);
    return this.orgSlugRead;
  }

  /** A pod that should not run here: the runner is told to stop it if it has it. */
  private stopIfKnown(key: string, report: PodReport[] | null): void {
    if (!this.known.has(key)) return;
    this.send({ type: 'stop_pod', key, reason: 'terminated' });
    // Without a report, the runner's next one says whether it still has the pod.
    if (!report) this.known.delete(key);
  }
}

/** The one pod a runner message is about, when it is about one pod only (its steps may run beside other pods'). */
function podOf(message: RunnerMessage): string | null {
  switch (message.type) {
    case 'pod_started':
    case 'pod_output':
    case 'pod_network':
      return message.key;
    case 'pod_exited':
      return message.result.key;
    default:
      return null;
  }
}
