import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { Authenticator } from '../domain/auth/authenticate.ts';
import { CredentialStreams, type StreamCaps } from '../domain/auth/credential-streams.ts';
import type { DomainContext } from '../domain/context.ts';
import { callbackRetrying, callbackSettled } from '../domain/loops/callbacks.ts';
import { followPod } from '../domain/loops/run-follow.ts';
import { QueuePromoter } from '../domain/pods/queue.ts';
import type { Quotas } from '../domain/quotas/model.ts';
import type { SecretBox } from '../domain/secrets.ts';
import { WebhookSender } from '../domain/webhooks/outbox.ts';
import { EventHub } from '../events/hub.ts';
import { listenForEvents } from '../events/listener.ts';
import { PodOutputSignals } from '../events/output-signals.ts';
import { EventRetention } from '../events/retention.ts';
import { RunnerGateway } from '../gateway/links.ts';
import { InProcessNotifier, ReplicasNotifier, type RunnerNotifier } from '../gateway/notifier.ts';
import { addEventSubscribers } from '../metrics.ts';
import { CronScheduler, type CronOptions } from '../scheduler/cron.ts';
import { Housekeeping } from '../scheduler/housekeeping.ts';
import { LivenessSweeper, type LivenessOptions } from '../scheduler/liveness.ts';
import type { Store } from '../store/db.ts';
import { inFlight, mergeRequestsSettled } from '../domain/deliveries/merge-requests.ts';
import { StoreListener } from '../store/notifications.ts';

/**
 * The callbacks through which the domain reaches the parts of a running server (the runner
 * gateway, the pod queue, loop runs, the caches and the event hub). Optional in `DomainContext`
 * (a seed script or a store test has no server), required here: the runtime cannot forget one.
 */
type Wired = 'wakeRunner' | 'runnerCommand' | 'podChanged' | 'slotFreed' | 'apiKeyRevoked' | 'orgChanged' | 'podOutputChanged';
export type RuntimeContext = DomainContext & Required<Pick<DomainContext, Wired>>;

/** The background loops of `drover serve`; tests that drive time themselves run without them. */
export interface LoopSettings {
  liveness: LivenessOptions;
  cron: CronOptions;
  /** How long the event log keeps events (DROVER_EVENT_RETENTION_*). */
  eventRetentionMs: number;
  /** DROVER_WEBHOOK_ALLOW_PRIVATE. */
  webhookAllowPrivate: boolean;
}

export interface RuntimeOptions {
  store: Store;
  now?: () => number;
  secrets?: SecretBox;
  providerTimeoutMs?: number;
  /**
   * Other replicas may hold runner links (`drover serve` on PostgreSQL): "runner N has work" travels
   * through the store's notifications. Default: in-process, for one replica (tests building one app).
   */
  replicas?: boolean;
  /** The base URL agents call back on (DROVER_PUBLIC_URL); default: the address the server listens on. */
  publicUrl?: string | null;
  defaultAgent?: string;
  /** DROVER_WEBHOOK_ALLOW_PRIVATE: callback URLs may name private addresses (checked at create and update). */
  webhookAllowPrivate?: boolean;
  quotas?: Quotas;
  streamCaps?: StreamCaps;
  logger?: FastifyBaseLogger;
  loops?: LoopSettings;
}

/**
 * Everything of a running server that is not HTTP: the domain context and what its callbacks
 * reach, the runner gateway, the event hub and every background loop, with one start and one stop.
 * The Fastify app (app.ts) is built over it and only routes requests into it.
 */
export class Runtime {
  readonly ctx: RuntimeContext;
  readonly log: FastifyBaseLogger;
  readonly events: EventHub;
  readonly outputSignals: PodOutputSignals;
  readonly gateway: RunnerGateway;
  readonly authenticator: Authenticator;
  readonly credentialStreams: CredentialStreams;
  readonly podQueue: QueuePromoter;
  private readonly notifier: RunnerNotifier;
  /** The replica's one LISTEN connection (PostgreSQL). */
  private readonly listener: StoreListener;
  private readonly loops: { start(): void; stop(): void | Promise<void> }[] = [];
  /** Where this server is reached when DROVER_PUBLIC_URL is unset: set once it listens. */
  private origin: () => string | null = () => null;
  private stopping: Promise<void> | null = null;

