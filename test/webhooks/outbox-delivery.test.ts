/**
 * Delivery of the webhook outbox (`callback_url`, docs/api.md "Loops and runs") driven pass by pass: deliveries are
 * enqueued with `enqueueWebhook` inside a transaction and sent by `WebhookSender.runOnce()` to
 * real `node:http` receivers on loopback. Every request a receiver gets is checked with the
 * `standardwebhooks` package (`new Webhook(secret).verify(body, headers)`), whose timestamp
 * tolerance is 5 minutes against the real clock: the sender signs with the wall clock at send
 * time while the retry schedule follows the injected clock, so the clock here may run hours or
 * years ahead of real time and every signature must still verify.
 */
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DomainContext } from '../../src/domain/context.ts';
import { SecretBox } from '../../src/domain/secrets.ts';
import { enqueueWebhook, RETRY_SCHEDULE_MS, WebhookSender, type WebhookSenderOptions, type WebhookSubject } from '../../src/domain/webhooks/outbox.ts';
import { generateWebhookSecret } from '../../src/domain/webhooks/signing.ts';
import type { DatabaseKind, Store } from '../../src/store/db.ts';
import type { WebhookDeliveryRow } from '../../src/store/schema-loops.ts';
import * as deliveries from '../../src/store/webhooks.ts';
import { createTestStore, DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { startWebhookReceiver, type WebhookReceiver, type WebhookReceiverOptions } from '../helpers/webhook-receiver.ts';
import { unusedPort } from '../helpers/ports.ts';

const log = pino({ level: 'silent' });
const SECOND = 1_000;
const MINUTE = 60 * SECOND;

describe.each(DATABASES)('webhook outbox delivery (%s)', (kind: DatabaseKind) => {
  let database: TestDatabase;
  let secrets: SecretBox;
  /** The injected clock (ms); it starts at the real time and is moved by the tests. */
  let clock: number;
  let ctx: DomainContext;
  let secret: string;
  let settled: { subject: WebhookSubject; status: 'delivered' | 'failed' }[];
  let nextSubject: number;
  const stores = new Set<Store>();
  const senders: WebhookSender[] = [];
  const receivers: WebhookReceiver[] = [];

  const contextFor = (store: Store): DomainContext => ({ store, now: () => clock, secrets });

  beforeEach(async () => {
    const created = await createTestStore(kind);
    database = created.database;
    stores.add(created.store);
    secrets = new SecretBox(randomBytes(32));
    clock = Date.now();
    ctx = contextFor(created.store);
    secret = generateWebhookSecret();
    settled = [];
    nextSubject = 0;
  });

  afterEach(async () => {
    for (const sender of senders.splice(0)) await sender.stop();
    for (const receiver of receivers.splice(0)) await receiver.close();
    for (const store of stores) await store.close();
    stores.clear();
    await database.cleanup();
  });

  async function reopen(): Promise<DomainContext> {
    const store = database.open();
    stores.add(store);
    return contextFor(store);
  }

  async function closeStore(store: Store): Promise<void> {
    stores.delete(store);
    await store.close();
  }

  function newSender(options: Partial<WebhookSenderOptions> = {}, on: DomainContext = ctx): WebhookSender {
    const sender = new WebhookSender(on, {
      allowPrivate: true,
      log,
      timeoutMs: 5 * SECOND,
      onSettled: (subject, status) => {
        settled.push({ subject, status });
      },
      ...options,
    });
    senders.push(sender);
    return sender;
  }

  async function enqueue(url: string, on: DomainContext = ctx): Promise<{ eventId: string; subject: WebhookSubject }> {
    const subject = { type: 'loop_run', id: ++nextSubject };
    const eventId = await on.store.db.transaction().execute((trx) =>
      enqueueWebhook(trx, on, {
        orgId: 1,
        url,
        secret,
        type: 'loop.run.finished',
        data: { loop: { id: 7, slug: 'nightly', name: 'Nightly' }, run: { id: subject.id, status: 'completed' } },
        subject,
      }),
    );
    return { eventId, subject };
  }

  async function row(eventId: string, on: DomainContext = ctx): Promise<WebhookDeliveryRow> {
    const found = await deliveries.findDeliveryByEventId(on.store.db, eventId);
    if (!found) throw new Error(`no delivery ${eventId}`);
    return found;
  }

  /** A receiver verifying every request's signature with `secret`, answering `reply(hit, n)`; closed after the test. */
  async function receiver(reply: WebhookReceiverOptions['reply'], options: Omit<WebhookReceiverOptions, 'secret' | 'reply'> = {}): Promise<WebhookReceiver> {
    const made = await startWebhookReceiver({ secret, reply, ...options });
    receivers.push(made);
    return made;
  }

  function expectAllVerified(r: WebhookReceiver): void {
    for (const request of r.hits) {
      expect(request.verifyError, `signature of ${request.webhookId}`).toBeNull();
      expect(request.method).toBe('POST');
      expect(request.headers['content-type']).toBe('application/json');
      // Signed with the wall clock at send time, not with the injected clock.
      expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    }
  }

  it('500, 500, then 200: three attempts under one webhook-id, 5 s and 5 min apart, then delivered and settled once', async () => {
    const r = await receiver((_req, n) => ({ status: n <= 2 ? 500 : 200 }));
    const enqueuedAt = clock;
    const { eventId, subject } = await enqueue(r.url);
    expect(eventId).toMatch(/^msg_/);
    const sender = newSender();

    expect(await sender.runOnce()).toBe(1);
    expect(await row(eventId)).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 500, next_attempt_at: clock + 5 * SECOND });
    clock += 4 * SECOND;
    expect(await sender.runOnce()).toBe(0); // not yet due

    clock += 1 * SECOND + 1;
    expect(await sender.runOnce()).toBe(1);
    expect(await row(eventId)).toMatchObject({ status: 'pending', attempts: 2, last_status_code: 500, next_attempt_at: clock + 5 * MINUTE });
    clock += 4 * MINUTE;
    expect(await sender.runOnce()).toBe(0); // the second wait is 5 min, not 5 s

    clock += 1 * MINUTE + 1;
    expect(await sender.runOnce()).toBe(1);
    expect(await row(eventId)).toMatchObject({ status: 'delivered', attempts: 3, last_status_code: 200, last_error: null });

    // Nothing more, however long we wait.
    for (const wait of RETRY_SCHEDULE_MS) {
      clock += wait + 1;
      expect(await sender.runOnce()).toBe(0);
    }
    expect(r.hits).toHaveLength(3);
    expect(new Set(r.hits.map((q) => q.webhookId))).toEqual(new Set([eventId]));
    expect(new Set(r.hits.map((q) => q.body)).size).toBe(1); // the same bytes every attempt
    expect(JSON.parse(r.hits[0].body)).toEqual({
      type: 'loop.run.finished',
      timestamp: new Date(enqueuedAt).toISOString(),
      data: { loop: { id: 7, slug: 'nightly', name: 'Nightly' }, run: { id: subject.id, status: 'completed' } },
    });
    expectAllVerified(r);
    expect(settled).toEqual([{ subject, status: 'delivered' }]);
  });

  it('signs with the wall clock even when the injected clock is far from real time (verification tolerates 5 min)', async () => {
    clock = Date.parse('2031-06-01T00:00:00.000Z');
    const r = await receiver(() => ({ status: 204 }));
    const { eventId } = await enqueue(r.url);
    expect(await newSender().runOnce()).toBe(1);
    expect(await row(eventId)).toMatchObject({ status: 'delivered', attempts: 1, last_status_code: 204 });
    expect(r.hits).toHaveLength(1);
    expectAllVerified(r);
    // The event's own timestamp is the injected clock's (when the run ended).
    expect(JSON.parse(r.hits[0].body).timestamp).toBe('2031-06-01T00:00:00.000Z');
  });

  it('410 Gone: one attempt, failed, never retried', async () => {
    const r = await receiver(() => ({ status: 410 }));
    const { eventId, subject } = await enqueue(r.url);
    const sender = newSender();
    expect(await sender.runOnce()).toBe(1);
    expect(await row(eventId)).toMatchObject({ status: 'failed', attempts: 1, last_status_code: 410 });
    for (const wait of RETRY_SCHEDULE_MS) {
      clock += wait + 1;
      expect(await sender.runOnce()).toBe(0);
    }
    expect(r.hits).toHaveLength(1);
    expectAllVerified(r);
    expect(settled).toEqual([{ subject, status: 'failed' }]);
  });

  it('a 302 redirect is not followed: the Location target receives nothing and the delivery is rescheduled', async () => {
    const elsewhere = await receiver(() => ({ status: 200 }));
    const r = await receiver(() => ({ status: 302, headers: { location: elsewhere.url } }));
    const { eventId } = await enqueue(r.url);
    expect(await newSender().runOnce()).toBe(1);
    const after = await row(eventId);
    expect(after).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 302, next_attempt_at: clock + 5 * SECOND });
    expect(after.last_error).toContain('not followed');
    expect(r.hits).toHaveLength(1);
    expectAllVerified(r);
    expect(elsewhere.connections).toBe(0);
    expect(elsewhere.hits).toHaveLength(0);
    expect(settled).toEqual([]);
  });

  it('a receiver that never answers: the attempt ends at timeoutMs (300 ms) and is rescheduled with an error', async () => {
    const r = await receiver(() => 'hang');
    const { eventId } = await enqueue(r.url);
    const started = Date.now();
    expect(await newSender({ timeoutMs: 300 }).runOnce()).toBe(1);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(2_000);
    const after = await row(eventId);
    expect(after).toMatchObject({ status: 'pending', attempts: 1, last_status_code: null, next_attempt_at: clock + 5 * SECOND });
    expect(after.last_error).toMatch(/no answer within 0\.3 s/);
    expect(r.hits).toHaveLength(1);
    expectAllVerified(r);
    expect(settled).toEqual([]);
  });

  it('attempts are exhausted after the 6 waits of the schedule: 7 attempts, then failed and settled once', async () => {
    expect(RETRY_SCHEDULE_MS).toEqual([5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * 60 * MINUTE, 5 * 60 * MINUTE, 10 * 60 * MINUTE]);
    const r = await receiver(() => ({ status: 503 }));
    const { eventId, subject } = await enqueue(r.url);
    const sender = newSender();
    expect(await sender.runOnce()).toBe(1);
    for (const [i, wait] of RETRY_SCHEDULE_MS.entries()) {
      expect(await row(eventId)).toMatchObject({ status: 'pending', attempts: i + 1, next_attempt_at: clock + wait });
      expect(settled).toEqual([]);
      clock += wait - 1;
      expect(await sender.runOnce()).toBe(0);
      clock += 1;
      expect(await sender.runOnce()).toBe(1);
    }
    expect(await row(eventId)).toMatchObject({ status: 'failed', attempts: 7, last_status_code: 503 });
    clock += 30 * 24 * 60 * MINUTE;
    expect(await sender.runOnce()).toBe(0);
    expect(r.hitsFor(eventId)).toBe(7);
    expectAllVerified(r);
    expect(settled).toEqual([{ subject, status: 'failed' }]);
  });

  it('receiver down across a restart: the delivery survives in the database and arrives exactly once', async () => {
    const port = await unusedPort();
    const url = `http://127.0.0.1:${port}/hook`;
    const { eventId, subject } = await enqueue(url);
    const before = newSender();
    expect(await before.runOnce()).toBe(1);
    const failed = await row(eventId);
    expect(failed).toMatchObject({ status: 'pending', attempts: 1, last_status_code: null });
    expect(failed.last_error).toMatch(/ECONNREFUSED/);

    // The server goes away...
    await before.stop();
    await closeStore(ctx.store);
    // ...and comes back on the same data, with the receiver up again.
    const restarted = await reopen();
    const r = await receiver(() => ({ status: 200 }), { port });
    const after = newSender({}, restarted);
    expect(await after.runOnce()).toBe(0); // the 5 s wait is still running
    clock += 5 * SECOND;
    expect(await after.runOnce()).toBe(1);
    clock += 10 * 60 * 60 * SECOND;
    expect(await after.runOnce()).toBe(0);
    expect(await row(eventId, restarted)).toMatchObject({ status: 'delivered', attempts: 2, last_status_code: 200 });
    expect(r.hitsFor(eventId)).toBe(1);
    expect(r.hits).toHaveLength(1);
    expectAllVerified(r);
    expect(settled).toEqual([{ subject, status: 'delivered' }]);
  });

  it.runIf(kind === 'postgres')('two senders on two stores of one schema, running concurrently over 20 due deliveries: each webhook-id received once', async () => {
    const r = await receiver(() => ({ status: 200 }));
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await enqueue(r.url)).eventId);
    const other = await reopen();
    const a = newSender({ batch: 4 });
    const b = newSender({ batch: 4 }, other);
    let attempted = 0;
    for (let round = 0; round < 20; round++) {
      const [na, nb] = await Promise.all([a.runOnce(), b.runOnce()]);
      const n = na + nb;
      if (n === 0) break;
      attempted += n;
    }
    expect(attempted).toBe(20);
    expect(r.hits).toHaveLength(20);
    for (const id of ids) {
      expect(r.hitsFor(id), id).toBe(1);
      expect(await row(id)).toMatchObject({ status: 'delivered', attempts: 1 });
    }
    expectAllVerified(r);
    expect(settled).toHaveLength(20);
    expect(new Set(settled.map((s) => s.subject.id)).size).toBe(20);
  });

  it('the private-address guard (allowPrivate false) refuses loopback, private, metadata and localhost targets without connecting', async () => {
    const v4 = await receiver(() => ({ status: 200 }));
    const v6 = await receiver(() => ({ status: 200 }), { host: '::1' });
    const cases: [url: string, why: RegExp][] = [
      [`http://127.0.0.1:${v4.port}/hook`, /127\.0\.0\.1 is not a public address \(loopback\)/],
      ['http://10.0.0.1/hook', /10\.0\.0\.1 is not a public address \(private\)/],
      ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is not a public address \(cloud metadata\)/],
      [`http://[::1]:${v6.port}/hook`, /::1 is not a public address \(loopback\)/],
      [`http://localhost:${v4.port}/hook`, /localhost resolves to (127\.0\.0\.1|::1), which is not a public address \(loopback\)/],
    ];
    const ids: string[] = [];
    for (const [url] of cases) ids.push((await enqueue(url)).eventId);
    const started = Date.now();
    expect(await newSender({ allowPrivate: false, timeoutMs: 3_000 }).runOnce()).toBe(cases.length);
    // Refused before any connection: no attempt waited for a timeout (10.0.0.1 and the metadata
    // address would not have answered).
    expect(Date.now() - started).toBeLessThan(2_000);
    for (const [i, [url, why]] of cases.entries()) {
      const after = await row(ids[i]);
      // Refused is final: the guard would refuse it again on every retry (docs/api.md "Callbacks and repositories").
      expect(after, url).toMatchObject({ status: 'failed', attempts: 1, last_status_code: null });
      expect(after.last_error, url).toMatch(/^refused: /);
      expect(after.last_error, url).toMatch(why);
      expect(after.last_error, url).toContain('DROVER_WEBHOOK_ALLOW_PRIVATE=true');
    }
    expect(v4.connections).toBe(0);
    expect(v6.connections).toBe(0);
    expect(v4.hits).toHaveLength(0);
    expect(v6.hits).toHaveLength(0);
    expect(settled.map((s) => s.status)).toEqual(cases.map(() => 'failed'));
  });
});
