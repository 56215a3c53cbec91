import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { FastifyBaseLogger } from 'fastify';
import type { Executor } from '../../store/db.ts';
import type { WebhookDeliveryRow } from '../../store/schema-loops.ts';
import * as deliveries from '../../store/webhooks.ts';
import type { DomainContext } from '../context.ts';
import { CallbackTargetError, pinnedLookup, resolveCallbackTarget, type ResolvedTarget } from '../../net/address-guard.ts';
import { signedHeaders } from './signing.ts';

/** Waits after attempt 1, 2, …: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h (docs/api.md); 7 attempts in all. */
export const RETRY_SCHEDULE_MS: readonly number[] = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000];
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** How long a claimed delivery stays invisible to other passes; longer than any attempt takes. */
const MIN_LEASE_MS = 60_000;
/** After an in-process nudge, one more look: the enqueuing transaction may not have committed yet. */
const NUDGE_FOLLOW_UP_MS = 100;

/** What a delivery is about (e.g. `{type: 'loop_run', id: <run id>}`), handed back by `onSettled` and `onRetrying`. */
export interface WebhookSubject {
  type: string;
  id: number;
}

export interface WebhookEvent {
  orgId: number;
  url: string;
  /** The Standard Webhooks secret, `whsec_<base64>`; stored encrypted with the delivery. */
  secret: string;
  /** The event type, e.g. `loop.run.finished`. */
  type: string;
  data: unknown;
  subject: WebhookSubject;
}

/**
 * Records an event for delivery in the caller's transaction (nothing is sent unless it commits)
 * and nudges this process's senders. The body is fixed now, `{type, timestamp, data}`, and sent
 * byte for byte on every attempt under one `webhook-id`, which is returned (`msg_…`).
 */
export async function enqueueWebhook(trx: Executor, ctx: DomainContext, event: WebhookEvent): Promise<string> {
  // The loop may be deleted before the last retry, so the delivery keeps its own (encrypted) copy.
  if (!ctx.secrets) throw new Error('webhooks need the secret box (the signing secret is stored encrypted)');
  const now = ctx.now();
  const eventId = `msg_${crypto.randomBytes(16).toString('hex')}`;
  await deliveries.insertDelivery(trx, {
    org_id: event.orgId,
    event_id: eventId,
    url: event.url,
    secret_encrypted: ctx.secrets.encrypt(event.secret),
    payload: JSON.stringify({ type: event.type, timestamp: new Date(now).toISOString(), data: event.data }),
    status: 'pending',
    attempts: 0,
    next_attempt_at: now,
    last_status_code: null,
    last_error: null,
    subject_type: event.subject.type,
    subject_id: event.subject.id,
    created_at: now,
    updated_at: now,
  });
  WebhookSender.nudge();
  return eventId;
}

export interface WebhookSenderOptions {
  /** DROVER_WEBHOOK_ALLOW_PRIVATE: let callbacks reach loopback, private and link-local addresses. */
  allowPrivate: boolean;
  log: FastifyBaseLogger;
  /** How often to look for due deliveries besides nudges (default 1 s). */
  intervalMs?: number;
  /** Budget of one attempt, DNS included (default 10 s). */
  timeoutMs?: number;
  /** Waits between attempts (default RETRY_SCHEDULE_MS); the delivery fails after the last. */
  schedule?: readonly number[];
  /** Deliveries claimed per pass (default 20). */
  batch?: number;
  /** A delivery reached its end: `delivered`, or `failed` (410, or the schedule ran out). Called once per delivery. */
  onSettled?: (subject: WebhookSubject, status: 'delivered' | 'failed') => void | Promise<void>;
  /** An attempt failed and the delivery waits for its next one (its log has one attempt more). */
  onRetrying?: (subject: WebhookSubject) => void | Promise<void>;
}

interface AttemptResult {
  statusCode: number | null;
  error: string | null;
  /** The address guard refused the URL: not retried. */
  refused?: boolean;
}

/**
 * Sends due deliveries of the outbox: signed per Standard Webhooks, 10 s timeout, no redirects,
 * retried on the schedule; 2xx delivers, 410 gives up at once. Safe with several replicas: a
 * pass claims its rows (skip locked, with a lease) before sending.
 */
