/**
 * `drover serve` as a real process, operated (docs/decisions.md): the request timeout
 * (DROVER_REQUEST_TIMEOUT_MS) closing slow-body sockets on the unauthenticated register route with
 * 408; file modes of the data directory (created 0700/0600, and tightened when an earlier version
 * left them open); a clean SIGINT with a real external runner connected (no error logged, the
 * runner recorded offline); logs readable in a terminal and redacted in both formats; /metrics.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { parsePrometheusText } from '../helpers/prometheus.ts';
import { rawExchange } from '../helpers/raw-http.ts';
import { runnerPath, startRunnerProcess, tempDir, waitFor } from '../helpers/runner-process.ts';
import { DROVER_BIN, REPO_ROOT, childEnv, createProcessTestDatabase, http, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

const ADMIN_TOKEN = 'ops-admin-token-0123456789abcdef';
const mode = (file: string) => fs.statSync(file).mode & 0o777;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function database(kind: TestDatabase['kind']): Promise<TestDatabase> {
  const db = await createProcessTestDatabase(kind);
  cleanups.push(() => db.cleanup());
  return db;
}

/** Log records at warn level or above, and anything on stderr: a clean run has none. */
function problems(server: ServerProcess): string[] {
  const records = server.logRecords().filter((r) => Number(r.level) >= 40);
  return [...records.map((r) => JSON.stringify(r)), ...(server.stderr.trim() ? [server.stderr] : [])];
}

