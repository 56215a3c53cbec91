/**
 * `npm run bench`: load-tests the ticket API of a real `drover serve` child process on SQLite.
 *
 * Phase 1: 10,000 seeded tickets; GET /tickets?limit=20, GET /tickets/:slug (rotating over 1,000
 * slugs), GET /tickets/board (gzipped, as the dashboard reads it, then as plain JSON, as the CLI
 * does), POST /tickets (run last, so the reads see exactly the seeded data),
 * and a bare Fastify child serving the same 20-ticket JSON from memory, driven the same way, in
 * turn with the Drover list (bare, list, bare, list, bare, each after its warm-up); the ratio is
 * the mean of the list runs over the mean of the bare runs. The same for POST: the bare child
 * answers the same POST with a ticket made in memory (bare-post, post, bare-post, post, bare-post).
 * Phase 2: 100,000 seeded tickets (fresh data dir); GET /tickets?limit=20 and GET /tickets/board (both ways).
 *
 * The server runs with the rate limit off and at its default `info` log level, its stdout going to
 * a file, so per-request logging is part of what is measured.
 *
 * Environment:
 *   BENCH_DURATION=10       seconds per measured run          BENCH_WARMUP=2    warm-up seconds (discarded)
 *   BENCH_CONNECTIONS=50    autocannon connections            BENCH_LARGE=0     skip phase 2
 *   BENCH_LARGE_TICKETS     tickets of phase 2 (100000)       BENCH_ONLY=list,get,board,board-plain,post,bare,bare-post  subset
 *   BENCH_CPU_PROF=1        run the server with --cpu-prof (profiles in bench/results/profiles; figures then
 *                           include profiler overhead and are marked as such)
 *   BENCH_KEEP=1            keep the temp data dirs and server logs     BENCH_STRICT=1  exit 1 when a target fails
 *   BENCH_NODE_ARGS         extra Node.js flags for the Drover server, space-separated (e.g. `--trace-gc`)
 *   BENCH_QUIET_WAIT=120    before each run, wait up to this many seconds for other processes to use < 25% of a core
 *   BENCH_RETRIES=2         repeat a run disturbed by other processes (>= 25% of a core) up to this many times;
 *                           the least disturbed attempt is reported (chosen on disturbance only), all are in the JSON
 * Exit status: 1 when any request failed (non-2xx, socket error, timeout) or the run broke; 0 otherwise.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { measure, type MeasureOptions, type Scenario, type ScenarioResult } from './measure.ts';
import {
  ROOT,
  installCleanupHandlers,
  makeTempDir,
  readMemory,
  keepTempDir,
  removeTempDir,
  startBare,
  startDrover,
  type ServerProcess,
} from './proc.ts';
import { disturbancesOf, evaluateTargets, markdown, problemsOf, scenarioLine, type BenchResults, type PhaseResult } from './report.ts';
import { prng, seedTickets } from './seed.ts';
import { reportFigures } from './summary.ts';

function envNumber(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) throw new Error(`${name} must be a number >= ${min}, got "${raw}"`);
  return value;
}

const log = (line = '') => process.stdout.write(line + '\n');

const load: MeasureOptions = {
  connections: envNumber('BENCH_CONNECTIONS', 50, 1),
  durationSec: envNumber('BENCH_DURATION', 10, 1),
  warmupSec: envNumber('BENCH_WARMUP', 2, 0),
  retries: envNumber('BENCH_RETRIES', 2, 0),
  disturbedPct: 25,
  quietWaitSec: envNumber('BENCH_QUIET_WAIT', 120, 0),
  log,
};
const SMALL_TICKETS = 10_000;
const LARGE_TICKETS = envNumber('BENCH_LARGE_TICKETS', 100_000, 1);
const runLarge = process.env.BENCH_LARGE !== '0';
const only = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map((s) => s.trim())) : null;
const wanted = (key: string) => only === null || only.has(key);
const cpuProfile = process.env.BENCH_CPU_PROF === '1';
const keep = process.env.BENCH_KEEP === '1';
/** Extra Node.js flags for the Drover server (V8 heap settings, `--trace-gc`), space-separated. */
const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
const RESULTS_DIR = path.join(ROOT, 'bench/results');
const ORG = '/api/v1/ext/orgs/default';

function gitCommit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() !== '';
    return dirty ? `${head}+uncommitted` : head;
  } catch {
    return 'unknown';
  }
}

