/**
 * Webhook deliveries of loop runs (docs/decisions.md): `GET …/runs/:run_id/deliveries` lists a run's
 * callback deliveries with their attempts (time, status code or error, duration), and
 * `POST …/runs/:run_id/redeliver` queues a new delivery of the same event (same body, same
 * `webhook-id`) to the loop's callback_url. Served under both loop prefixes; `loops:read` to list,
 * `loops:write` to redeliver; 404 and 409 as for the other run endpoints. A real outbox sender
 * posts to a real receiver on loopback. Both databases.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/protocol/scopes.ts';
import { callbackRetrying, callbackSettled } from '../../src/domain/loops/callbacks.ts';
import { WebhookSender } from '../../src/domain/webhooks/outbox.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { expectError } from '../helpers/errors.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';

const PREFIXES = ['/api/v1/ext/orgs', '/api/v1/orgs'] as const;

interface Attempt {
  attempt: number;
  attempted_at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}
interface Delivery {
  id: number;
  webhook_id: string;
  url: string;
  status: string;
  attempt_count: number;
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
  attempts: Attempt[];
}
interface DeliveryList {
  deliveries: Delivery[];
  total: number;
  limit: number;
  offset: number;
}

describe.each(DATABASES)('run deliveries on %s', (kind) => {
  let t: TestApp;
  let sender: WebhookSender;
  let receiver: WebhookReceiver;
  let spare: WebhookReceiver;
  const replies: number[] = [];
  const clock = { now: Date.parse('2026-07-01T08:00:00.000Z') };
  let loopSeq = 0;

  beforeAll(async () => {
    t = await startTestApp(kind, { now: () => clock.now, webhookAllowPrivate: true });
    receiver = await startWebhookReceiver({ reply: () => replies.shift() ?? 200 });
    spare = await startWebhookReceiver();
    sender = new WebhookSender(t.ctx, {
      allowPrivate: true,
      log: pino({ level: 'silent' }),
      intervalMs: 3_600_000,
      onSettled: (subject, status) => callbackSettled(t.ctx, subject, status),
      onRetrying: (subject) => callbackRetrying(t.ctx, subject),
    });
  });
  afterAll(async () => {
    await sender?.stop();
    await receiver?.close();
    await spare?.close();
    await t?.close();
  });

  /** Sends every due delivery (moving the clock past any retry wait first). */
  async function send(): Promise<void> {
    clock.now += 6 * 3_600_000;
    await sender.runOnce();
  }

  /** A loop calling back to the receiver, and one of its runs that has ended (cancelled): its event is queued. */
  async function endedRun(prefix: string = PREFIXES[0], key = t.key, org = 'acme') {
    loopSeq += 1;
    const slug = `hooked-${loopSeq}`;
    const loop = await t.request({
      method: 'POST',
      url: `${prefix}/${org}/loops`,
      key,
      payload: { name: slug, slug, agent_slug: 'shell', execution_mode: 'direct', prompt_template: 'true', callback_url: receiver.url, concurrency_policy: 'skip' },
    });
    expect(loop.statusCode, loop.body).toBe(201);
    receiver.secret = (loop.json() as { loop: { callback_secret: string } }).loop.callback_secret;
    const run = (await t.request({ method: 'POST', url: `${prefix}/${org}/loops/${slug}/trigger`, key })).json() as { run: { id: number } };
    const cancelled = await t.request({ method: 'POST', url: `${prefix}/${org}/loops/${slug}/runs/${run.run.id}/cancel`, key });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    return { slug, runId: run.run.id, base: `${prefix}/${org}/loops/${slug}` };
  }

  const list = (base: string, runId: number, query = '', key: string | null = t.key) => t.request({ method: 'GET', url: `${base}/runs/${runId}/deliveries${query}`, key });
  const redeliver = (base: string, runId: number, key: string | null = t.key, payload?: object) =>
    t.request({ method: 'POST', url: `${base}/runs/${runId}/redeliver`, key, ...(payload ? { payload } : {}) });
  const runOf = async (base: string, runId: number) =>
    ((await t.request({ method: 'GET', url: `${base}/runs/${runId}` })).json() as { run: { callback_status: string } }).run;
  const outbox = () => t.store.db.selectFrom('webhook_deliveries').select(['id', 'event_id', 'status', 'url']).orderBy('id').execute();

  describe.each(PREFIXES)('under %s/{org}', (prefix) => {
    it('lists the delivery and its attempts, newest first: time, status code or error, duration', async () => {
      const { base, runId } = await endedRun(prefix);
      replies.push(500);
      const queuedAt = new Date(clock.now).toISOString();
      let res = await list(base, runId);
      expect(res.statusCode, res.body).toBe(200);
      let body = res.json() as DeliveryList;
      expect(body).toMatchObject({ total: 1, limit: 20, offset: 0 });
      expect(body.deliveries[0]).toMatchObject({ status: 'pending', attempt_count: 0, attempts: [], url: receiver.url, created_at: queuedAt, next_attempt_at: queuedAt });
      expect(body.deliveries[0].webhook_id).toMatch(/^msg_[0-9a-f]{32}$/);

      const runEvents = async () => {
        const events = await t.store.db.selectFrom('events').select(['type', 'payload']).where('type', 'like', 'run.%').orderBy('id', 'desc').execute();
        return events.filter((e) => (JSON.parse(e.payload) as { run: { id: number } }).run.id === runId);
      };
      const before = (await runEvents()).length;
      await send(); // 500
      const firstAt = new Date(clock.now).toISOString();
      // The failed attempt is announced too: a run.updated, the callback still pending.
      const afterFirst = await runEvents();
      expect(afterFirst).toHaveLength(before + 1);
      expect(afterFirst[0].type).toBe('run.updated');
      expect((JSON.parse(afterFirst[0].payload) as { run: { callback_status: string } }).run.callback_status).toBe('pending');
      await send(); // 200
      body = (await list(base, runId)).json() as DeliveryList;
      const [delivery] = body.deliveries;
      expect(delivery).toMatchObject({ status: 'delivered', attempt_count: 2, next_attempt_at: null });
      expect(delivery.attempts.map(({ duration_ms: _d, ...a }) => a)).toEqual([
        { attempt: 2, attempted_at: new Date(clock.now).toISOString(), status_code: 200, error: null },
        { attempt: 1, attempted_at: firstAt, status_code: 500, error: 'HTTP 500' },
      ]);
      for (const a of delivery.attempts) expect(a.duration_ms).toBeGreaterThanOrEqual(0);
      const settled = await runOf(base, runId);
      expect(settled).toMatchObject({ callback_status: 'delivered' });
      expect(receiver.hitsFor(delivery.webhook_id)).toBe(2);
      // The outcome is announced: the run's last event is a run.updated showing it as GET does (a page
      // showing the deliveries reads them again on it).
      const ofRun = await runEvents();
      expect(ofRun[0].type).toBe('run.updated');
      expect((JSON.parse(ofRun[0].payload) as { run: unknown }).run).toEqual(settled);
      expect(ofRun.filter((e) => (JSON.parse(e.payload) as { run: { callback_status: string } }).run.callback_status === 'delivered')).toHaveLength(1);

      // Nothing secret in it: no signing secret, no stored payload.
      res = await list(base, runId);
      expect(res.body).not.toMatch(/whsec_|secret|payload/);
    });

    it('redeliver → 201: a new delivery of the same event (same webhook-id and body), signed, sent with its own attempts', async () => {
      const { base, runId } = await endedRun(prefix);
      await send();
      const first = ((await list(base, runId)).json() as DeliveryList).deliveries[0];
      expect(first.status).toBe('delivered');
      const hitsBefore = receiver.hits.filter((h) => h.webhookId === first.webhook_id);

      const res = await redeliver(base, runId);
      expect(res.statusCode, res.body).toBe(201);
      const { delivery } = res.json() as { delivery: Delivery };
      expect(delivery).toMatchObject({ webhook_id: first.webhook_id, status: 'pending', attempt_count: 0, attempts: [], url: receiver.url });
      expect(delivery.id).toBeGreaterThan(first.id);
      expect(await runOf(base, runId)).toMatchObject({ callback_status: 'pending' });

      await send();
      const hits = receiver.hits.filter((h) => h.webhookId === first.webhook_id);
      expect(hits).toHaveLength(hitsBefore.length + 1);
      expect(hits[hits.length - 1].body).toBe(hitsBefore[0].body);
      expect(hits[hits.length - 1].verifyError).toBeNull();
      const after = (await list(base, runId)).json() as DeliveryList;
      expect(after.total).toBe(2);
      expect(after.deliveries.map((d) => [d.id, d.status, d.webhook_id])).toEqual([
        [delivery.id, 'delivered', first.webhook_id],
        [first.id, 'delivered', first.webhook_id],
      ]);
      expect(after.deliveries[0].attempts).toHaveLength(1);
      expect(await runOf(base, runId)).toMatchObject({ callback_status: 'delivered' });
    });
  });

  it("redelivers to the loop's callback_url as it is now", async () => {
    const { base, runId, slug } = await endedRun();
    await send();
    expect((await t.request({ method: 'PUT', url: `/api/v1/ext/orgs/acme/loops/${slug}`, payload: { callback_url: spare.url } })).statusCode).toBe(200);
    const { delivery } = (await redeliver(base, runId)).json() as { delivery: Delivery };
    expect(delivery.url).toBe(spare.url);
    await send();
    expect(spare.hitsFor(delivery.webhook_id)).toBe(1);
  });

  it('pages with limit and offset (newest first); limit above 100 is clamped', async () => {
    const { base, runId } = await endedRun();
    for (let i = 0; i < 3; i++) {
      await send();
      expect((await redeliver(base, runId)).statusCode).toBe(201);
    }
    await send();
    const all = (await list(base, runId)).json() as DeliveryList;
    expect(all.total).toBe(4);
    const ids = all.deliveries.map((d) => d.id);
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    const page = (await list(base, runId, '?limit=2&offset=1')).json() as DeliveryList;
    expect(page).toMatchObject({ total: 4, limit: 2, offset: 1 });
    expect(page.deliveries.map((d) => d.id)).toEqual(ids.slice(1, 3));
    expect(((await list(base, runId, '?limit=1000')).json() as DeliveryList).limit).toBe(100);
  });

  describe('errors (nothing is queued by a refused redeliver)', () => {
    it('unknown loop, unknown run, a run of another loop → 404', async () => {
      const a = await endedRun();
      const b = await endedRun();
      const before = await outbox();
      expectError(await list('/api/v1/ext/orgs/acme/loops/no-such-loop', a.runId), 404, 'NOT_FOUND');
      expectError(await redeliver('/api/v1/ext/orgs/acme/loops/no-such-loop', a.runId), 404, 'NOT_FOUND');
      expectError(await list(a.base, 987_654), 404, 'NOT_FOUND');
      expectError(await redeliver(a.base, 987_654), 404, 'NOT_FOUND');
      expectError(await list(a.base, b.runId), 404, 'NOT_FOUND');
      expectError(await redeliver(a.base, b.runId), 404, 'NOT_FOUND');
      expect(await outbox()).toEqual(before);
    });

    it('malformed: run_id not an integer, limit 0, an unknown query parameter, a body with a field → 400', async () => {
      const { base, runId } = await endedRun();
      const before = await outbox();
      expectError(await t.request({ method: 'GET', url: `${base}/runs/abc/deliveries` }), 400, 'VALIDATION_FAILED');
      expectError(await t.request({ method: 'POST', url: `${base}/runs/1.5/redeliver` }), 400, 'VALIDATION_FAILED');
      expectError(await list(base, runId, '?limit=0'), 400, 'VALIDATION_FAILED');
      expectError(await list(base, runId, '?offset=-1'), 400, 'VALIDATION_FAILED');
      expectError(await list(base, runId, '?status=failed'), 400, 'VALIDATION_FAILED');
      const withField = expectError(await redeliver(base, runId, t.key, { url: 'http://evil.example/' }), 400, 'VALIDATION_FAILED');
      expect(withField.details?.[0].field).toBe('/url');
      expect(await outbox()).toEqual(before);
    });

    it('a run without an event (still active, or skipped) → list is empty, redeliver 409 NO_WEBHOOK_EVENT', async () => {
      loopSeq += 1;
      const slug = `busy-${loopSeq}`;
      await t.request({ method: 'POST', url: '/api/v1/ext/orgs/acme/loops', payload: { name: slug, slug, agent_slug: 'shell', execution_mode: 'direct', prompt_template: 'true', callback_url: receiver.url } });
      const base = `/api/v1/ext/orgs/acme/loops/${slug}`;
      const active = ((await t.request({ method: 'POST', url: `${base}/trigger` })).json() as { run: { id: number; status: string } }).run;
      const skipped = ((await t.request({ method: 'POST', url: `${base}/trigger` })).json() as { run: { id: number; status: string } }).run;
      expect([active.status, skipped.status]).toEqual(['pending', 'skipped']);
      const before = await outbox();
      for (const run of [active, skipped]) {
        expect((await list(base, run.id)).json()).toEqual({ deliveries: [], total: 0, limit: 20, offset: 0 });
        const body = expectError(await redeliver(base, run.id), 409, 'NO_WEBHOOK_EVENT');
        expect(body.error).toContain(`run ${run.id}`);
      }
      expect(await outbox()).toEqual(before);
    });

    it('a delivery still pending → 409 DELIVERY_PENDING; a loop without callback_url now → 409 NO_WEBHOOK_EVENT', async () => {
      const { base, runId, slug } = await endedRun();
      let before = await outbox();
      expectError(await redeliver(base, runId), 409, 'DELIVERY_PENDING');
      expect(await outbox()).toEqual(before);
      await send();
      await t.request({ method: 'PUT', url: `/api/v1/ext/orgs/acme/loops/${slug}`, payload: { callback_url: null } });
      before = await outbox();
      expect(expectError(await redeliver(base, runId), 409, 'NO_WEBHOOK_EVENT').error).toContain('no callback_url');
      expect(await outbox()).toEqual(before);
    });

    it('two redelivers at once: one is queued, the other is 409 DELIVERY_PENDING', async () => {
      const { base, runId } = await endedRun();
      await send();
      const results = await Promise.all([redeliver(base, runId), redeliver(base, runId), redeliver(base, runId)]);
      expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409, 409]);
      for (const r of results.filter((res) => res.statusCode === 409)) expectError(r, 409, 'DELIVERY_PENDING');
      expect(((await list(base, runId)).json() as DeliveryList).total).toBe(2);
    });
  });

  describe('security', () => {
    it('no key or a bad key → 401; a key of another organization → 404 (never 403)', async () => {
      const { base, runId } = await endedRun();
      const globex = await t.createOrg('globex-deliveries');
      const { key: globexKey } = await t.issueKey(SCOPES, { org: globex });
      const before = await outbox();
      expectError(await list(base, runId, '', null), 401, 'AUTH_REQUIRED');
      expectError(await redeliver(base, runId, null), 401, 'AUTH_REQUIRED');
      expectError(await list(base, runId, '', 'drv_' + 'x'.repeat(40)), 401, 'INVALID_API_KEY');
      expectError(await list(base, runId, '', globexKey), 404, 'NOT_FOUND');
      expectError(await redeliver(base, runId, globexKey), 404, 'NOT_FOUND');
      // Their own org in the URL, our run id: the run is not in their loop of that name.
      expectError(await list(base.replace('/acme/', `/${globex.slug}/`), runId, '', globexKey), 404, 'NOT_FOUND');
      expect(await outbox()).toEqual(before);
    });

    it('loops:read lists but may not redeliver (403 naming loops:write); other scopes may do neither', async () => {
      const { base, runId } = await endedRun();
      await send();
      const readOnly = (await t.issueKey(['loops:read'])).key;
      const unrelated = (await t.issueKey(SCOPES.filter((s) => !s.startsWith('loops:')))).key;
      const before = await outbox();
      expect((await list(base, runId, '', readOnly)).statusCode).toBe(200);
      expect(expectError(await redeliver(base, runId, readOnly), 403, 'INSUFFICIENT_SCOPE').required_scopes).toEqual(['loops:write']);
      expect(expectError(await list(base, runId, '', unrelated), 403, 'INSUFFICIENT_SCOPE').required_scopes).toEqual(['loops:read']);
      expectError(await redeliver(base, runId, unrelated), 403, 'INSUFFICIENT_SCOPE');
      expect(await outbox()).toEqual(before);
      const writeOnly = (await t.issueKey(['loops:write'])).key; // :write implies :read
      expect((await list(base, runId, '', writeOnly)).statusCode).toBe(200);
      expect((await redeliver(base, runId, writeOnly)).statusCode).toBe(201);
    });
  });
});
