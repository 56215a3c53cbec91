/**
 * `drover serve` as a real process (docs/api.md "Operations", "Administration"; its first start):
 * first start, restart on the same data, DROVER_ADMIN_TOKEN, graceful shutdown on SIGTERM and
 * SIGINT with requests in flight, invalid configuration, and what reaches the log.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { createProcessTestDatabase, http as call, runDrover, startServerProcess } from '../helpers/server-process.ts';
import { waitFor } from '../helpers/runner-process.ts';
import { runnerCgroupDirs } from '../../src/runner/limits/cgroups.ts';

/** Empty databases, as an operator's first start finds them: the server migrates them itself. */
const FIRST_START = { migrated: false };

const TICKETS = '/api/v1/ext/orgs/default/tickets';
const API_KEY = /^drv_[A-Za-z0-9]{32,}$/;

function readSecret(dataDir: string, name: string): string {
  return fs.readFileSync(path.join(dataDir, name), 'utf8').trim();
}

function fileMode(file: string): number {
  return fs.statSync(file).mode & 0o777;
}

function occurrences(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

interface Pending {
  /** Resolves once the request (or the first part of its body) is on the wire. */
  sent: Promise<void>;
  /** Sends the rest of the body and ends the request. */
  finish(): void;
  response: Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }>;
}

/**
 * A request over node:http through `agent`; with `holdBack`, the last `holdBack` bytes of the body
 * wait for `finish()`, so the request is certainly still in flight until then.
 */
function openRequest(
  agent: http.Agent,
  base: string,
  method: string,
  urlPath: string,
  headers: Record<string, string>,
  body?: string,
  holdBack = 0,
): Pending {
  const url = new URL(base);
  const payload = body === undefined ? undefined : Buffer.from(body);
  const request = http.request({
    host: url.hostname,
    port: url.port,
    method,
    path: urlPath,
    agent,
    headers: { ...headers, ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}) },
  });
  const response = new Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
    request.on('error', reject);
    request.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('error', reject);
      res.on('end', () =>
        res.complete ? resolve({ status: res.statusCode ?? 0, text, headers: res.headers }) : reject(new Error('response cut short')),
      );
    });
  });
  response.catch(() => {}); // observed by the test; avoid an unhandled rejection in between
  const head = payload ? payload.subarray(0, payload.length - holdBack) : undefined;
  const tail = payload ? payload.subarray(payload.length - holdBack) : undefined;
  let sent: Promise<void>;
  if (holdBack > 0) {
    sent = new Promise((resolve, reject) => request.write(head!, (error) => (error ? reject(error) : resolve())));
  } else {
    sent = new Promise((resolve) => request.once('finish', () => resolve()));
    request.end(head);
  }
  return {
    sent,
    finish: () => {
      if (holdBack > 0) request.end(tail);
    },
    response,
  };
}

async function refusesConnections(url: string): Promise<boolean> {
  try {
    await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) });
    return false;
  } catch (error) {
    return ['ECONNREFUSED', 'ECONNRESET'].includes((error as { cause?: { code?: string } }).cause?.code ?? '');
  }
}