export class WebhookSender {
  private static readonly started = new Set<WebhookSender>();
  private timer: NodeJS.Timeout | null = null;
  private followUp: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly ctx: DomainContext,
    private readonly options: WebhookSenderOptions,
  ) {}

  /** New work was enqueued in this process: started senders look now instead of at their next interval. */
  static nudge(): void {
    for (const sender of WebhookSender.started) sender.wake();
  }

  start(): void {
    if (this.timer) return;
    this.stopped = false;
    WebhookSender.started.add(this);
    this.timer = setInterval(() => this.background(), this.options.intervalMs ?? 1000);
    this.timer.unref();
    this.background();
  }

  /** Stops the loop and waits for the pass in flight (its attempts end within the timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    WebhookSender.started.delete(this);
    if (this.timer) clearInterval(this.timer);
    if (this.followUp) clearTimeout(this.followUp);
    this.timer = null;
    this.followUp = null;
    while (this.running) await this.running.catch(() => {});
  }

  /**
   * One pass over due deliveries; resolves to how many were attempted. A call while a pass is
   * running joins it and asks for one more pass right after.
   */
  runOnce(): Promise<number> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const pass = this.pass().finally(() => {
      this.running = null;
      if (this.again && !this.stopped) {
        this.again = false;
        this.background();
      }
    });
    this.running = pass;
    return pass;
  }

  private wake(): void {
    this.background();
    this.followUp ??= setTimeout(() => {
      this.followUp = null;
      this.background();
    }, NUDGE_FOLLOW_UP_MS);
    this.followUp.unref();
  }

  private background(): void {
    if (this.stopped) return;
    this.runOnce().catch((error: unknown) => this.options.log.warn({ err: error }, 'webhook pass failed'));
  }

  private get timeoutMs(): number {
    return this.options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  }

  private async pass(): Promise<number> {
    const now = this.ctx.now();
    const lease = Math.max(MIN_LEASE_MS, 2 * this.timeoutMs);
    const due = await this.ctx.store.transaction((trx) => deliveries.claimDueDeliveries(trx, now, this.options.batch ?? 20, now + lease));
    const outcomes = await Promise.allSettled(due.map((d) => this.attempt(d)));
    for (const outcome of outcomes) {
      // The row stays leased and is tried again when the lease ends.
      if (outcome.status === 'rejected') this.options.log.warn({ err: outcome.reason }, 'recording a webhook attempt failed');
    }
    return due.length;
  }

  private async attempt(delivery: WebhookDeliveryRow): Promise<void> {
    const attemptedAt = this.ctx.now();
    const started = performance.now();
    const result = await this.post(delivery);
    const durationMs = Math.round(performance.now() - started);
    const attempts = delivery.attempts + 1;
    const now = this.ctx.now();
    const schedule = this.options.schedule ?? RETRY_SCHEDULE_MS;
    const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const gone = result.statusCode === 410;
    // A URL the address guard refuses stays refused: retrying it for hours would only repeat that (docs/api.md "Callbacks and repositories").
    const status = ok ? 'delivered' : gone || result.refused || attempts > schedule.length ? 'failed' : 'pending';
    const changed = await this.ctx.store.transaction(async (trx) => {
      // The attempt happened whatever its outcome's fate: it joins the delivery's log either way.
      await deliveries.insertAttempt(trx, {
        delivery_id: delivery.id,
        attempt: attempts,
        attempted_at: attemptedAt,
        status_code: result.statusCode,
        error: result.error,
        duration_ms: durationMs,
      });
      return deliveries.recordAttempt(trx, delivery.id, delivery.attempts, {
        status,
        attempts,
        next_attempt_at: status === 'pending' ? now + schedule[attempts - 1] : now,
        last_status_code: result.statusCode,
        last_error: result.error,
        updated_at: now,
      });
    });
    const log = { webhookId: delivery.event_id, url: delivery.url, attempt: attempts, statusCode: result.statusCode, error: result.error };
    if (!changed) {
      this.options.log.warn(log, 'webhook attempt outlived its lease; its outcome was not recorded');
      return;
    }
    if (status === 'pending') this.options.log.info(log, 'webhook attempt failed; will retry');
    else if (status === 'failed') this.options.log.warn(log, 'webhook delivery failed for good');
    const subject = { type: delivery.subject_type, id: delivery.subject_id };
    try {
      if (status === 'pending') await this.options.onRetrying?.(subject);
      else await this.options.onSettled?.(subject, status);
    } catch (error) {
      this.options.log.warn({ err: error, ...log }, `recording a ${status === 'pending' ? 'retried' : 'settled'} webhook failed`);
    }
  }

  /** One attempt; never throws: every way of not getting a 2xx comes back as an error text. */
  private async post(delivery: WebhookDeliveryRow): Promise<AttemptResult> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.timeoutMs);
    try {
      const target = await abortable(resolveCallbackTarget(delivery.url, this.options.allowPrivate), controller.signal);
      return await this.request(delivery, target, controller.signal);
    } catch (error) {
      if (controller.signal.aborted) return { statusCode: null, error: this.timeoutText };
      return { statusCode: null, error: (error as Error).message, refused: error instanceof CallbackTargetError && error.refused };
    } finally {
      clearTimeout(timer);
    }
  }

  private get timeoutText(): string {
    return `no answer within ${this.timeoutMs / 1000} s`;
  }

  private request(delivery: WebhookDeliveryRow, target: ResolvedTarget, signal: AbortSignal): Promise<AttemptResult> {
    if (!this.ctx.secrets) throw new Error('webhooks need the secret box to read their signing secret');
    const secret = this.ctx.secrets.decrypt(delivery.secret_encrypted);
    const body = Buffer.from(delivery.payload, 'utf8');
    const headers = {
      'content-type': 'application/json',
      'content-length': String(body.length),
      'user-agent': 'Drover-Webhooks/1',
      // Signed with the wall clock: receivers check the timestamp against theirs (the retry
      // schedule uses ctx.now).
      ...signedHeaders(secret, delivery.event_id, new Date(), delivery.payload),
    };
    // Connect to the address that was checked, whatever DNS says by now (an IP literal skips it).
    const lookup = pinnedLookup(target);
    const client = target.url.protocol === 'https:' ? https : http;
    return new Promise<AttemptResult>((resolve) => {
      // agent: false: a fresh connection every time, never a pooled one opened for another address.
      const request = client.request(target.url, { method: 'POST', headers, lookup, agent: false, signal }, (response) => {
        const code = response.statusCode ?? 0;
        // The body is not needed; a 3xx is an answer, never followed.
        response.destroy();
        const error = code >= 200 && code < 300 ? null : code >= 300 && code < 400 ? `HTTP ${code}: redirect to ${response.headers.location ?? '(no location)'} not followed` : `HTTP ${code}`;
        resolve({ statusCode: code, error });
      });
      request.on('error', (error) => resolve({ statusCode: null, error: signal.aborted ? this.timeoutText : error.message }));
      request.end(body);
    });
  }
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error('aborted'));
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
