import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PENDING_DELIVERY } from '../../src/domain/deliveries/model.ts';
import { insertPod, updatePod } from '../../src/store/pods.ts';
import type { Executor } from '../../src/store/db.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

/**
 * GET /tickets/{slug} is reused as rendered while nothing it shows may have changed: its pods and
 * their deliveries change without the ticket changing, so a pod written here, through another store
 * (another process on the SQLite file, another replica on PostgreSQL), or a delivery recorded, shows
 * on the next read.
 */
describe.each(DATABASES)('rendered ticket details on %s', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await startTestApp(kind);
  });
  afterEach(async () => t.close());

  let podCount = 0;
  const addPod = async (db: Executor, ticketSlug: string) => {
    const now = Date.now() + podCount;
    const key = `pod-cache-${++podCount}`;
    const row = await insertPod(db, {
      org_id: t.org.id, key, runner_id: null, agent_slug: 'shell', status: 'queued', desired_state: 'run', prompt: 'true', mode: 'direct',
      config: '{}', repository_id: null, branch: null, ticket_slug: ticketSlug, channel_id: null, alias: null, parent_pod_key: null,
      created_by: null, runner_labels: null, preset: null, credentials: '{}', token_prefix: key, token_hash: key, token_encrypted: key,
      error_message: null, exit_code: null, session_id: null, result: null, usage_input_tokens: null, usage_output_tokens: null,
      usage_cache_read_tokens: null, usage_cache_write_tokens: null, usage_cost_usd: null, usage_turns: null, network_refused: 0,
      delivery: null, started_at: null, deadline_at: null, finished_at: null, created_at: now, updated_at: now,
    });
    return row;
  };
  const detail = async (slug: string) => {
    const response = await t.request({ method: 'GET', url: t.path(`/tickets/${slug}`) });
    expect(response.statusCode, response.body).toBe(200);
    return { body: response.body, ticket: response.json().ticket as { title: string; pods: { key: string; status: string; delivery: { branch: string } | null }[] } };
  };

  it('serve the same body until something changes, then show pods and deliveries written here or through another store', async () => {
    const created = await t.request({ method: 'POST', url: t.path('/tickets'), payload: { type: 'task', title: 'with work' } });
    const slug = created.json().ticket.slug as string;
    const first = await detail(slug);
    expect(first.ticket.pods).toEqual([]);
    expect((await detail(slug.toLowerCase())).ticket.pods).toEqual([]);
    expect((await detail(slug)).body).toBe(first.body);

    // Through this server's own store: the ticket itself does not change.
    const here = await addPod(t.ctx.store.db, slug);
    expect((await detail(slug)).ticket.pods.map((p) => [p.key, p.status])).toEqual([[here.key, 'queued']]);
    await updatePod(t.ctx.store.db, here.id, { status: 'running' });
    expect((await detail(slug)).ticket.pods[0].status).toBe('running');
    // The slug written in another case is another URL, rendered on its own but never older.
    expect((await detail(slug.toLowerCase())).ticket.pods[0].status).toBe('running');

    const other = t.database.open();
    try {
      for (let n = 1; n <= 2; n++) {
        const elsewhere = await addPod(other.db, slug);
        const shown = (await detail(slug)).ticket.pods;
        expect(shown.map((p) => p.key)).toContain(elsewhere.key);
        expect(shown).toHaveLength(n + 1);
        await updatePod(other.db, here.id, { delivery: JSON.stringify({ ...PENDING_DELIVERY, status: 'pushed', branch: `drover/${n}` }) });
        expect((await detail(slug)).ticket.pods.find((p) => p.key === here.key)!.delivery!.branch).toBe(`drover/${n}`);
        await updatePod(other.db, elsewhere.id, { status: 'completed' });
        expect((await detail(slug)).ticket.pods.find((p) => p.key === elsewhere.key)!.status).toBe('completed');
      }
    } finally {
      await other.close();
    }
    // And the ticket's own changes.
    await t.request({ method: 'PUT', url: t.path(`/tickets/${slug}`), payload: { title: 'renamed' } });
    expect((await detail(slug)).ticket.title).toBe('renamed');
  });
});