async function request(server: ServerProcess, method: string, urlPath: string, headers: Record<string, string>, body?: string) {
  const response = await fetch(server.url + urlPath, { method, headers, body });
  return { status: response.status, text: await response.text(), headers: response.headers };
}

async function expectStatus(server: ServerProcess, method: string, urlPath: string, headers: Record<string, string>, status: number, body?: string) {
  const response = await request(server, method, urlPath, headers, body);
  if (response.status !== status) {
    throw new Error(`pre-check ${method} ${urlPath} answered ${response.status}, expected ${status}: ${response.text.slice(0, 500)}`);
  }
  return response.text;
}

/** Lines and bytes of the server's stdout (its pino log), read in chunks. */
function logStats(file: string): { bytes: number; lines: number } {
  const fd = fs.openSync(file, 'r');
  const buffer = Buffer.alloc(1 << 20);
  let bytes = 0;
  let lines = 0;
  try {
    for (;;) {
      const n = fs.readSync(fd, buffer, 0, buffer.length, null);
      if (n === 0) break;
      bytes += n;
      for (let i = 0; i < n; i++) if (buffer[i] === 10) lines++;
    }
  } finally {
    fs.closeSync(fd);
  }
  return { bytes, lines };
}

/** The server's V8 heap by space and its external memory, from its own GET /metrics (MB). */
async function heapSpaces(server: ServerProcess, dataDir: string): Promise<string> {
  const token = fs.readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
  const { status, text } = await request(server, 'GET', '/metrics', { authorization: `Bearer ${token}` });
  if (status !== 200) return `GET /metrics answered ${status}`;
  const mb = (pattern: RegExp) => [...text.matchAll(pattern)].map((m) => `${m[1]} ${(Number(m[2]) / 2 ** 20).toFixed(1)}`);
  return `V8 heap spaces (committed MB): ${mb(/^nodejs_heap_space_size_total_bytes\{space="(\w+)"\} (\S+)$/gm).join(', ')}; ${mb(/^nodejs_(external)_memory_bytes (\S+)$/gm).join(', ')}`;
}

/**
 * The baseline: a bare Fastify child answering the list route with `listJson` from memory
 * (`bare`), or creating a ticket in memory from the same POST as Drover's (`bare-post`).
 */
async function runBare(dataDir: string, listJson: string, scenario: Scenario, name: 'bare' | 'bare-post'): Promise<ScenarioResult> {
  const jsonFile = path.join(dataDir, 'list.json');
  fs.writeFileSync(jsonFile, listJson);
  const bareServer = await startBare(jsonFile, dataDir);
  try {
    if (name === 'bare') {
      const same = await expectStatus(bareServer, 'GET', scenario.path, scenario.headers, 200);
      if (JSON.stringify(JSON.parse(same)) !== JSON.stringify(JSON.parse(listJson))) throw new Error('the bare server answers a different body');
    } else await expectStatus(bareServer, 'POST', scenario.path, scenario.headers, 201, scenario.body);
    const result = await measure(bareServer, { ...scenario, name }, load);
    log(scenarioLine(result));
    return result;
  } finally {
    await bareServer.stop();
  }
}

interface PhaseSpec {
  tickets: number;
  scenarios: string[];
}

