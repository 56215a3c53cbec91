/**
 * The webhook outbox (`callback_url`, docs/api.md "Loops and runs") against real HTTP receivers on loopback, on
 * SQLite and on PostgreSQL: signing (every request is verified with the `standardwebhooks`
 * package), the retry schedule on an injected clock, 410, timeouts, redirects, restarts, leases,
 * concurrent senders, and the private-address guard.
 */
import crypto from 'node:crypto';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import type { DomainContext } from '../../src/domain/context.ts';
import { SecretBox } from '../../src/domain/secrets.ts';
import { enqueueWebhook, RETRY_SCHEDULE_MS, WebhookSender, type WebhookSenderOptions, type WebhookSubject } from '../../src/domain/webhooks/outbox.ts';
import { generateWebhookSecret } from '../../src/domain/webhooks/signing.ts';
import type { DatabaseKind, Store } from '../../src/store/db.ts';
import * as deliveries from '../../src/store/webhooks.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { createTestDatabase, DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { startWebhookReceiver, type WebhookReceiverOptions } from '../helpers/webhook-receiver.ts';
import { unusedPort } from '../helpers/ports.ts';

const log = pino({ level: 'silent' });
const T0 = Date.parse('2026-03-01T12:00:00.000Z');

async function waitFor(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.each(DATABASES)('webhook outbox on %s', (kind: DatabaseKind) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });

  /** A fresh migrated database, a clock at T0 and a secret box; `reopen()` is a restarted server on the same data. */
  async function setup() {
    const database: TestDatabase = await createTestDatabase(kind);
    const stores: Store[] = [];
    const open = async () => {
      const store = database.open();
      stores.push(store);
      await migrateToLatest(store);
      return store;
    };
    const closed = new Set<Store>();
    const closeStore = async (store: Store) => {
      if (closed.has(store)) return;
      closed.add(store);
      await store.close();
    };
    cleanups.push(async () => {
      for (const store of stores) await closeStore(store);
      await database.cleanup();
    });
    const clock = { now: T0 };
    const secrets = new SecretBox(crypto.randomBytes(32));
    const context = (store: Store): DomainContext => ({ store, now: () => clock.now, secrets });
    const ctx = context(await open());
    const settled: { subject: WebhookSubject; status: string }[] = [];
    const senders: WebhookSender[] = [];
    const sender = (options: Partial<WebhookSenderOptions> = {}, on: DomainContext = ctx) => {
      const s = new WebhookSender(on, {
        allowPrivate: true,
        log,
        intervalMs: 60_000,
        onSettled: (subject, status) => {
          settled.push({ subject, status });
        },
        ...options,
      });
      senders.push(s);
      return s;
    };
    cleanups.push(async () => {
      for (const s of senders) await s.stop();
    });
    const secret = generateWebhookSecret();
    let subjectId = 0;
    const enqueue = (url: string, on: DomainContext = ctx, data: unknown = { run: { id: subjectId + 1, status: 'completed' } }) =>
      on.store.db.transaction().execute((trx) =>
        enqueueWebhook(trx, on, { orgId: 1, url, secret, type: 'loop.run.finished', data, subject: { type: 'loop_run', id: ++subjectId } }),
      );
    const row = async (eventId: string, on: DomainContext = ctx) => (await deliveries.findDeliveryByEventId(on.store.db, eventId))!;
    const receiver = async (reply: WebhookReceiverOptions['reply'], options: Omit<WebhookReceiverOptions, 'secret' | 'reply'> = {}) => {
      const r = await startWebhookReceiver({ secret, reply, ...options });
      cleanups.push(() => r.close());
      return r;
    };
    return { database, open, closeStore, clock, secrets, context, ctx, settled, sender, secret, enqueue, row, receiver };
  }

  it('generates Standard Webhooks secrets', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(24);
    expect(generateWebhookSecret()).not.toBe(secret);
  });

  it('500, 500, then 200: three signed attempts under one webhook-id on the schedule, then delivered', async () => {
    const t = await setup();
    const receiver = await t.receiver((_hit, n) => ({ status: n <= 2 ? 500 : 200 }));
    const eventId = await t.enqueue(receiver.url);
    expect(eventId).toMatch(/^msg_[0-9a-f]{32}$/);
    const sender = t.sender();

    expect(await sender.runOnce()).toBe(1);
    expect(await t.row(eventId)).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 500, last_error: 'HTTP 500', next_attempt_at: T0 + 5_000 });
    expect(await sender.runOnce()).toBe(0); // not due before 5 s
    t.clock.now += 4_999;
    expect(await sender.runOnce()).toBe(0);

    t.clock.now = T0 + 5_001;
    expect(await sender.runOnce()).toBe(1);
    expect(await t.row(eventId)).toMatchObject({ status: 'pending', attempts: 2, last_status_code: 500, next_attempt_at: T0 + 5_001 + 300_000 });
    t.clock.now += 299_000;
    expect(await sender.runOnce()).toBe(0); // the second wait is 5 minutes

    t.clock.now += 1_001;
    expect(await sender.runOnce()).toBe(1);
    expect(await t.row(eventId)).toMatchObject({ status: 'delivered', attempts: 3, last_status_code: 200, last_error: null });
    t.clock.now += 86_400_000;
    expect(await sender.runOnce()).toBe(0);

    expect(receiver.hits).toHaveLength(3);
    for (const hit of receiver.hits) {
      expect(hit.verifyError).toBeNull();
      expect(hit.webhookId).toBe(eventId);
      expect(hit.method).toBe('POST');
      expect(hit.path).toBe('/hook');
      // Signed with the wall clock, whatever the injected clock says.
      expect(Math.abs(Number(hit.timestamp) - Date.now() / 1000)).toBeLessThan(60);
    }
    // The same bytes every time: {type, timestamp (ISO, ms, when enqueued), data}.
    expect(new Set(receiver.hits.map((h) => h.body)).size).toBe(1);
    expect(JSON.parse(receiver.hits[0].body)).toEqual({ type: 'loop.run.finished', timestamp: '2026-03-01T12:00:00.000Z', data: { run: { id: 1, status: 'completed' } } });
    expect(t.settled).toEqual([{ subject: { type: 'loop_run', id: 1 }, status: 'delivered' }]);
  });

  it('sends the content type, and a signature that a wrong secret does not verify', async () => {
    const t = await setup();
    const receiver = await t.receiver(() => 204, { path: '/' });
    const eventId = await t.enqueue(receiver.url);
    expect(await t.sender().runOnce()).toBe(1);
    await receiver.close();
    const headers = receiver.hits.map((hit) => hit.headers);
    expect(headers).toHaveLength(1);
    expect(headers[0]).toMatchObject({ 'content-type': 'application/json', 'webhook-id': eventId });
    expect(headers[0]['webhook-timestamp']).toMatch(/^\d{10}$/);
    expect(headers[0]['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect((await t.row(eventId)).status).toBe('delivered');
    const body = (await t.row(eventId)).payload;
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers[0] as Record<string, string>)).toThrow();
    expect(() => new Webhook(t.secret).verify(body, headers[0] as Record<string, string>)).not.toThrow();
    // The stored copy of the secret is encrypted.
    expect((await t.row(eventId)).secret_encrypted).not.toContain(t.secret.slice(6));
  });

  it('410 Gone: one attempt, failed, never retried', async () => {
    const t = await setup();
    const receiver = await t.receiver(() => ({ status: 410 }));
    const eventId = await t.enqueue(receiver.url);
    const sender = t.sender();
    expect(await sender.runOnce()).toBe(1);
    expect(await t.row(eventId)).toMatchObject({ status: 'failed', attempts: 1, last_status_code: 410, last_error: 'HTTP 410' });
    for (const wait of RETRY_SCHEDULE_MS) {
      t.clock.now += wait + 1;
      expect(await sender.runOnce()).toBe(0);
    }
    expect(receiver.hits).toHaveLength(1);
    expect(receiver.hits[0].verifyError).toBeNull();
    expect(t.settled).toEqual([{ subject: { type: 'loop_run', id: 1 }, status: 'failed' }]);
  });

  it('gives up after the last wait of the schedule (7 attempts with the contract schedule)', async () => {
    const t = await setup();
    const receiver = await t.receiver(() => ({ status: 503 }));
    const eventId = await t.enqueue(receiver.url);
    const sender = t.sender();
    for (let attempt = 1; attempt <= 7; attempt++) {
      expect(await sender.runOnce()).toBe(1);
      const r = await t.row(eventId);
      expect(r.attempts).toBe(attempt);
      if (attempt < 7) {
        expect(r).toMatchObject({ status: 'pending', next_attempt_at: t.clock.now + RETRY_SCHEDULE_MS[attempt - 1] });
        expect(t.settled).toEqual([]);
        t.clock.now = r.next_attempt_at;
      } else {
        expect(r).toMatchObject({ status: 'failed', last_status_code: 503 });
      }
    }
    t.clock.now += 100 * 86_400_000;
    expect(await sender.runOnce()).toBe(0);
    expect(receiver.hits).toHaveLength(7);
    expect(receiver.hitsFor(eventId)).toBe(7);
    expect(t.settled).toEqual([{ subject: { type: 'loop_run', id: 1 }, status: 'failed' }]);
  });

  it('a receiver that never answers times out and the delivery is rescheduled', async () => {
    const t = await setup();
    const receiver = await t.receiver(() => 'hang');
    const eventId = await t.enqueue(receiver.url);
    const started = Date.now();
    expect(await t.sender({ timeoutMs: 300 }).runOnce()).toBe(1);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(await t.row(eventId)).toMatchObject({ status: 'pending', attempts: 1, last_status_code: null, last_error: 'no answer within 0.3 s', next_attempt_at: T0 + 5_000 });
    expect(receiver.hits).toHaveLength(1);
    expect(t.settled).toEqual([]);
  });

  it('every attempt is logged with its time, status code or error, and duration (the deliveries endpoint shows them)', async () => {
    const t = await setup();
    const receiver = await t.receiver((_hit, n) => (n === 1 ? 'hang' : n === 2 ? 503 : 200));
    const eventId = await t.enqueue(receiver.url);
    const sender = t.sender({ timeoutMs: 300 });
    expect(await sender.runOnce()).toBe(1);
    t.clock.now = T0 + 5_001;
    expect(await sender.runOnce()).toBe(1);
    t.clock.now = T0 + 5_001 + 300_001;
    expect(await sender.runOnce()).toBe(1);
    const delivery = await t.row(eventId);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 3 });
    const attempts = await deliveries.attemptsOf(t.ctx.store.db, [delivery.id]);
    expect(attempts.map(({ attempt, attempted_at, status_code, error }) => ({ attempt, attempted_at, status_code, error }))).toEqual([
      { attempt: 3, attempted_at: T0 + 5_001 + 300_001, status_code: 200, error: null },
      { attempt: 2, attempted_at: T0 + 5_001, status_code: 503, error: 'HTTP 503' },
      { attempt: 1, attempted_at: T0, status_code: null, error: 'no answer within 0.3 s' },
    ]);
    expect(attempts[2].duration_ms).toBeGreaterThanOrEqual(290);
    for (const a of attempts) expect(a.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('a 302 is not followed and counts as a failed attempt', async () => {
    const t = await setup();
    const receiver = await t.receiver((hit) => (hit.path === '/hook' ? { status: 302, headers: { location: '/elsewhere' } } : { status: 200 }));
    const eventId = await t.enqueue(receiver.url);
    expect(await t.sender().runOnce()).toBe(1);
    expect(receiver.hits.map((h) => h.path)).toEqual(['/hook']);
    const r = await t.row(eventId);
    expect(r).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 302, next_attempt_at: T0 + 5_000 });
    expect(r.last_error).toMatch(/redirect to \/elsewhere not followed/);
  });

  it('a receiver down across a restart gets the delivery once after the restart', async () => {
    const t = await setup();
    const port = await unusedPort();
    const url = `http://127.0.0.1:${port}/hook`;
    const eventId = await t.enqueue(url);
    const before = t.sender();
    expect(await before.runOnce()).toBe(1);
    const r = await t.row(eventId);
    expect(r).toMatchObject({ status: 'pending', attempts: 1, last_status_code: null });
    expect(r.last_error).toMatch(/ECONNREFUSED/);
    await before.stop();
    await t.closeStore(t.ctx.store);

    // The server comes back (a new store on the same data) and so does the receiver.
    const ctx = t.context(await t.open());
    const receiver = await t.receiver(() => ({ status: 200 }), { port });
    t.clock.now += 5_000;
    const after = t.sender({ intervalMs: 50 }, ctx);
    after.start();
    await waitFor(async () => (await t.row(eventId, ctx)).status === 'delivered');
    await new Promise((resolve) => setTimeout(resolve, 200)); // a few more intervals (bounded on purpose: no second delivery)
    await after.stop();
    expect(receiver.hits).toHaveLength(1);
    expect(receiver.hitsFor(eventId)).toBe(1);
    expect(receiver.hits[0].verifyError).toBeNull();
    expect(await t.row(eventId, ctx)).toMatchObject({ status: 'delivered', attempts: 2 });
  });

  it('a sender that crashed mid-send leaves a lease: another sends the delivery once the lease ends', async () => {
    const t = await setup();
    const receiver = await t.receiver(() => ({ status: 200 }));
    const eventId = await t.enqueue(receiver.url);
    // The crashed sender claimed the row and never reported back.
    const claimed = await t.ctx.store.db.transaction().execute((trx) => deliveries.claimDueDeliveries(trx, T0, 10, T0 + 60_000));
    expect(claimed.map((d) => d.event_id)).toEqual([eventId]);
    const sender = t.sender();
    expect(await sender.runOnce()).toBe(0);
    t.clock.now = T0 + 59_999;
    expect(await sender.runOnce()).toBe(0);
    t.clock.now = T0 + 60_000;
    expect(await sender.runOnce()).toBe(1);
    expect(await t.row(eventId)).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(receiver.hitsFor(eventId)).toBe(1);
    // The late report of the crashed sender's attempt changes nothing.
    const late = await deliveries.recordAttempt(t.ctx.store.db, claimed[0].id, 0, {
      status: 'pending',
      attempts: 1,
      next_attempt_at: T0,
      last_status_code: 500,
      last_error: 'HTTP 500',
      updated_at: T0,
    });
    expect(late).toBe(false);
    expect(await t.row(eventId)).toMatchObject({ status: 'delivered', last_status_code: 200 });
  });

  it('a started sender is nudged by an enqueue: the first attempt does not wait for the interval', async () => {
    const t = await setup();
    const receiver = await t.receiver(() => ({ status: 200 }));
    const sender = t.sender({ intervalMs: 600_000 });
    sender.start();
    const started = Date.now();
    const eventId = await t.enqueue(receiver.url);
    await waitFor(async () => (await t.row(eventId)).status === 'delivered', 3_000);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(receiver.hitsFor(eventId)).toBe(1);
    await waitFor(async () => t.settled.length === 1);
    expect(t.settled).toEqual([{ subject: { type: 'loop_run', id: 1 }, status: 'delivered' }]);
  });

  it('nothing is sent for an enqueue whose transaction rolls back', async () => {
    const t = await setup();
    const receiver = await t.receiver(() => ({ status: 200 }));
    const sender = t.sender({ intervalMs: 600_000 });
    sender.start();
    await expect(
      t.ctx.store.db.transaction().execute(async (trx) => {
        await enqueueWebhook(trx, t.ctx, { orgId: 1, url: receiver.url, secret: t.secret, type: 'x', data: {}, subject: { type: 'loop_run', id: 9 } });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    // Bounded on purpose: a wrongly nudged pass would run in the meantime; nothing may be sent.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await sender.runOnce()).toBe(0);
    expect(receiver.hits).toHaveLength(0);
  });

  it('refuses loopback, private, link-local and metadata targets without connecting unless allowed', async () => {
    const t = await setup();
    const v4 = await t.receiver(() => ({ status: 200 }));
    const v6 = await t.receiver(() => ({ status: 200 }), { host: '::1' });
    const cases: [string, RegExp][] = [
      [`http://127.0.0.1:${v4.port}/hook`, /refused: 127\.0\.0\.1 is not a public address \(loopback\)/],
      [`http://10.0.0.1:${v4.port}/hook`, /refused: 10\.0\.0\.1 is not a public address \(private\)/],
      ['http://169.254.169.254/latest/meta-data/', /refused: 169\.254\.169\.254 is not a public address \(cloud metadata\)/],
      [`http://[::1]:${v6.port}/hook`, /refused: ::1 is not a public address \(loopback\)/],
      [`http://localhost:${v4.port}/hook`, /refused: localhost resolves to (127\.0\.0\.1|::1), which is not a public address \(loopback\)/],
    ];
    const ids: string[] = [];
    for (const [url] of cases) ids.push(await t.enqueue(url));
    const sender = t.sender({ allowPrivate: false, timeoutMs: 2_000 });
    expect(await sender.runOnce()).toBe(cases.length);
    for (const [i, [, message]] of cases.entries()) {
      const r = await t.row(ids[i]);
      // Refused is final: the guard would refuse it again on every retry (docs/api.md "Callbacks and repositories").
      expect(r).toMatchObject({ status: 'failed', attempts: 1, last_status_code: null, next_attempt_at: T0 });
      expect(r.last_error).toMatch(message);
      expect(r.last_error).toMatch(/DROVER_WEBHOOK_ALLOW_PRIVATE=true/);
    }
    expect(v4.hits).toHaveLength(0);
    expect(v6.hits).toHaveLength(0);

    // The same targets with private addresses allowed (10.0.0.1 and the metadata address are
    // not listening here; only the loopback ones are sent to).
    t.clock.now += 5_000;
    const allowed = t.sender({ allowPrivate: true, timeoutMs: 300 });
    expect(await allowed.runOnce()).toBe(0); // the refused ones are not retried
    const again: string[] = [];
    for (const [url] of cases) again.push(await t.enqueue(url));
    expect(await allowed.runOnce()).toBe(cases.length);
    expect(v4.hits.map((h) => h.webhookId).sort()).toEqual([again[0], again[4]].sort());
    expect(v6.hits.map((h) => h.webhookId)).toEqual([again[3]]);
    for (const i of [0, 3, 4]) expect((await t.row(again[i])).status).toBe('delivered');
  });

  it.skipIf(kind !== 'postgres')('two senders on one PostgreSQL database deliver each of 20 due deliveries exactly once', async () => {
    const t = await setup();
    const receiver = await t.receiver(() => ({ status: 200 }));
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await t.enqueue(receiver.url));
    const other = t.context(await t.open());
    const a = t.sender({ batch: 3 });
    const b = t.sender({ batch: 3 }, other);
    let attempted = 0;
    for (;;) {
      const [na, nb] = await Promise.all([a.runOnce(), b.runOnce()]);
      if (na + nb === 0) break;
      attempted += na + nb;
    }
    expect(attempted).toBe(20);
    expect(receiver.hits).toHaveLength(20);
    for (const id of ids) expect(receiver.hitsFor(id)).toBe(1);
    expect(receiver.hits.every((h) => h.verifyError === null)).toBe(true);
    for (const id of ids) expect(await t.row(id)).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(t.settled).toHaveLength(20);
  });
});