async function eventually(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(DATABASES)('drover serve (%s)', (kind) => {
  let database: TestDatabase;
  let firstKey = '';
  let firstAdminToken = '';
  let firstSlug = '';

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind, FIRST_START);
  });
  afterAll(async () => {
    await database?.cleanup();
  });

  it('first start: shows the admin token and the bootstrap key once, stores them 0600, and the key works over HTTP', async () => {
    const server = await startServerProcess({ dataDir: database.dataDir, env: database.env });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const adminFile = path.join(database.dataDir, 'admin-token');
    const keyFile = path.join(database.dataDir, 'bootstrap-api-key');
    firstAdminToken = readSecret(database.dataDir, 'admin-token');
    firstKey = readSecret(database.dataDir, 'bootstrap-api-key');
    expect(firstKey).toMatch(API_KEY);
    expect(firstAdminToken.length).toBeGreaterThanOrEqual(32);
    expect(fileMode(adminFile)).toBe(0o600);
    expect(fileMode(keyFile)).toBe(0o600);

    // Each secret is printed exactly once, on its own announcement line (not in a JSON log record).
    expect(occurrences(server.stdout, firstKey)).toBe(1);
    expect(occurrences(server.stdout, firstAdminToken)).toBe(1);
    const announced = server.announcements();
    expect(announced.find((line) => line.includes(firstKey))).toMatch(/organization "default"/);
    expect(announced.find((line) => line.includes(firstAdminToken))).toMatch(/admin token/i);
    expect(server.stderr).not.toContain(firstKey);

    const created = await call(server.url, 'POST', TICKETS, { key: firstKey, body: { type: 'task', title: 'over real HTTP' } });
    expect(created.status).toBe(201);
    const ticket = (created.body as { ticket: { slug: string; title: string } }).ticket;
    expect(ticket.title).toBe('over real HTTP');
    firstSlug = ticket.slug;

    const listed = await call(server.url, 'GET', TICKETS, { key: firstKey });
    expect(listed.status).toBe(200);
    expect((listed.body as { tickets: Array<{ slug: string }>; total: number }).tickets.map((t) => t.slug)).toEqual([firstSlug]);
    expect(listed.headers.get('content-type')).toMatch(/^application\/json/);
    const bearer = await call(server.url, 'GET', `${TICKETS}/${firstSlug}`, { bearer: firstKey });
    expect(bearer.status).toBe(200);

    const anonymous = await call(server.url, 'GET', TICKETS);
    expect(anonymous.status).toBe(401);

    const health = await call(server.url, 'GET', '/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
    const ready = await call(server.url, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: expect.any(String) });

    const orgs = await call(server.url, 'GET', '/api/v1/admin/orgs', { bearer: firstAdminToken });
    expect(orgs.status).toBe(200);
    expect((orgs.body as { orgs: Array<{ slug: string }> }).orgs.map((o) => o.slug)).toEqual(['default']);
    const badAdmin = await call(server.url, 'GET', '/api/v1/admin/orgs', { bearer: firstKey });
    expect(badAdmin.status).toBe(401);

    // A secret in the query string: rejected (unknown parameter) and logged redacted.
    const leaky = await call(server.url, 'GET', `${TICKETS}?access_token=SECRET123`, { key: firstKey });
    expect(leaky.status).toBe(400);
    expect(leaky.body).toMatchObject({ code: 'VALIDATION_FAILED' });

    expect(await server.stop('SIGTERM')).toBe(0);

    // One JSON log line per request, in order, with method, url and status.
    const requests = server.logRecords().filter((r) => r.msg === 'request');
    expect(requests.map((r) => [r.method, String(r.url).split('?')[0], r.status])).toEqual([
      ['POST', TICKETS, 201],
      ['GET', TICKETS, 200],
      ['GET', `${TICKETS}/${firstSlug}`, 200],
      ['GET', TICKETS, 401],
      ['GET', '/healthz', 200],
      ['GET', '/readyz', 200],
      ['GET', '/api/v1/admin/orgs', 200],
      ['GET', '/api/v1/admin/orgs', 401],
      ['GET', TICKETS, 400],
    ]);
    for (const record of requests) expect(record).toMatchObject({ reqId: expect.stringMatching(/^req_/), level: 30 });
    expect(String(requests.at(-1)!.url)).toMatch(/^\/api\/v1\/ext\/orgs\/default\/tickets\?access_token=[^&]*redacted/);

    // No log record (nor stderr) carries the key, the admin token or the query secret.
    const logText = server.logRecords().map((r) => JSON.stringify(r)).join('\n');
    for (const secret of [firstKey, firstAdminToken, 'SECRET123']) {
      expect(logText).not.toContain(secret);
      expect(server.stderr).not.toContain(secret);
    }
    expect(server.stdout).not.toContain('SECRET123');
  });

  it('second start on the same data: no new key, same admin token, data kept; SIGINT exits 0', async () => {
    const server = await startServerProcess({ dataDir: database.dataDir, env: database.env });
    expect(server.stdout).not.toMatch(/Created organization/);
    expect(server.stdout).not.toMatch(/Generated the admin token/);
    expect(server.stdout).not.toMatch(/drv_[A-Za-z0-9]{32}/);
    expect(server.stdout).not.toContain(firstAdminToken);
    expect(readSecret(database.dataDir, 'admin-token')).toBe(firstAdminToken);
    expect(readSecret(database.dataDir, 'bootstrap-api-key')).toBe(firstKey);

    const kept = await call(server.url, 'GET', `${TICKETS}/${firstSlug}`, { key: firstKey });
    expect(kept.status).toBe(200);
    expect(kept.body).toMatchObject({ ticket: { slug: firstSlug, title: 'over real HTTP' } });
    const orgs = await call(server.url, 'GET', '/api/v1/admin/orgs', { bearer: firstAdminToken });
    expect(orgs.status).toBe(200);
    expect((orgs.body as { orgs: unknown[] }).orgs).toHaveLength(1);

    expect(await server.stop('SIGINT')).toBe(0);
    expect(await refusesConnections(server.url)).toBe(true);
  });

  it('SIGTERM with requests in flight (Connection: close clients): they all complete, then the process stops listening and exits 0', async () => {
    const fresh = await createProcessTestDatabase(kind, FIRST_START);
    onTestFinished(() => fresh.cleanup());
    const server = await startServerProcess({ dataDir: fresh.dataDir, env: fresh.env });
    const key = readSecret(fresh.dataDir, 'bootstrap-api-key');
    for (let batch = 0; batch < 6; batch++) {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => call(server.url, 'POST', TICKETS, { key, body: { type: 'chore', title: `bulk ${batch}-${i}` } })),
      );
      expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    }

    const headers = { 'x-api-key': key };
    const agent = new http.Agent({ keepAlive: false });
    // Requests whose bodies are still arriving when the signal lands: certainly in flight.
    const slow = Array.from({ length: 4 }, (_, i) =>
      openRequest(agent, server.url, 'POST', TICKETS, headers, JSON.stringify({ type: 'task', title: `in flight ${i}` }), 5),
    );
    // A burst of large lists fired right before the signal.
    const lists = Array.from({ length: 10 }, () => openRequest(agent, server.url, 'GET', `${TICKETS}?limit=100`, headers));
    await Promise.all([...slow, ...lists].map((p) => p.sent));
    // Make sure the server has read them before the signal (the machine may be busy): a request
    // on a connection opened after theirs has been answered.
    expect((await call(server.url, 'GET', '/healthz')).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 100));

    server.child.kill('SIGTERM');
    await eventually(() => refusesConnections(server.url)); // no new connections while draining
    expect(server.child.exitCode).toBeNull(); // still draining the slow requests
    for (const p of slow) p.finish();

    const settled = await Promise.allSettled([...slow, ...lists].map((p) => p.response));
    const failures = settled.flatMap((r, i) => (r.status === 'rejected' ? [`${i < slow.length ? `slow POST ${i}` : `list ${i - slow.length}`}: ${r.reason}`] : []));
    expect(failures).toEqual([]);
    const slowResults = await Promise.all(slow.map((p) => p.response));
    for (const [i, result] of slowResults.entries()) {
      expect(result.status).toBe(201);
      expect(JSON.parse(result.text)).toMatchObject({ ticket: { title: `in flight ${i}`, slug: expect.stringMatching(/^[A-Z]+-\d+$/) } });
    }
    const listResults = await Promise.all(lists.map((p) => p.response));
    for (const result of listResults) {
      expect(result.status).toBe(200);
      const body = JSON.parse(result.text) as { tickets: unknown[]; total: number; limit: number };
      expect(body.tickets).toHaveLength(100);
      expect(body.total).toBeGreaterThanOrEqual(120);
      expect(body.limit).toBe(100);
    }

    expect(await server.waitForExit(15_000)).toBe(0);
    expect(await refusesConnections(server.url)).toBe(true);
    expect(server.stdout).toMatch(/"signal":"SIGTERM"/);

    // The tickets created while draining were committed before the store closed.
    const store = fresh.open();
    try {
      const rows = await store.db.selectFrom('tickets').select('title').where('title', 'like', 'in flight %').execute();
      expect(rows.map((r) => r.title).sort()).toEqual(['in flight 0', 'in flight 1', 'in flight 2', 'in flight 3']);
    } finally {
      await store.close();
    }
  });

  it('DROVER_ADMIN_TOKEN: that token is the admin token, and no admin-token file is written', async () => {
    const fresh = await createProcessTestDatabase(kind, FIRST_START);
    try {
      const token = 'env-admin-token-3f9c1d7e5b2a4c6d8e0f';
      const server = await startServerProcess({ dataDir: fresh.dataDir, env: { ...fresh.env, DROVER_ADMIN_TOKEN: token } });
      const orgs = await call(server.url, 'GET', '/api/v1/admin/orgs', { bearer: token });
      expect(orgs.status).toBe(200);
      expect((orgs.body as { orgs: Array<{ slug: string }> }).orgs.map((o) => o.slug)).toEqual(['default']);
      expect((await call(server.url, 'GET', '/api/v1/admin/orgs', { bearer: 'not-the-token' })).status).toBe(401);
      expect((await call(server.url, 'GET', '/api/v1/admin/orgs')).status).toBe(401);

      expect(fs.existsSync(path.join(fresh.dataDir, 'admin-token'))).toBe(false);
      expect(server.stdout).not.toMatch(/admin token/i);
      expect(server.stdout).not.toContain(token);
      // The bootstrap key is still created on this empty database.
      expect(readSecret(fresh.dataDir, 'bootstrap-api-key')).toMatch(API_KEY);
      expect(await server.stop()).toBe(0);
      expect(server.stdout).not.toContain(token);
    } finally {
      await fresh.cleanup();
    }
  });
});