  constructor(private readonly options: RuntimeOptions) {
    const store = options.store;
    this.log = options.logger ?? pino({ level: 'silent' });
    this.listener = new StoreListener(store, (error) => this.log.warn({ err: error }, 'store notifications: connection lost'));
    this.notifier = options.replicas && store.sharedByReplicas ? new ReplicasNotifier(store, this.listener) : new InProcessNotifier();
    this.outputSignals = new PodOutputSignals(store, (error) => this.log.warn({ err: error }, 'output notification failed'));
    this.events = new EventHub(store, (error) => this.log.error({ err: error }, 'reading the event log failed'), addEventSubscribers);
    const ctx: RuntimeContext = {
      store,
      now: options.now ?? Date.now,
      secrets: options.secrets,
      providerTimeoutMs: options.providerTimeoutMs,
      wakeRunner: (runnerId, pod) => this.gateway.wake(runnerId, pod),
      runnerCommand: (runnerId, command) => this.gateway.command(runnerId, command),
      podChanged: (pod) => followPod(ctx, pod),
      slotFreed: (orgId) => this.podQueue.wake(orgId),
      apiKeyRevoked: (keyId) => {
        this.authenticator.forget(keyId);
        this.credentialStreams.credentialEnded(keyId);
      },
      orgChanged: (orgId) => this.authenticator.forgetOrg(orgId),
      defaultAgent: options.defaultAgent,
      webhookAllowPrivate: options.webhookAllowPrivate,
      quotas: options.quotas,
      // One process (SQLite): the writer wakes this hub; with PostgreSQL every replica hears NOTIFY instead.
      eventsWritten: !store.sharedByReplicas ? (orgId) => this.events.wake(orgId) : undefined,
      podOutputChanged: (podId) => this.outputSignals.appended(podId),
    };
    this.ctx = ctx;
    this.authenticator = new Authenticator(ctx);
    this.credentialStreams = new CredentialStreams(ctx, options.streamCaps, (error) => this.log.warn({ err: error }, 'checking the credentials of open streams failed'));
    this.podQueue = new QueuePromoter(() => ctx, this.log);
    this.gateway = new RunnerGateway(ctx, this.notifier, () => this.apiUrl(), this.log);
    listenForEvents(this.listener, this.events, this.outputSignals);
    if (options.loops) this.addLoops(options.loops);
  }

  private addLoops(settings: LoopSettings): void {
    const { ctx, log } = this;
    this.loops.push(
      new Housekeeping(ctx, log),
      new EventRetention(ctx.store, settings.eventRetentionMs, Date.now, (error) => log.warn({ err: error }, 'pruning the event log failed')),
      new LivenessSweeper(ctx, settings.liveness, log),
      new CronScheduler(ctx, settings.cron, log),
      new WebhookSender(ctx, {
        allowPrivate: settings.webhookAllowPrivate,
        log,
        onSettled: (subject, status) => callbackSettled(ctx, subject, status),
        onRetrying: (subject) => callbackRetrying(ctx, subject),
      }),
    );
  }

  /** The URL agents and runners call back on. */
  private apiUrl(): string {
    const url = this.options.publicUrl ?? this.origin();
    if (!url) throw new Error('the server is not listening yet and DROVER_PUBLIC_URL is unset');
    return url;
  }

  /** Tells the runtime where the HTTP server listens (app.ts calls it). */
  useOrigin(origin: () => string | null): void {
    this.origin = origin;
  }

  /** Starts listening for other replicas' events, then every background loop. */
  async start(): Promise<void> {
    await this.listener.start();
    for (const loop of this.loops) loop.start();
  }

  /** Stops the background loops (first, so none starts work while the server closes). */
  async stopLoops(): Promise<void> {
    for (const loop of this.loops) await loop.stop();
    this.loops.length = 0;
  }

  /** Stops everything: the loops, then the runner links (recording their disconnects), the queue, the listeners. Idempotent. */
  stop(): Promise<void> {
    return (this.stopping ??= (async () => {
      await this.stopLoops();
      await this.gateway.close();
      // Merge requests being opened for pods' work are recorded before the store closes (docs/agents.md "Getting the work back").
      if (inFlight.size > 0) this.log.info({ merge_requests: inFlight.size }, 'waiting for merge requests being opened');
      if (!(await mergeRequestsSettled())) this.log.warn('merge requests still being opened at shutdown; left unrecorded');
      await this.podQueue.idle();
      await this.notifier.close();
      await this.listener.close();
      this.credentialStreams.close();
    })());
  }
}
