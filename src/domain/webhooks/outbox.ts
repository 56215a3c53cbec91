import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { Executor } from '../../store/db.ts';
import * as deliveries from '../../store/webhooks.ts';
import type { WebhookDeliveryRow } from '../../store/schema-loops.ts';
import type { DomainContext } from '../context.ts';
import { resolveCallbackTarget } from './address-guard.ts';
import { signedHeaders } from './signing.ts';

/** Waits after attempt 1, 2, …: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h (contract §3). */
export const RETRY_SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000];
const LEASE_MS = 60_000;

export interface WebhookSubject {
  type: string;
  id: number;
}

/** Records an event for delivery, in the caller's transaction (nothing is sent before it commits). */
export async function enqueueWebhook(
  trx: Executor,
  ctx: DomainContext,
  event: { orgId: number; url: string; secret: string; type: string; data: unknown; subject: WebhookSubject },
): Promise<void> {
  if (!ctx.secrets) throw new Error('webhooks need the secret box (the signing secret is stored encrypted)');
  const now = ctx.now();
  await deliveries.insertDelivery(trx, {
    org_id: event.orgId,
    event_id: `msg_${crypto.randomBytes(16).toString('hex')}`,
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
}

export interface WebhookSenderOptions {
  allowPrivate: boolean;
  log: FastifyBaseLogger;
  intervalMs?: number;
  timeoutMs?: number;
  schedule?: number[];
  batch?: number;
  /** A delivery reached its end: `delivered`, or `failed` (410, or the schedule ran out). */
  onSettled?: (subject: WebhookSubject, status: 'delivered' | 'failed') => Promise<void>;
}

interface AttemptResult {
  statusCode: number | null;
  error: string | null;
}

/**
 * Sends due deliveries of the outbox: signed per Standard Webhooks, 10 s timeout, no redirects,
 * retried on the schedule; 2xx delivers, 410 gives up at once. Safe with several replicas.
 */
export class WebhookSender {
  private static readonly senders = new Set<WebhookSender>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private again = false;

  constructor(
    private readonly ctx: DomainContext,
    private readonly options: WebhookSenderOptions,
  ) {}

  /** New work was enqueued in this process: senders look now instead of at their next interval. */
  static nudge(): void {
    for (const sender of WebhookSender.senders) setImmediate(() => void sender.runOnce().catch(() => {}));
  }

  start(): void {
    if (this.timer) return;
    WebhookSender.senders.add(this);
    this.timer = setInterval(() => void this.runOnce().catch((error) => this.options.log.warn({ err: error }, 'webhook pass failed')), this.options.intervalMs ?? 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    WebhookSender.senders.delete(this);
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => {});
  }

  /** One pass over due deliveries; returns how many were attempted. */
  runOnce(): Promise<number> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.pass().finally(() => {
      this.running = null;
      if (this.again) {
        this.again = false;
        void this.runOnce().catch(() => {});
      }
    });
    return this.running;
  }

  private async pass(): Promise<number> {
    const now = this.ctx.now();
    const due = await this.ctx.store.db
      .transaction()
      .execute((trx) => deliveries.claimDueDeliveries(trx, this.ctx.store.kind, now, this.options.batch ?? 20, now + LEASE_MS));
    await Promise.all(due.map((d) => this.attempt(d)));
    return due.length;
  }

  private async attempt(delivery: WebhookDeliveryRow): Promise<void> {
    const result = await this.post(delivery);
    const attempts = delivery.attempts + 1;
    const now = this.ctx.now();
    const schedule = this.options.schedule ?? RETRY_SCHEDULE_MS;
    const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const gone = result.statusCode === 410;
    const exhausted = attempts > schedule.length;
    const status = ok ? 'delivered' : gone || exhausted ? 'failed' : 'pending';
    await deliveries.recordAttempt(this.ctx.store.db, delivery.id, {
      status,
      attempts,
      next_attempt_at: status === 'pending' ? now + schedule[attempts - 1] : now,
      last_status_code: result.statusCode,
      last_error: result.error,
      updated_at: now,
    });
    if (status !== 'pending') {
      await this.options.onSettled?.({ type: delivery.subject_type, id: delivery.subject_id }, status).catch((error) =>
        this.options.log.warn({ err: error }, 'recording a settled webhook failed'),
      );
    }
  }

  private async post(delivery: WebhookDeliveryRow): Promise<AttemptResult> {
    let target;
    try {
      target = await resolveCallbackTarget(delivery.url, this.options.allowPrivate);
    } catch (error) {
      return { statusCode: null, error: (error as Error).message };
    }
    const secret = this.ctx.secrets!.decrypt(delivery.secret_encrypted);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Drover-Webhooks/1',
      // Signed with the wall clock: receivers check the timestamp against theirs (the schedule uses ctx.now).
      ...signedHeaders(secret, delivery.event_id, new Date(), delivery.payload),
    };
    // Connect to the address that was checked, whatever DNS says by now.
    const lookup: LookupFunction = (_host, options, callback) => {
      if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: target.address, family: target.family }]);
      else callback(null, target.address, target.family);
    };
    const client = target.url.protocol === 'https:' ? https : http;
    const timeoutMs = this.options.timeoutMs ?? 10_000;
    return new Promise<AttemptResult>((resolve) => {
      const request = client.request(target.url, { method: 'POST', headers, lookup, timeout: timeoutMs }, (response) => {
        response.resume();
        const code = response.statusCode ?? 0;
        const redirect = code >= 300 && code < 400 ? `redirect to ${response.headers.location ?? '?'} not followed` : null;
        resolve({ statusCode: code, error: redirect ?? (code >= 200 && code < 300 ? null : `HTTP ${code}`) });
      });
      request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
      request.on('error', (error) => resolve({ statusCode: null, error: error.message }));
      request.end(delivery.payload);
    });
  }
}
