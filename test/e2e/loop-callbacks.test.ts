/**
 * Loop run callbacks (`callback_url`, docs/api.md "Loops and runs") end to end: a real `drover serve` with
 * DROVER_WEBHOOK_ALLOW_PRIVATE=true runs `shell` loops (on SQLite with its in-process local
 * runner, on PostgreSQL with an external `drover runner`), and a `node:http` receiver on loopback
 * checks every request with the `standardwebhooks` package and the loop's `callback_secret`.
 * Retries happen in real time here: the first retry comes 5 s after the first attempt.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { createProcessTestDatabase, http as request, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { runnerPath, startRunnerProcess, tempDir, waitFor, type RunnerProcess } from '../helpers/runner-process.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';

const ORG = '/api/v1/ext/orgs/default';
const ADMIN_TOKEN = 'drvadm_e2e_loop_callbacks_admin_token_0123456789';

interface Run {
  id: number;
  loop_id: number;
  loop_slug: string;
  status: string;
  callback_status: string;
  finished_at: string | null;
}

interface Loop {
  id: number;
  slug: string;
  name: string;
  callback_url: string | null;
  callback_secret?: string;
}

/** Only for bounded checks that nothing more arrives in the meantime (no event to wait for). */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(DATABASES)('loop run callbacks end to end (%s)', (kind) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let runner: RunnerProcess | undefined;
  let scratch: string;
  let apiKey: string;
  const receivers: WebhookReceiver[] = [];

  const serve = () =>
    startServerProcess({
      dataDir: database.dataDir,
      localRunner: kind === 'sqlite',
      env: {
        ...database.env,
        DROVER_ADMIN_TOKEN: ADMIN_TOKEN,
        DROVER_WEBHOOK_ALLOW_PRIVATE: 'true',
        DROVER_SWEEP_INTERVAL_MS: '200',
        DROVER_LOG_LEVEL: 'info',
      },
    });
  const api = async (method: string, urlPath: string, body?: unknown) => request(server.url, method, urlPath, { key: apiKey, body });
  /**
   * A receiver on 127.0.0.1 (on `port` if given) at /hooks/drover; answers `status(n)` to the n-th
   * request. Its secret is set once the loop (and so its callback_secret) exists.
   */
  const receiver = async (status: (n: number) => number, port?: number) => {
    const r = await startWebhookReceiver({ reply: (_hit, n) => status(n), port, path: '/hooks/drover' });
    receivers.push(r);
    return r;
  };

  /** Creates a shell loop (direct: the script runs once) calling `url` and returns it as GET /loops/:slug shows it (with its secret). */
  const createLoop = async (slug: string, url: string, prompt: string, extra: Record<string, unknown> = {}): Promise<Loop> => {
    const created = await api('POST', `${ORG}/loops`, { name: `Callbacks ${slug}`, slug, agent_slug: 'shell', execution_mode: 'direct', prompt_template: prompt, callback_url: url, ...extra });
    expect(created.status, created.text).toBe(201);
    const got = await api('GET', `${ORG}/loops/${slug}`);
    expect(got.status, got.text).toBe(200);
    const loop = (got.body as { loop: Loop }).loop;
    expect(loop.callback_url).toBe(url);
    expect(loop.callback_secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    return loop;
  };
  const trigger = async (slug: string): Promise<Run> => {
    const response = await api('POST', `${ORG}/loops/${slug}/trigger`);
    expect(response.status, response.text).toBe(201);
    return (response.body as { run: Run }).run;
  };
  const getRun = async (slug: string, id: number): Promise<Run> => {
    const response = await api('GET', `${ORG}/loops/${slug}/runs/${id}`);
    expect(response.status, response.text).toBe(200);
    return (response.body as { run: Run }).run;
  };
  const waitRun = (slug: string, id: number, ready: (run: Run) => boolean, what: string, timeout = 20_000) =>
    waitFor(
      async () => {
        const run = await getRun(slug, id);
        return ready(run) ? run : undefined;
      },
      { timeout, interval: 100, what: `run ${id} of ${slug}: ${what}` },
    );

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    scratch = tempDir('callbacks');
    server = await serve();
    apiKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    if (kind !== 'sqlite') {
      const token = await request(server.url, 'POST', '/api/v1/admin/orgs/default/runner-tokens', { bearer: ADMIN_TOKEN, body: {} });
      expect(token.status, token.text).toBe(201);
      runner = await startRunnerProcess({
        server: server.url,
        token: (token.body as { token: string }).token,
        workDir: path.join(scratch, 'runner'),
        name: 'callbacks',
        maxPods: 4,
        env: { PATH: runnerPath(), HOME: scratch, LANG: 'C.UTF-8' },
      });
    }
    await waitFor(
      async () => {
        const response = await api('GET', `${ORG}/runners`);
        return (response.body as { runners: { status: string }[] }).runners.some((r) => r.status === 'online');
      },
      { timeout: 60_000, what: 'a runner to be online' },
    );
  });

  afterAll(async () => {
    for (const r of receivers) await r.close();
    await runner?.stop();
    await server?.stop();
    await database?.cleanup();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('a finished run is POSTed once, signed with the loop callback_secret, as {type, timestamp, data: {loop, run}}; callback_status becomes delivered', async () => {
    const r = await receiver(() => 200);
    const loop = await createLoop('hello', r.url, 'echo hi');
    r.secret = loop.callback_secret!;
    const triggered = await trigger('hello');

    const run = await waitRun('hello', triggered.id, (x) => x.callback_status === 'delivered', 'callback delivered');
    expect(run.status).toBe('completed');
    await sleep(1_500); // a few sender passes: nothing else arrives
    expect(r.hits).toHaveLength(1);
    const [hit] = r.hits;
    expect(hit.verifyError).toBeNull();
    expect(hit.method).toBe('POST');
    expect(hit.path).toBe('/hooks/drover');
    expect(hit.headers['content-type']).toBe('application/json');
    expect(hit.webhookId).toMatch(/^msg_/);
    expect(hit.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(Math.abs(Number(hit.headers['webhook-timestamp']) - hit.at / 1000)).toBeLessThan(30);
    // A wrong secret does not verify it.
    expect(() => new Webhook('whsec_' + Buffer.alloc(24, 7).toString('base64')).verify(hit.body, hit.headers as Record<string, string>)).toThrow();

    const payload = JSON.parse(hit.body) as { type: string; timestamp: string; data: { loop: Record<string, unknown>; run: Run & Record<string, unknown> } };
    expect(Object.keys(payload).sort()).toEqual(['data', 'timestamp', 'type']);
    expect(payload.type).toBe('loop.run.finished');
    expect(new Date(payload.timestamp).toISOString()).toBe(payload.timestamp);
    expect(Object.keys(payload.data).sort()).toEqual(['loop', 'run']);
    expect(payload.data.loop).toEqual({ id: loop.id, slug: 'hello', name: 'Callbacks hello' });
    expect(payload.data.run).toMatchObject({ id: triggered.id, loop_id: loop.id, loop_slug: 'hello', status: 'completed', finished_at: run.finished_at });
    expect(Date.parse(payload.timestamp)).toBeGreaterThanOrEqual(Date.parse(run.finished_at!));
  });

  it('a receiver answering 500 then 200 gets the delivery on the 5 s retry', async () => {
    const r = await receiver((n) => (n === 1 ? 500 : 200));
    const loop = await createLoop('retry', r.url, 'echo hi');
    r.secret = loop.callback_secret!;
    const triggered = await trigger('retry');
    await waitFor(() => r.hits.length >= 1, { timeout: 20_000, what: 'the first attempt' });
    expect((await getRun('retry', triggered.id)).callback_status).toBe('pending');
    // The failed attempt is announced (a run.updated after it, the callback still pending): a run
    // page showing the deliveries reads them again on it, not only once the retry has settled.
    const announced = await waitFor(
      async () => {
        const activity = await api('GET', `${ORG}/activity?types=run.updated&limit=50`);
        expect(activity.status, activity.text).toBe(200);
        const events = (activity.body as { events: { created_at: string; data: { run: Run } }[] }).events;
        return events.find((e) => e.data.run.id === triggered.id && e.data.run.callback_status === 'pending' && Date.parse(e.created_at) >= r.hits[0].at);
      },
      { timeout: 4_000, interval: 100, what: 'a run.updated for the failed attempt' },
    );
    expect(announced.data.run.status).toBe('completed');
    expect(r.hits).toHaveLength(1);

    const run = await waitRun('retry', triggered.id, (x) => x.callback_status === 'delivered', 'callback delivered on the retry', 10_000);
    const gap = r.hits[1].at - r.hits[0].at;
    expect(gap).toBeGreaterThanOrEqual(4_900);
    expect(gap).toBeLessThanOrEqual(8_000);
    await sleep(1_500);
    expect(r.hits).toHaveLength(2);
    expect(r.hits.every((h) => h.verifyError === null)).toBe(true);
    expect(r.hits[1].webhookId).toBe(r.hits[0].webhookId);
    expect(r.hits[1].body).toBe(r.hits[0].body);
    expect(run.status).toBe('completed');
  });

  it('a skipped run sends nothing (only the run that ran is announced)', async () => {
    const r = await receiver(() => 200);
    const loop = await createLoop('skipping', r.url, 'sleep 2; echo hi', { concurrency_policy: 'skip', max_concurrent_runs: 1 });
    r.secret = loop.callback_secret!;
    const first = await trigger('skipping');
    const skipped = await trigger('skipping');
    expect(skipped.status).toBe('skipped');
    expect(skipped.callback_status).toBe('none');

    await waitRun('skipping', first.id, (x) => x.callback_status === 'delivered', 'callback delivered');
    await sleep(1_500);
    expect(r.hits).toHaveLength(1);
    expect(r.hits[0].verifyError).toBeNull();
    expect((JSON.parse(r.hits[0].body) as { data: { run: Run } }).data.run).toMatchObject({ id: first.id, status: 'completed' });
    expect(await getRun('skipping', skipped.id)).toMatchObject({ status: 'skipped', callback_status: 'none' });
  });

  // Last in the file: it replaces the server (an external runner stays dialling the old one).
  it('receiver down while the server is killed -9 and restarted: delivered after the restart, exactly once', async () => {
    const down = await receiver(() => 200);
    const port = down.port;
    const loop = await createLoop('restart', down.url, 'echo hi');
    await down.close(); // nothing listens on the callback URL now

    const triggered = await trigger('restart');
    await waitRun('restart', triggered.id, (x) => x.status === 'completed', 'completed');
    // Attempt 1 failed (connection refused) and was recorded; retry due 5 s later.
    const failure = await waitFor(
      () =>
        server
          .logRecords()
          .find((rec) => rec.msg === 'webhook attempt failed; will retry' && typeof rec.url === 'string' && rec.url.includes(`:${port}/`)),
      { timeout: 10_000, interval: 20, what: 'the first (failed) attempt in the log' },
    );
    expect(failure).toMatchObject({ attempt: 1, statusCode: null });
    expect(String(failure.error)).toMatch(/ECONNREFUSED/);
    expect((await getRun('restart', triggered.id)).callback_status).toBe('pending');
    const killedAt = Date.now();
    await server.kill9();
    server = await serve();
    const restartMs = Date.now() - killedAt;
    const up = await receiver(() => 200, port);
    up.secret = loop.callback_secret!;
    expect(up.url).toBe(down.url);

    const run = await waitRun('restart', triggered.id, (x) => x.callback_status === 'delivered', `callback delivered after the restart (restart took ${restartMs} ms)`, 15_000);
    expect(run.status).toBe('completed');
    await sleep(2_000);
    expect(up.hits).toHaveLength(1);
    expect(up.hits[0].verifyError).toBeNull();
    expect(up.hits[0].webhookId).toBe(failure.webhookId);
    expect((JSON.parse(up.hits[0].body) as { data: { run: Run } }).data.run).toMatchObject({ id: triggered.id, status: 'completed' });
  });
});
