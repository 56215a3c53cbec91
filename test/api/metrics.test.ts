/**
 * GET /metrics (docs/decisions.md): Prometheus text format from prom-client, behind the admin token;
 * request counts and latencies by route and status, pods by status, queued pods, runners by
 * status, cron lag, webhook outbox depth and event subscribers, read from the database.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setEventSubscribers } from '../../src/metrics.ts';
import { insertDelivery } from '../../src/store/webhooks.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { expectError } from '../helpers/errors.ts';
import { parsePrometheusText, type Exposition } from '../helpers/prometheus.ts';
import { insertRunner } from '../helpers/runners.ts';

describe.each(DATABASES)('GET /metrics on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(async () => {
    await t?.close();
  });
  afterEach(() => setEventSubscribers(0));

  const scrape = async (): Promise<Exposition> => {
    const res = await t.request({ method: 'GET', url: '/metrics', key: null, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return parsePrometheusText(res.body);
  };

  it('needs the admin token: none, an API key, or a wrong token are 401 in the error body', async () => {
    expectError(await t.request({ method: 'GET', url: '/metrics', key: null }), 401, 'AUTH_REQUIRED');
    expectError(await t.request({ method: 'GET', url: '/metrics' }), 401, 'AUTH_REQUIRED');
    expectError(await t.request({ method: 'GET', url: '/metrics', key: null, headers: { authorization: `Bearer ${t.key}` } }), 401, 'INVALID_API_KEY');
    expectError(await t.request({ method: 'GET', url: '/metrics', key: null, headers: { authorization: `Bearer ${ADMIN_TOKEN}x` } }), 401, 'INVALID_API_KEY');
  });

  it('parses as Prometheus text with every metric of docs/decisions.md declared', async () => {
    const metrics = await scrape();
    expect(Object.fromEntries(metrics.types)).toMatchObject({
      drover_http_requests_total: 'counter',
      drover_http_request_duration_seconds: 'histogram',
      drover_pods: 'gauge',
      drover_pods_queued: 'gauge',
      drover_runners: 'gauge',
      drover_cron_lag_seconds: 'gauge',
      drover_webhook_outbox_depth: 'gauge',
      drover_event_subscribers: 'gauge',
    });
    for (const status of ['queued', 'initializing', 'running', 'orphaned', 'completed', 'failed', 'terminated']) {
      expect(metrics.value('drover_pods', { status }), status).toBe(0);
    }
    expect(metrics.value('drover_pods_queued')).toBe(0);
    expect(metrics.value('drover_cron_lag_seconds')).toBe(0);
  });

  it('counts requests and their latencies by method, route template and status', async () => {
    for (let i = 0; i < 3; i++) expect((await t.request({ method: 'GET', url: t.path('/tickets') })).statusCode).toBe(200);
    expectError(await t.request({ method: 'GET', url: t.path('/tickets/NOPE-1') }), 404);
    await t.request({ method: 'GET', url: '/no/such/route', key: null });
    const metrics = await scrape();
    const list = { method: 'GET', route: '/api/v1/ext/orgs/:org/tickets', status: '200' };
    expect(metrics.value('drover_http_requests_total', list)).toBeGreaterThanOrEqual(3);
    expect(metrics.value('drover_http_request_duration_seconds_count', list)).toBeGreaterThanOrEqual(3);
    expect(metrics.value('drover_http_request_duration_seconds_bucket', { ...list, le: '+Inf' })).toBeGreaterThanOrEqual(3);
    expect(metrics.value('drover_http_requests_total', { method: 'GET', route: '/api/v1/ext/orgs/:org/tickets/:slug', status: '404' })).toBeGreaterThanOrEqual(1);
    // Unknown routes are one series, not one per URL.
    expect(metrics.value('drover_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
    expect(metrics.samples.some((s) => s.labels.route?.includes('/no/such'))).toBe(false);
  });

  it('reports pods, queued pods, runners, cron lag, the webhook outbox and event subscribers', async () => {
    const now = Date.now();
    const online = await insertRunner(t.store, t.org.id);
    await insertRunner(t.store, t.org.id, { status: 'offline', last_heartbeat_at: null });
    await insertRunner(t.store, t.org.id, { status: 'draining' });
    const before = await scrape();

    const keys: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await t.request({ method: 'POST', url: t.path('/pods'), payload: { agent_slug: 'shell', runner_id: online, agentfile_layer: 'PROMPT "true"' } });
      expect(res.statusCode, res.body).toBe(201);
      keys.push((res.json() as { pod: { pod_key: string } }).pod.pod_key);
    }
    // A pod waiting for a slot (pod queueing writes this status).
    await t.store.db.updateTable('pods').set({ status: 'queued' as never }).where('key', '=', keys[0]).execute();

    const loop = await t.request({
      method: 'POST',
      url: t.path('/loops'),
      payload: { name: 'Late', slug: 'late', agent_slug: 'shell', prompt_template: 'echo', cron_expression: '0 3 * * *' },
    });
    expect(loop.statusCode, loop.body).toBe(201);
    await t.store.db.updateTable('loops').set({ next_run_at: now - 90_000 }).where('slug', '=', 'late').execute();

    for (const status of ['pending', 'pending', 'delivered'] as const) {
      await insertDelivery(t.store.db, {
        org_id: t.org.id,
        event_id: `msg_${Math.random().toString(36).slice(2)}`,
        url: 'https://hooks.example.com/',
        secret_encrypted: 'x',
        payload: '{}',
        status,
        attempts: 0,
        next_attempt_at: now + 3_600_000,
        last_status_code: null,
        last_error: null,
        subject_type: 'loop_run',
        subject_id: 1,
        created_at: now,
        updated_at: now,
      });
    }
    setEventSubscribers(7);

    const metrics = await scrape();
    expect(metrics.value('drover_pods', { status: 'initializing' })).toBe((before.value('drover_pods', { status: 'initializing' }) ?? 0) + 2);
    expect(metrics.value('drover_pods', { status: 'queued' })).toBe(1);
    expect(metrics.value('drover_pods_queued')).toBe(1);
    expect(metrics.value('drover_runners', { status: 'online' })).toBe((before.value('drover_runners', { status: 'online' }) ?? 0));
    expect(metrics.value('drover_runners', { status: 'offline' })).toBeGreaterThanOrEqual(1);
    expect(metrics.value('drover_runners', { status: 'draining' })).toBeGreaterThanOrEqual(1);
    const lag = metrics.value('drover_cron_lag_seconds')!;
    expect(lag).toBeGreaterThanOrEqual(90);
    expect(lag).toBeLessThan(90 + 60);
    expect(metrics.value('drover_webhook_outbox_depth')).toBe(2);
    expect(metrics.value('drover_event_subscribers')).toBe(7);
    // Nothing secret in the exposition.
    const text = (await t.request({ method: 'GET', url: '/metrics', key: null, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body;
    expect(text).not.toContain(t.key);
    expect(text).not.toContain(ADMIN_TOKEN);
  });
});