describe('drover serve: shutdown with keep-alive clients', () => {
  // Was a bug (fixed): src/serve/server.ts (close) — a request in flight at SIGTERM on a keep-alive connection
  // (fetch/undici, browsers, Node's default agent, most HTTP client libraries) is answered with
  // `Connection: keep-alive` / `Keep-Alive: timeout=72`; once answered, that connection is idle,
  // and `app.close()` (Fastify's forceCloseConnections 'idle' only closes connections idle at the
  // moment close starts) waits for it until Fastify's 72 s keepAliveTimeout. Measured: exit 0 only
  // ~73 s after SIGTERM, i.e. SIGKILLed by any orchestrator first (Kubernetes 30 s, docker stop 10 s).
  // Fix: in startServer, before listen, `let draining = false; app.addHook('onSend', async (_req, reply)
  // => { if (draining) reply.header('connection', 'close'); });` and set `draining = true` first thing
  // in close(); as a backstop, during close call `app.server.closeIdleConnections()` every ~100 ms and
  // `closeAllConnections()` after a deadline (e.g. 25 s).
  it('a keep-alive connection whose request was in flight at SIGTERM does not hold the exit back', async () => {
    const database = await createProcessTestDatabase('sqlite', FIRST_START);
    onTestFinished(() => database.cleanup());
    const server = await startServerProcess({ dataDir: database.dataDir, env: database.env });
    const key = readSecret(database.dataDir, 'bootstrap-api-key');
    const agent = new http.Agent({ keepAlive: true });
    onTestFinished(() => agent.destroy());
    const slow = openRequest(agent, server.url, 'POST', TICKETS, { 'x-api-key': key }, JSON.stringify({ type: 'task', title: 'kept alive' }), 5);
    await slow.sent;
    expect((await call(server.url, 'GET', '/healthz')).status).toBe(200); // the server has read it
    server.child.kill('SIGTERM');
    await eventually(() => refusesConnections(server.url));
    slow.finish();
    expect((await slow.response).status).toBe(201);
    // The process should be gone right after its last response; it lingers ~72 s instead.
    expect(await server.waitForExit(3_000)).toBe(0);
  });
});

