/**
 * Pods: (a) start latency — POST /pods → `running` for 200 `shell` pods running `true` on the
 * local runner, one after another, from the server's own timestamps (`started_at − created_at`:
 * `created_at` is taken in the create transaction, `started_at` when the runner reports the agent
 * process started); (b) sustained throughput with 4 external runners of 8 slots, 32 pods in flight.
 *
 * Run alone: `npx tsx bench/pods.ts` (BENCH_PODS=200, BENCH_THROUGHPUT_SEC=20).
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import SQLite from 'better-sqlite3';
import { ROOT, droverEnv, installCleanupHandlers, makeTempDir, removeTempDir, startProcess, type ServerProcess } from './proc.ts';

export interface BenchRow {
  name: string;
  value: string;
  target?: string;
  pass?: boolean;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function api(server: ServerProcess, key: string, method: string, pathname: string, body?: unknown) {
  const response = await fetch(`${server.url}/api/v1/ext/orgs/default${pathname}`, {
    method,
    headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`${method} ${pathname}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

async function waitEnded(server: ServerProcess, key: string, podKey: string, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { pod } = (await api(server, key, 'GET', `/pods/${podKey}`)) as { pod: { status: string } };
    if (['completed', 'failed', 'terminated'].includes(pod.status)) return pod.status;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`pod ${podKey} did not end in time`);
}

/** Waits for the listening line (the URL) and, when asked, for the local runner's line too. */
async function startServer(dataDir: string, logDir: string, env: NodeJS.ProcessEnv, args: string[], withRunner: boolean): Promise<ServerProcess> {
  const server = await startProcess({
    name: 'drover',
    args: [path.join(ROOT, 'bin/drover.mjs'), 'serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir, ...args],
    env,
    logDir,
    ready: /Drover listening on (http:\/\/\S+)/,
  });
  if (withRunner) {
    const deadline = Date.now() + 30_000;
    while (!/Local runner \d+ connected/.test(fs.readFileSync(server.stdoutFile, 'utf8'))) {
      if (Date.now() > deadline) throw new Error('the local runner did not connect');
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return server;
}

async function startLatency(pods: number): Promise<BenchRow[]> {
  const dir = makeTempDir('pods-latency');
  const dataDir = path.join(dir, 'data');
  const env = { ...droverEnv(), DROVER_LOCAL_RUNNER_MAX_PODS: '8' };
  const server = await startServer(dataDir, dir, env, [], true);
  try {
    const key = fs.readFileSync(path.join(dataDir, 'bootstrap-api-key'), 'utf8').trim();
    for (let i = 0; i < 10; i++) {
      const { pod } = (await api(server, key, 'POST', '/pods', { agent_slug: 'shell', agentfile_layer: 'PROMPT "true"' })) as { pod: { pod_key: string } };
      await waitEnded(server, key, pod.pod_key);
    }
    const keys: string[] = [];
    for (let i = 0; i < pods; i++) {
      const { pod } = (await api(server, key, 'POST', '/pods', { agent_slug: 'shell', agentfile_layer: 'PROMPT "true"' })) as { pod: { pod_key: string } };
      keys.push(pod.pod_key);
      await waitEnded(server, key, pod.pod_key);
    }
    const db = new SQLite(path.join(dataDir, 'drover.sqlite'), { readonly: true });
    const rows = db.prepare(`select key, status, created_at, started_at from pods where key in (${keys.map(() => '?').join(',')})`).all(...keys) as {
      status: string;
      created_at: number;
      started_at: number | null;
    }[];
    db.close();
    const failed = rows.filter((r) => r.status !== 'completed' || r.started_at === null).length;
    const latencies = rows.filter((r) => r.started_at !== null).map((r) => r.started_at! - r.created_at).sort((a, b) => a - b);
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    return [
      { name: `pod start latency p50 (${latencies.length} shell pods, local runner)`, value: `${p50} ms`, target: '< 150 ms', pass: p50 < 150 },
      { name: 'pod start latency p99', value: `${p99} ms`, target: '< 500 ms', pass: p99 < 500 },
      { name: 'pods not completed', value: String(failed), target: '0', pass: failed === 0 },
    ];
  } finally {
    await server.stop();
    removeTempDir(dir);
  }
}

async function throughput(seconds: number): Promise<BenchRow[]> {
  const dir = makeTempDir('pods-throughput');
  const dataDir = path.join(dir, 'data');
  const server = await startServer(dataDir, dir, droverEnv(), ['--no-local-runner'], false);
  const runners: ServerProcess[] = [];
  try {
    const key = fs.readFileSync(path.join(dataDir, 'bootstrap-api-key'), 'utf8').trim();
    const admin = fs.readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
    const tokenResponse = await fetch(`${server.url}/api/v1/admin/orgs/default/runner-tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: '{}',
    });
    const { token } = (await tokenResponse.json()) as { token: string };
    for (let i = 0; i < 4; i++) {
      const workDir = path.join(dir, `runner-${i}`);
      fs.mkdirSync(workDir, { recursive: true });
      runners.push(
        await startProcess({
          name: `runner-${i}`,
          args: [path.join(ROOT, 'bin/drover.mjs'), 'runner', '--server', server.url, '--token', token, '--name', `bench-${i}`, '--max-pods', '8', '--work-dir', workDir],
          env: { PATH: process.env.PATH, HOME: process.env.HOME },
          logDir: dir,
          ready: /()/, // the runner logs to stderr; readiness is checked through /runners/available
        }),
      );
    }
    const deadline = Date.now() + 30_000;
    while (((await api(server, key, 'GET', '/runners/available')) as { runners: unknown[] }).runners.length < 4) {
      if (Date.now() > deadline) throw new Error('runners did not come online');
      await new Promise((r) => setTimeout(r, 100));
    }
    let completed = 0;
    let failed = 0;
    const end = Date.now() + seconds * 1000;
    const worker = async () => {
      while (Date.now() < end) {
        try {
          const { pod } = (await api(server, key, 'POST', '/pods', { agent_slug: 'shell', agentfile_layer: 'PROMPT "true"' })) as { pod: { pod_key: string } };
          const status = await waitEnded(server, key, pod.pod_key);
          if (status === 'completed') completed++;
          else failed++;
        } catch {
          failed++;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    };
    const started = Date.now();
    await Promise.all(Array.from({ length: 32 }, worker));
    const elapsed = (Date.now() - started) / 1000;
    return [
      { name: `sustained throughput, 4 runners × 8 slots, 32 pods in flight, ${Math.round(elapsed)} s`, value: `${(completed / elapsed).toFixed(1)} pods/s completed` },
      { name: 'pods failed or refused during the run', value: String(failed) },
    ];
  } finally {
    for (const runner of runners) await runner.stop();
    await server.stop();
    removeTempDir(dir);
  }
}

export async function run(): Promise<{ rows: BenchRow[] }> {
  const rows = [
    ...(await startLatency(Number(process.env.BENCH_PODS ?? 200))),
    ...(await throughput(Number(process.env.BENCH_THROUGHPUT_SEC ?? 20))),
  ];
  return { rows };
}

export function markdownRows(rows: BenchRow[]): string {
  const lines = ['| Measure | Value | Target | Result |', '|---|---|---|---|'];
  for (const r of rows) lines.push(`| ${r.name} | ${r.value} | ${r.target ?? ''} | ${r.pass === undefined ? '' : r.pass ? 'PASS' : 'FAIL'} |`);
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  installCleanupHandlers();
  run().then(
    ({ rows }) => console.log(`\n== Pods ==\n\n${markdownRows(rows)}\n`),
    (error) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
