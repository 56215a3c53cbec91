/**
 * Quotas per organization (docs/decisions.md): server-wide defaults, overridden per org through
 * `GET/PATCH /api/v1/admin/orgs/{org}/quotas` (null: back to the default; 0: no limit). Exceeding
 * `max_queued_pods` or `max_loops` is 429 QUOTA_EXCEEDED naming the quota in the message and in
 * `details`, and writes nothing; a pod beyond `max_active_pods` (a loop run's too) waits `queued`
 * and starts once the org's pods end. Both databases.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/protocol/scopes.ts';
import type { Quotas } from '../../src/domain/quotas/model.ts';
import type { OrgRow } from '../../src/store/schema.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { expectError } from '../helpers/errors.ts';
import { insertRunner } from '../helpers/runners.ts';
import { waitFor } from '../helpers/runner-process.ts';

const DEFAULTS: Quotas = { max_active_pods: 3, max_queued_pods: 7, max_loops: 2, max_cost_usd_per_month: 0, pod_output_bytes_per_sec: 4096 };

interface QuotaBody {
  quotas: { org: string; overrides: Record<keyof Quotas, number | null>; defaults: Quotas; effective: Quotas };
}

describe.each(DATABASES)('quotas on %s', (kind) => {
  let t: TestApp;
  const clock = { now: Date.parse('2026-06-01T09:00:00.000Z') };
  let orgSeq = 0;

  const admin = (method: 'GET' | 'PATCH', url: string, payload?: unknown, headers: Record<string, string> = { authorization: `Bearer ${ADMIN_TOKEN}` }) =>
    t.request({ method, url: `/api/v1/admin${url}`, key: null, headers, ...(payload === undefined ? {} : { payload: payload as object }) });

  /** An organization of its own with a key and a roomy, fresh runner. */
  async function freshOrg(): Promise<{ org: OrgRow; key: string; slug: string }> {
    orgSeq += 1;
    const org = await t.createOrg(`quota-${orgSeq}`);
    const { key } = await t.issueKey(SCOPES, { org });
    await insertRunner(t.store, org.id, { max_pods: 1000 }, clock.now);
    return { org, key, slug: org.slug };
  }

  const createPod = (slug: string, key: string) =>
    t.request({ method: 'POST', url: t.path('/pods', slug), key, payload: { agent_slug: 'shell', agentfile_layer: 'PROMPT "sleep 60"' } });
  const createLoop = (slug: string, key: string, name: string) =>
    t.request({ method: 'POST', url: t.path('/loops', slug), key, payload: { name, agent_slug: 'shell', execution_mode: 'direct', prompt_template: 'true' } });
  const countRows = async (table: 'pods' | 'loops', orgId: number) =>
    Number((await t.store.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', orgId).executeTakeFirstOrThrow()).n);

  beforeAll(async () => {
    t = await startTestApp(kind, { quotas: DEFAULTS, now: () => clock.now });
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(async () => {
    clock.now += 60_000;
    await t.store.db.updateTable('runners').set({ last_heartbeat_at: clock.now }).execute();
  });

  describe('GET/PATCH /api/v1/admin/orgs/{org}/quotas', () => {
    it('shows the overrides (none yet), the server defaults and what applies', async () => {
      const { slug } = await freshOrg();
      const res = await admin('GET', `/orgs/${slug}/quotas`);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({
        quotas: {
          org: slug,
          overrides: { max_active_pods: null, max_queued_pods: null, max_loops: null, pod_output_bytes_per_sec: null, max_cost_usd_per_month: null },
          defaults: DEFAULTS,
          effective: DEFAULTS,
        },
      });
    });

    it('PATCH changes only the quotas given; null puts one back on the default; {} changes nothing', async () => {
      const { slug } = await freshOrg();
      let res = await admin('PATCH', `/orgs/${slug}/quotas`, { max_active_pods: 50, max_queued_pods: 0, pod_output_bytes_per_sec: 10_000_000_000, max_cost_usd_per_month: null });
      expect(res.statusCode, res.body).toBe(200);
      let body = (res.json() as QuotaBody).quotas;
      expect(body.overrides).toEqual({ max_active_pods: 50, max_queued_pods: 0, max_loops: null, pod_output_bytes_per_sec: 10_000_000_000, max_cost_usd_per_month: null });
      expect(body.effective).toEqual({ max_active_pods: 50, max_queued_pods: 0, max_loops: 2, pod_output_bytes_per_sec: 10_000_000_000, max_cost_usd_per_month: 0 });
      expect((await admin('GET', `/orgs/${slug}/quotas`)).json()).toEqual(res.json());

      res = await admin('PATCH', `/orgs/${slug}/quotas`, { max_active_pods: null, max_loops: 9 });
      body = (res.json() as QuotaBody).quotas;
      expect(body.overrides).toEqual({ max_active_pods: null, max_queued_pods: 0, max_loops: 9, pod_output_bytes_per_sec: 10_000_000_000, max_cost_usd_per_month: null });
      expect(body.effective.max_active_pods).toBe(3);

      res = await admin('PATCH', `/orgs/${slug}/quotas`, {});
      expect(res.statusCode).toBe(200);
      expect((res.json() as QuotaBody).quotas.overrides).toEqual(body.overrides);
    });

    it.each([
      [{ max_active_pods: -1 }, '/max_active_pods'],
      [{ max_loops: 1.5 }, '/max_loops'],
      [{ max_loops: '3' }, '/max_loops'],
      [{ max_active_pods: 2_147_483_648 }, '/max_active_pods'],
      [{ pod_output_bytes_per_sec: true }, '/pod_output_bytes_per_sec'],
      [{ max_pods: 3 }, '/max_pods'],
    ])('PATCH %j → 400 naming %s; nothing is written', async (payload, field) => {
      const { slug, org } = await freshOrg();
      await admin('PATCH', `/orgs/${slug}/quotas`, { max_loops: 5 });
      const before = await t.store.db.selectFrom('org_quotas').selectAll().where('org_id', '=', org.id).execute();
      const body = expectError(await admin('PATCH', `/orgs/${slug}/quotas`, payload), 400, 'VALIDATION_FAILED');
      expect(body.details?.map((d) => d.field)).toContain(field);
      expect(await t.store.db.selectFrom('org_quotas').selectAll().where('org_id', '=', org.id).execute()).toEqual(before);
    });

    it('a body that is not an object → 400; an unknown org → 404; no or a wrong admin token (an API key included) → 401', async () => {
      const { slug, key } = await freshOrg();
      expectError(await admin('PATCH', `/orgs/${slug}/quotas`, [1]), 400, 'VALIDATION_FAILED');
      expectError(await admin('GET', '/orgs/no-such-org/quotas'), 404, 'NOT_FOUND');
      expectError(await admin('PATCH', '/orgs/no-such-org/quotas', { max_loops: 1 }), 404, 'NOT_FOUND');
      expectError(await admin('GET', `/orgs/${slug}/quotas`, undefined, {}), 401, 'AUTH_REQUIRED');
      expectError(await admin('PATCH', `/orgs/${slug}/quotas`, { max_loops: 0 }, { authorization: 'Bearer wrong' }), 401, 'INVALID_API_KEY');
      expectError(await admin('PATCH', `/orgs/${slug}/quotas`, { max_loops: 0 }, { authorization: `Bearer ${key}` }), 401, 'INVALID_API_KEY');
      // Nor is the admin route reachable with an org key as X-API-Key.
      expectError(await t.request({ method: 'GET', url: `/api/v1/admin/orgs/${slug}/quotas`, key }), 401);
      expect(await t.store.db.selectFrom('org_quotas').selectAll().execute()).not.toContainEqual(expect.objectContaining({ max_loops: 0 }));
    });
  });

  describe('max_active_pods and max_queued_pods', () => {
    type PodBody = { pod: { pod_key: string; status: string; queue_position: number | null } };
    const podOf = (res: { json(): unknown }) => (res.json() as PodBody).pod;
    const getPod = async (slug: string, key: string, podKey: string) => podOf(await t.request({ method: 'GET', url: t.path(`/pods/${podKey}`, slug), key }));
    /** A pod ending wakes the queue, which places queued pods in the background. */
    const settlesTo = (slug: string, key: string, podKey: string, status: string) =>
      waitFor(async () => {
        const pod = await getPod(slug, key, podKey);
        return pod.status === status ? pod : undefined;
      }, { what: `pod ${podKey} to be ${status}` });

    it('a pod beyond max_active_pods waits queued; beyond max_queued_pods → 429 QUOTA_EXCEEDED naming it and nothing is recorded; a pod ending starts the first queued one', async () => {
      const { org, key, slug } = await freshOrg();
      const started: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await createPod(slug, key);
        expect(res.statusCode, res.body).toBe(201);
        expect(podOf(res).status).toBe('initializing');
        started.push(podOf(res).pod_key);
      }
      const queued: string[] = [];
      for (let i = 0; i < 7; i++) {
        const res = await createPod(slug, key);
        expect(res.statusCode, res.body).toBe(201);
        expect(podOf(res).status).toBe('queued');
        expect((await getPod(slug, key, podOf(res).pod_key)).queue_position).toBe(i + 1);
        queued.push(podOf(res).pod_key);
      }
      const refused = expectError(await createPod(slug, key), 429, 'QUOTA_EXCEEDED');
      expect(refused.error).toContain('max_queued_pods');
      expect(refused.error).toContain('7');
      expect(refused.details).toEqual([{ field: 'max_queued_pods', message: refused.error }]);
      expect(await countRows('pods', org.id)).toBe(10);

      expect((await t.request({ method: 'POST', url: t.path(`/pods/${started[0]}/terminate`, slug), key })).statusCode).toBe(200);
      expect((await settlesTo(slug, key, queued[0], 'initializing')).status).toBe('initializing');
      expect(await getPod(slug, key, queued[1])).toMatchObject({ status: 'queued', queue_position: 1 });
      expect(podOf(await createPod(slug, key)).status).toBe('queued');
      expectError(await createPod(slug, key), 429, 'QUOTA_EXCEEDED');
    });

    it("counts only the organization's own pods, and an override applies to that organization alone", async () => {
      const a = await freshOrg();
      const b = await freshOrg();
      for (let i = 0; i < 3; i++) expect(podOf(await createPod(a.slug, a.key)).status).toBe('initializing');
      expect(podOf(await createPod(a.slug, a.key)).status).toBe('queued');
      expect((await admin('PATCH', `/orgs/${b.slug}/quotas`, { max_active_pods: 1, max_queued_pods: 1 })).statusCode).toBe(200);
      expect(podOf(await createPod(b.slug, b.key)).status).toBe('initializing');
      expect(podOf(await createPod(b.slug, b.key)).status).toBe('queued');
      expectError(await createPod(b.slug, b.key), 429, 'QUOTA_EXCEEDED');
      expect((await admin('PATCH', `/orgs/${a.slug}/quotas`, { max_active_pods: 0 })).statusCode).toBe(200); // no limit
      // The queued pod goes first (FIFO), then every new one starts at once.
      for (let i = 0; i < 5; i++) expect(podOf(await createPod(a.slug, a.key)).status).toBe('initializing');
      const all = await t.request({ method: 'GET', url: t.path('/pods?status=queued', a.slug), key: a.key });
      expect((all.json() as { pods: unknown[] }).pods).toHaveLength(0);
    });

    it('concurrent creates cannot overfill either quota: 12 at once with room for 3 running and 7 queued → 3 started, 7 queued, 2 refused', async () => {
      const { org, key, slug } = await freshOrg();
      const results = await Promise.all(Array.from({ length: 12 }, () => createPod(slug, key)));
      const created = results.filter((r) => r.statusCode === 201).map(podOf);
      expect(created.filter((p) => p.status === 'initializing')).toHaveLength(3);
      expect(created.filter((p) => p.status === 'queued')).toHaveLength(7);
      const refused = results.filter((r) => r.statusCode !== 201);
      expect(refused).toHaveLength(2);
      for (const res of refused) expectError(res, 429, 'QUOTA_EXCEEDED');
      expect(await countRows('pods', org.id)).toBe(10);
    });

    it("a loop run that meets the full quota waits with its pod queued, and starts once the organization's pod has ended", async () => {
      const { org, key, slug } = await freshOrg();
      await admin('PATCH', `/orgs/${slug}/quotas`, { max_active_pods: 1 });
      const blocker = (await createPod(slug, key)).json() as PodBody;
      expect((await createLoop(slug, key, 'Waits')).statusCode).toBe(201);
      const triggered = await t.request({ method: 'POST', url: t.path('/loops/waits/trigger', slug), key });
      expect(triggered.statusCode, triggered.body).toBe(201);
      const run = (triggered.json() as { run: { id: number; status: string; pod_key: string | null } }).run;
      expect(run.status).toBe('pending');
      expect(run.pod_key).not.toBeNull();
      expect((await getPod(slug, key, run.pod_key!)).status).toBe('queued');

      await t.request({ method: 'POST', url: t.path(`/pods/${blocker.pod.pod_key}/terminate`, slug), key });
      expect((await settlesTo(slug, key, run.pod_key!, 'initializing')).status).toBe('initializing');
      expect(await countRows('pods', org.id)).toBe(2);
    });
  });

  describe('max_loops', () => {
    it('the loop over the quota → 429 QUOTA_EXCEEDED naming it; deleting one makes room; 0 means no limit', async () => {
      const { org, key, slug } = await freshOrg();
      expect((await createLoop(slug, key, 'One')).statusCode).toBe(201);
      expect((await createLoop(slug, key, 'Two')).statusCode).toBe(201);
      const refused = expectError(await createLoop(slug, key, 'Three'), 429, 'QUOTA_EXCEEDED');
      expect(refused.error).toContain('max_loops');
      expect(refused.details?.[0].field).toBe('max_loops');
      expect(await countRows('loops', org.id)).toBe(2);
      expect((await t.request({ method: 'DELETE', url: t.path('/loops/one', slug), key })).statusCode).toBe(200);
      expect((await createLoop(slug, key, 'Three')).statusCode).toBe(201);
      await admin('PATCH', `/orgs/${slug}/quotas`, { max_loops: 0 });
      for (const name of ['Four', 'Five', 'Six']) expect((await createLoop(slug, key, name)).statusCode).toBe(201);
    });

    it('concurrent creates cannot overfill it: 8 at once with room for 2 → exactly 2 created', async () => {
      const { org, key, slug } = await freshOrg();
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => createLoop(slug, key, `Race ${i}`)));
      expect(results.filter((r) => r.statusCode === 201)).toHaveLength(2);
      for (const res of results.filter((r) => r.statusCode !== 201)) expectError(res, 429, 'QUOTA_EXCEEDED');
      expect(await countRows('loops', org.id)).toBe(2);
    });
  });
});