/** Processes still running as a runner on `dataDir`'s local runner work dir (read from /proc). */
function localRunnerProcesses(dataDir: string): number[] {
  const workDir = path.join(dataDir, 'runner');
  return fs.readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      const argv = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      return argv.includes('runner') && argv.includes(workDir) ? [Number(entry)] : [];
    } catch {
      return []; // gone meanwhile
    }
  });
}

describe('drover serve with its default local runner (SQLite)', () => {
  it('SIGTERM once the local runner is connected: exits 0', async () => {
    const database = await createProcessTestDatabase('sqlite', FIRST_START);
    onTestFinished(() => database.cleanup());
    const server = await startServerProcess({ dataDir: database.dataDir, env: database.env, localRunner: true });
    await server.localRunnerConnected(20_000);
    expect((await call(server.url, 'GET', '/readyz')).status).toBe(200);
    const [runner] = localRunnerProcesses(database.dataDir);
    expect(runner).toBeDefined();
    // A larger libuv thread pool for a burst of pods' file work (docs/runners.md "What a pod start costs").
    const environ = fs.readFileSync(`/proc/${runner}/environ`, 'utf8').split('\0');
    expect(environ).toContain(`UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? '16'}`);
    expect(localRunnerProcesses(database.dataDir)).toHaveLength(1);
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(localRunnerProcesses(database.dataDir)).toEqual([]);
  });

  // Was a bug (fixed): a local runner slower to start than the server's wait (its self-tests and
  // each agent's --version on a loaded machine took 31 s in a CI run) connected without the server
  // ever saying so: "Local runner N connected" was printed only when it came within the wait.
  it('a local runner that connects after the start stopped waiting is still announced, after a warning', async () => {
    const database = await createProcessTestDatabase('sqlite', FIRST_START);
    onTestFinished(() => database.cleanup());
    const env = { ...database.env, DROVER_LOCAL_RUNNER_START_WAIT_SECONDS: '0' };
    const server = await startServerProcess({ dataDir: database.dataDir, env, localRunner: true });
    const runnerId = await server.localRunnerConnected(60_000);
    expect(runnerId).toBeGreaterThan(0);
    const waited = server.logRecords().find((record) => String(record.msg).includes('has not connected within 0 s'));
    expect(waited?.level).toBe(40);
    expect(server.stdout.indexOf('has not connected within')).toBeLessThan(server.stdout.search(/^Local runner \d+ connected/m));
    expect((await call(server.url, 'GET', '/readyz')).status).toBe(200);
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(localRunnerProcesses(database.dataDir)).toEqual([]);
  });

  // Was a bug (fixed): a signal during the runner's start (before its handlers existed) killed it
  // half made, leaving the control groups it makes first. An agent whose --version takes 3 s holds
  // the start open; the server is stopped once the groups exist.
  it('SIGTERM while the local runner is still starting: it finishes its start, then stops and removes its control groups', async () => {
    const database = await createProcessTestDatabase('sqlite', FIRST_START);
    onTestFinished(() => database.cleanup());
    const bin = path.join(database.dataDir, 'slow-agent-bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'claude'), '#!/bin/sh\nsleep 3\necho 9.9.9\n', { mode: 0o755 });
    const env = { ...database.env, PATH: `${bin}:${process.env.PATH ?? ''}` };
    const server = await startServerProcess({ dataDir: database.dataDir, env, localRunner: true });
    const workDir = path.join(database.dataDir, 'runner');
    await waitFor(() => fs.existsSync(workDir) && runnerCgroupDirs(fs.realpathSync(workDir)).length > 0, {
      timeout: 30_000,
      interval: 20,
      what: "the local runner's control groups",
    });
    expect(runnerCgroupDirs(fs.realpathSync(workDir)).length).toBeGreaterThan(0);
    expect(server.stdout).not.toMatch(/^Local runner \d+ connected/m);
    expect(await server.stop('SIGTERM', 60_000)).toBe(0);
    expect(localRunnerProcesses(database.dataDir)).toEqual([]);
    expect(runnerCgroupDirs(fs.realpathSync(workDir))).toEqual([]);
    expect(fs.readdirSync(workDir)).not.toContain('agent-versions');
  });

  // Was a bug (fixed): src/serve/server.ts announces "Drover listening on …" and then awaits
  // startLocalRunner (register + connect, up to 10 s) before it installs its SIGTERM/SIGINT
  // handlers (src/serve/server.ts, `process.once(...)`). A signal in that window gets Node's
  // default action: the process dies by the signal (exit 143 / no exit code), without closing the
  // HTTP server, the runner or the store. Reproduced every time by signalling right after the line.
  // Fix: install the signal handlers before `app.listen` (let `close()` cope with a runner that is
  // not started yet), or announce "listening" only once the local runner is up.
  it('SIGTERM right after "Drover listening on" (local runner still connecting): exits 0', async () => {
    const database = await createProcessTestDatabase('sqlite', FIRST_START);
    onTestFinished(() => database.cleanup());
    const server = await startServerProcess({ dataDir: database.dataDir, env: database.env, localRunner: true });
    // The runner finishes its start before it stops (seconds; more on a loaded machine).
    expect(await server.stop('SIGTERM', 60_000)).toBe(0);
    // The server waited for its runner, which was still starting: none is left running on its own,
    // and the control groups it had made for its pods were removed (a signal during its start used
    // to kill it half made, leaving them).
    expect(localRunnerProcesses(database.dataDir)).toEqual([]);
    const workDir = path.join(database.dataDir, 'runner');
    if (fs.existsSync(workDir)) expect(runnerCgroupDirs(fs.realpathSync(workDir))).toEqual([]);
  });
});

describe('drover serve: invalid configuration', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-badcfg-'));
  });
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  const cases = [
    { name: '--port abc', args: ['--port', 'abc'], env: {}, message: /port must be an integer >= 0, got "abc"/ },
    { name: 'DATABASE_URL=mysql://x', args: ['--port', '0'], env: { DATABASE_URL: 'mysql://x' }, message: /DATABASE_URL must be a postgres:\/\// },
  ];

  it(`${cases.map((c) => c.name).join(', ')}: exit non-zero with a clear message on stderr, without listening`, async () => {
    const results = await Promise.all(
      cases.map(({ args, env }) => runDrover(['serve', '--host', '127.0.0.1', '--data-dir', dataDir, ...args], { env })),
    );
    for (const [i, result] of results.entries()) {
      const { name, message } = cases[i];
      expect(result.code, name).not.toBe(0);
      expect(result.code, name).not.toBeNull();
      expect(result.stderr, name).toMatch(message);
      expect(result.stdout, name).not.toMatch(/Drover listening/);
    }
    // Nothing was set up on the way out.
    expect(fs.existsSync(path.join(dataDir, 'admin-token'))).toBe(false);
    expect(fs.existsSync(path.join(dataDir, 'drover.sqlite'))).toBe(false);
  });
});