async function runPhase(spec: PhaseSpec): Promise<{ phase: PhaseResult; bares: ScenarioResult[] }> {
  const name = `${spec.tickets.toLocaleString('en-US')} tickets`;
  log(`\n== Phase: ${name} ==`);
  const dataDir = makeTempDir(`${spec.tickets}`);
  try {
    // First start on the empty dir: the server migrates and bootstraps org `default` with a key.
    const init = await startDrover(dataDir, dataDir, 'drover-init');
    const key = fs.readFileSync(path.join(dataDir, 'bootstrap-api-key'), 'utf8').trim();
    await init.stop();

    log(`seeding ${spec.tickets.toLocaleString('en-US')} tickets through the store layer (not timed) …`);
    const seeded = await seedTickets(dataDir, spec.tickets, {
      onProgress: (done) => log(`  ${done.toLocaleString('en-US')} / ${spec.tickets.toLocaleString('en-US')}`),
    });
    log(`seeded in ${seeded.seconds.toFixed(1)} s`);

    const profArgs = [...(cpuProfile ? ['--cpu-prof', `--cpu-prof-dir=${path.join(RESULTS_DIR, 'profiles')}`] : []), ...nodeArgs];
    const server = await startDrover(dataDir, dataDir, 'drover', profArgs);
    log(`server pid ${server.pid} at ${server.url} (log level info, stdout → ${server.stdoutFile})`);
    const headers = { 'x-api-key': key };
    const listPath = `${ORG}/tickets?limit=20`;
    const boardPath = `${ORG}/tickets/board`;
    const rnd = prng(7);
    const slugPaths = Array.from({ length: 1000 }, () => `${ORG}/tickets/${seeded.slugs[Math.floor(rnd() * seeded.slugs.length)]}`);
    const postBody = JSON.stringify({
      type: 'task',
      title: 'Ticket created by the load test',
      description: 'Created by npm run bench to measure POST /tickets throughput.',
      priority: 'high',
      labels: ['bench', 'load'],
    });
    const scenarios: Record<string, Scenario> = {
      list: { name: 'list', method: 'GET', path: listPath, headers },
      get: { name: 'get', method: 'GET', path: `${ORG}/tickets/:slug`, paths: slugPaths, headers },
      // As the dashboard reads it: a browser takes gzip (docs/api.md "Compression").
      board: { name: 'board', method: 'GET', path: boardPath, headers: { ...headers, 'accept-encoding': 'gzip' }, note: 'gzip, as the dashboard reads it' },
      'board-plain': { name: 'board-plain', method: 'GET', path: boardPath, headers, note: 'plain JSON, as the CLI reads it' },
      post: { name: 'post', method: 'POST', path: `${ORG}/tickets`, headers: { ...headers, 'content-type': 'application/json' }, body: postBody },
    };

    const results: ScenarioResult[] = [];
    const bares: ScenarioResult[] = [];
    let serverPeakRssMb = 0;
    try {
      // Pre-checks: every request of the run must succeed, and the list must see the seeded data.
      const listJson = await expectStatus(server, 'GET', listPath, headers, 200);
      const total = (JSON.parse(listJson) as { total: number }).total;
      if (total !== spec.tickets) throw new Error(`GET /tickets reports total ${total}, expected ${spec.tickets}`);
      await expectStatus(server, 'GET', slugPaths[0], headers, 200);
      await expectStatus(server, 'GET', boardPath, headers, 200);
      // The dashboard's board row must measure what it says: the server answers it gzipped.
      const gzipped = await request(server, 'GET', boardPath, scenarios.board.headers);
      if (gzipped.headers.get('content-encoding') !== 'gzip') throw new Error(`pre-check: GET ${boardPath} with accept-encoding gzip answered ${gzipped.status} without content-encoding gzip`);

      for (const key of spec.scenarios) {
        if (!wanted(key)) continue;
        if (key === 'bare' || key === 'bare-post') {
          // In turn with the Drover list (or POST) runs, so that both see the same machine conditions; Drover idles meanwhile.
          bares.push(await runBare(dataDir, listJson, key === 'bare' ? scenarios.list : scenarios.post, key));
          continue;
        }
        if (key === 'post') await expectStatus(server, 'POST', scenarios.post.path, scenarios.post.headers, 201, postBody);
        const result = await measure(server, scenarios[key], load);
        results.push(result);
        log(scenarioLine(result));
      }
      const memory = readMemory(server.pid);
      serverPeakRssMb = Math.max(memory ? memory.hwmKb / 1024 : 0, ...results.map((r) => r.serverPeakRssMb));
      if (memory) log(`server memory at the end: RSS ${(memory.rssKb / 1024).toFixed(1)} MB (anonymous ${(memory.anonKb / 1024).toFixed(1)}, files ${(memory.fileKb / 1024).toFixed(1)}); ${await heapSpaces(server, dataDir)}`);
    } finally {
      await server.stop();
    }
    const serverLog = logStats(server.stdoutFile);
    log(`server peak RSS (VmHWM) ${serverPeakRssMb.toFixed(1)} MB; server log: ${serverLog.lines.toLocaleString('en-US')} lines, ${(serverLog.bytes / 1e6).toFixed(1)} MB`);
    const stderr = fs.readFileSync(server.stderrFile, 'utf8').trim();
    if (stderr) log(`server stderr:\n${stderr.slice(-2000)}`);

    return {
      phase: { name, tickets: spec.tickets, seedSeconds: Math.round(seeded.seconds * 10) / 10, scenarios: results, serverPeakRssMb: Math.round(serverPeakRssMb * 10) / 10, serverLog },
      bares,
    };
  } finally {
    if (keep) {
      keepTempDir(dataDir);
      log(`kept ${dataDir}`);
    } else removeTempDir(dataDir);
  }
}