describe.each(DATABASES)('drover serve, operated (%s)', (kind) => {
  it('DROVER_REQUEST_TIMEOUT_MS: 20 sockets trickling a body to POST /api/v1/runner/register get 408 and are closed', async () => {
    const db = await database(kind);
    const server = await startServerProcess({ dataDir: db.dataDir, env: { ...db.env, DROVER_REQUEST_TIMEOUT_MS: '1000' } });
    const port = Number(new URL(server.url).port);
    const body = JSON.stringify({ token: 'drvreg_x', name: 'slow', labels: [], max_pods: 1, version: '1', os: 'linux', arch: 'x64' });
    const sockets = Array.from({ length: 20 }, () =>
      rawExchange(port, `POST /api/v1/runner/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n{`),
    );
    const trickle = setInterval(() => sockets.forEach((s) => s.write(' ')), 200);
    cleanups.push(() => {
      clearInterval(trickle);
      sockets.forEach((s) => s.destroy());
    });
    const answers = await Promise.all(sockets.map((s) => s.response));
    const closedAfter = await Promise.all(sockets.map((s) => s.closed));
    clearInterval(trickle);
    for (const answer of answers) {
      expect(answer.status).toBe(408);
      expect(answer.json).toMatchObject({ code: 'REQUEST_TIMEOUT', request_id: expect.stringMatching(/^req_/) });
    }
    // Closed by the server after the timeout, not kept for as long as the client trickles.
    for (const ms of closedAfter) {
      expect(ms).toBeGreaterThanOrEqual(1000);
      expect(ms).toBeLessThan(15_000);
    }
    expect((await http(server.url, 'GET', '/healthz')).status).toBe(200);
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(problems(server)).toEqual([]);
  });

  it('a fresh data dir is 0700 and its secret files 0600', async () => {
    const db = await database(kind);
    fs.rmSync(db.dataDir, { recursive: true, force: true });
    const server = await startServerProcess({ dataDir: db.dataDir, env: db.env });
    expect((await http(server.url, 'GET', '/healthz')).status).toBe(200);
    expect(mode(db.dataDir)).toBe(0o700);
    const files = ['admin-token', 'secret-key', 'bootstrap-api-key', ...(kind === 'sqlite' ? ['drover.sqlite', 'drover.sqlite-wal', 'drover.sqlite-shm'] : [])];
    for (const name of files) expect(mode(path.join(db.dataDir, name)), name).toBe(0o600);
    expect(await server.stop('SIGTERM')).toBe(0);
  });

  it('files an earlier version left readable (0755 dir, 0644 files) are tightened at start', async () => {
    const db = await database(kind);
    const first = await startServerProcess({ dataDir: db.dataDir, env: db.env });
    expect(await first.stop('SIGTERM')).toBe(0);
    fs.chmodSync(db.dataDir, 0o755);
    const present = fs.readdirSync(db.dataDir).filter((name) => ['admin-token', 'secret-key', 'bootstrap-api-key', 'drover.sqlite', 'drover.sqlite-wal', 'drover.sqlite-shm'].includes(name));
    expect(present).toEqual(expect.arrayContaining(['admin-token', 'secret-key', 'bootstrap-api-key']));
    for (const name of present) fs.chmodSync(path.join(db.dataDir, name), 0o644);
    const second = await startServerProcess({ dataDir: db.dataDir, env: db.env });
    expect(mode(db.dataDir)).toBe(0o700);
    for (const name of present) expect(mode(path.join(db.dataDir, name)), name).toBe(0o600);
    expect(await second.stop('SIGTERM')).toBe(0);
  });

  it('SIGINT with an external runner connected: exits 0, logs no error, and records the runner offline', async () => {
    const db = await database(kind);
    const scratch = tempDir('sigint');
    cleanups.push(() => fs.rmSync(scratch, { recursive: true, force: true }));
    const server = await startServerProcess({ dataDir: db.dataDir, env: { ...db.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN } });
    const key = fs.readFileSync(path.join(db.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    const token = await http(server.url, 'POST', '/api/v1/admin/orgs/default/runner-tokens', { bearer: ADMIN_TOKEN, body: {} });
    expect(token.status, token.text).toBe(201);
    const runner = await startRunnerProcess({
      server: server.url,
      token: (token.body as { token: string }).token,
      workDir: path.join(scratch, 'runner'),
      name: 'external',
      env: { PATH: runnerPath(), HOME: scratch, LANG: 'C.UTF-8' },
    });
    const status = async () =>
      ((await http(server.url, 'GET', `/api/v1/ext/orgs/default/runners/${runner.runnerId}`, { key })).body as { runner: { status: string } }).runner.status;
    await waitFor(async () => (await status()) === 'online', { what: 'the runner online' });
    // A pod keeps the link busy (start, output, exit) around the signal.
    const pod = await http(server.url, 'POST', '/api/v1/ext/orgs/default/pods', { key, body: { agent_slug: 'shell', agentfile_layer: 'PROMPT "echo hi; sleep 0.2"' } });
    expect(pod.status, pod.text).toBe(201);

    expect(await server.stop('SIGINT'), server.stdout.slice(-3000)).toBe(0);
    expect(problems(server)).toEqual([]);
    expect(server.stdout).not.toMatch(/driver has already been destroyed/);
    expect(server.logRecords().some((r) => r.msg === 'shutting down')).toBe(true);

    const store = db.open();
    try {
      const row = await store.db.selectFrom('runners').select(['status', 'connection_id']).where('id', '=', runner.runnerId).executeTakeFirstOrThrow();
      expect(row).toEqual({ status: 'offline', connection_id: null });
    } finally {
      await store.close();
    }
    await runner.stop();
  });
});

describe('logs and metrics of a real server (sqlite)', () => {
  const SECRETS = ['S3CRETVALUE1', 'S3CRETVALUE2', 'S3CRETVALUE3', 'S3CRETVALUE4', 'S3CRETVALUE5'];
  const LEAKY_QUERY = `access_token%20=${SECRETS[0]}&access_token%00=${SECRETS[1]}&ACCESS_TOKEN=${SECRETS[2]}&access%255Ftoken=${SECRETS[3]}&x=drv_${SECRETS[4]}`;

  it('JSON lines when stdout is not a terminal, with odd spellings of access_token redacted', async () => {
    const db = await database('sqlite');
    const server = await startServerProcess({ dataDir: db.dataDir, env: db.env });
    await http(server.url, 'GET', `/api/v1/ext/orgs/default/repositories/1/branches?${LEAKY_QUERY}`);
    await waitFor(() => server.logRecords().some((r) => String(r.url).includes('/branches')), { what: 'the request log line' });
    const line = server.logRecords().find((r) => String(r.url).includes('/branches'))!;
    expect(line).toMatchObject({ msg: 'request', level: 30 });
    for (const secret of SECRETS) expect(server.stdout).not.toContain(secret);
    expect(String(line.url)).toContain('redacted');
    expect(await server.stop('SIGTERM')).toBe(0);
  });

  it('DROVER_LOG_FORMAT=pretty: lines for people, the same redaction', async () => {
    const db = await database('sqlite');
    const server = await startServerProcess({ dataDir: db.dataDir, env: { ...db.env, DROVER_LOG_FORMAT: 'pretty' } });
    await http(server.url, 'GET', `/api/v1/ext/orgs/default/repositories/1/branches?${LEAKY_QUERY}`);
    await waitFor(() => /INFO.*request/.test(server.stdout), { what: 'a pretty request line' });
    expect(server.logRecords()).toEqual([]);
    for (const secret of SECRETS) expect(server.stdout).not.toContain(secret);
    expect(await server.stop('SIGTERM')).toBe(0);
  });

  it.skipIf(!fs.existsSync('/usr/bin/script'))('stdout on a terminal (a pseudo-terminal from script(1)): pretty by default', async () => {
    const db = await database('sqlite');
    const command = [process.execPath, DROVER_BIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', db.dataDir, '--no-local-runner']
      .map((a) => `'${a}'`)
      .join(' ');
    const child = spawn('/usr/bin/script', ['-q', '-e', '-f', '-c', command, '/dev/null'], { cwd: REPO_ROOT, env: childEnv(db.env), detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    cleanups.push(async () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone
      }
      await exited;
    });
    const url = await waitFor(() => /Drover listening on (http:\/\/\S+)/.exec(out)?.[1], { what: 'the server on a pty', timeout: 30_000 });
    await http(url, 'GET', `/api/v1/ext/orgs/default/tickets?${LEAKY_QUERY}`);
    await waitFor(() => /request/.test(out.split('Drover listening on')[1] ?? ''), { what: 'the request line' });
    const lines = out.split(/\r?\n/).filter((l) => /request/.test(l));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.trim().startsWith('{')).toBe(false);
    expect(out).toMatch(/INFO/);
    for (const secret of SECRETS) expect(out).not.toContain(secret);
  });

  it('GET /metrics needs the admin token and carries process metrics', async () => {
    const db = await database('sqlite');
    const server = await startServerProcess({ dataDir: db.dataDir, env: { ...db.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN } });
    const denied = await http(server.url, 'GET', '/metrics');
    expect(denied.status).toBe(401);
    expect(denied.body).toMatchObject({ code: 'AUTH_REQUIRED' });
    const response = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(response.status).toBe(200);
    const metrics = parsePrometheusText(await response.text());
    expect(metrics.value('process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(metrics.types.get('drover_http_requests_total')).toBe('counter');
    expect(await server.stop('SIGTERM')).toBe(0);
  });
});