async function main(): Promise<number> {
  installCleanupHandlers();
  const meta = {
    date: new Date().toISOString(),
    commit: gitCommit(),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    store: 'sqlite',
    rateLimit: 'off (DROVER_RATE_LIMIT_PER_MINUTE=0)',
    logLevel: 'info (default), server stdout written to a file: per-request logging is included',
    connections: load.connections,
    durationSec: load.durationSec,
    warmupSec: load.warmupSec,
    quietWaitSec: load.quietWaitSec,
    retriesWhenDisturbed: load.retries,
    cpuProfiled: cpuProfile,
    serverNodeArgs: nodeArgs,
    only: only ? [...only] : null,
  };
  log(`Drover bench: ${meta.cpus}× ${meta.cpuModel}, Node ${meta.node}, commit ${meta.commit}`);
  log(`server: drover serve on SQLite, rate limit off, log level info (request logs go to a file and are part of the measurement)`);
  log(`load: autocannon, ${load.connections} connections, ${load.durationSec} s measured after ${load.warmupSec} s warm-up per row`);
  if (cpuProfile) log('!!! BENCH_CPU_PROF=1: the server runs under the V8 profiler; figures include its overhead and are not comparable');

  const phases: PhaseResult[] = [];
  // The list and the bare server in turn (bare, list, bare, list, bare), each after its warm-up;
  // then POST the same way (last, so that the reads see exactly the seeded data).
  const first = await runPhase({
    tickets: SMALL_TICKETS,
    scenarios: ['bare', 'list', 'bare', 'list', 'bare', 'get', 'board', 'board-plain', 'bare-post', 'post', 'bare-post', 'post', 'bare-post'],
  });
  phases.push(first.phase);
  if (runLarge) {
    const second = await runPhase({ tickets: LARGE_TICKETS, scenarios: ['list', 'board', 'board-plain'] });
    phases.push(second.phase);
  }

  const { targets, ratio, postRatio } = evaluateTargets(phases, first.bares);
  const problems = problemsOf(phases, first.bares);
  const disturbances = disturbancesOf(phases, first.bares);
  const results: BenchResults = { meta, phases, bares: first.bares, listToBareRatio: ratio === null ? null : Math.round(ratio * 1000) / 1000, postToBareRatio: postRatio === null ? null : Math.round(postRatio * 1000) / 1000, targets, clean: problems.length === 0, problems, disturbances };

  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const jsonFile = path.join(RESULTS_DIR, 'latest.json');
  fs.writeFileSync(jsonFile, JSON.stringify(results, null, 2) + '\n');

  reportFigures('Ticket API (SQLite)', [
    ...targets.map((t) => ({ figure: t.name, measured: t.measured, target: /[≥<] [^:]*$/.exec(t.name)?.[0] ?? '', pass: t.pass })),
    ...(problems.length > 0 ? [{ figure: 'failed requests', measured: problems.join('; '), target: 'none', pass: false }] : []),
  ]);
  log('\n== Targets ==');
  for (const t of targets) log(`  ${(t.pass === null ? 'n/a ' : t.pass ? 'PASS' : 'FAIL').padEnd(5)} ${t.name}: ${t.measured}`);
  if (problems.length > 0) {
    log('\n' + '!'.repeat(78));
    log('!!! THE RUN HAD FAILED REQUESTS: the figures below do not measure successful requests only');
    for (const p of problems) log(`!!!   ${p}`);
    log('!'.repeat(78));
  }
  if (disturbances.length > 0) {
    log('\nWARNING: other processes competed for the CPU during some runs; those figures are disturbed (re-run on a quiet machine):');
    for (const d of disturbances) log(`  ${d}`);
  }
  log('\n== Markdown ==\n');
  log(markdown(results));
  log(`\nresults: ${path.relative(process.cwd(), jsonFile)}`);

  if (problems.length > 0) return 1;
  if (process.env.BENCH_STRICT === '1' && targets.some((t) => t.pass === false)) return 1;
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
