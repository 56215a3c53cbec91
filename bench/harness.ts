/**
 * Shared plumbing of the pod, runner and loop benches (bench/pods.ts, bench/runner-sim.ts,
 * bench/loops.ts): `drover serve` / `drover runner` children with their output going straight to
 * files, temp dirs, clean-up on every way out (including agent process groups a killed runner left
 * behind), small API helpers, /proc readings, percentiles and the Markdown table.
 *
 * Self-contained on purpose (it does not import bench/proc.ts, which belongs to the ticket bench).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { reportFigures } from './summary.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const ORG = '/api/v1/ext/orgs/default';

export interface Row {
  name: string;
  value: string;
  target?: string;
  pass?: boolean;
}
export interface BenchResult {
  rows: Row[];
}

// ---------------------------------------------------------------------------------------------
// Children, temp dirs and clean-up

const children = new Set<ChildProcess>();
const tempDirs = new Set<string>();

export function makeTempDir(label: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `drover-bench-${label}-`));
  tempDirs.add(dir);
  return dir;
}

/**
 * Agents run in process groups of their own (detached), so a runner that is SIGKILLed leaves them
 * behind. The runners record each agent's group leader in `<work dir>/agents.journal` (`<pid>
 * <pod key>` lines); this kills those groups, but only when the leader still runs inside `dir`
 * (its cwd), so nothing that is not ours is ever signalled.
 */
function killAgentGroups(dir: string): void {
  const pids: number[] = [];
  const walk = (d: string, depth: number) => {
    if (depth > 4) return;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const full = path.join(d, e.name);
      if (e.isFile() && e.name === 'agents.journal') {
        for (const line of fs.readFileSync(full, 'utf8').split('\n')) {
          const started = /^(\d+) /.exec(line);
          if (started) pids.push(Number(started[1]));
        }
      } else if (e.isDirectory() && e.name !== 'pods' && e.name !== 'persistent') walk(full, depth + 1);
    }
  };
  walk(dir, 0);
  for (const pid of pids) {
    if (!Number.isInteger(pid) || pid <= 1) continue;
    let cwd: string;
    try {
      cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      continue; // gone
    }
    if (!cwd.startsWith(dir + path.sep)) continue;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

/** Leaves `dir` on disk: it is no longer removed at exit (BENCH_KEEP=1). */
export function keepTempDir(dir: string): void {
  tempDirs.delete(dir);
}

export function removeTempDir(dir: string): void {
  killAgentGroups(dir);
  fs.rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

const isRunning = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

/** Synchronous last resort (process exit, signals): kills our children and removes our temp dirs. */
export function cleanupNow(): void {
  for (const child of children) {
    if (isRunning(child)) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  children.clear();
  for (const dir of [...tempDirs]) {
    try {
      removeTempDir(dir);
    } catch {
      // best effort
    }
  }
}
process.on('exit', cleanupNow);

let signalsInstalled = false;
/** For standalone runs: Ctrl-C / SIGTERM still stop every child and remove every temp dir. */
export function installSignalCleanup(): void {
  if (signalsInstalled) return;
  signalsInstalled = true;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\nbench: ${signal} received, stopping child processes and removing temp dirs\n`);
      cleanupNow();
      process.exit(signal === 'SIGINT' ? 130 : 143);
    });
  }
}

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (!isRunning(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

export interface Child {
  readonly name: string;
  readonly pid: number;
  readonly stdoutFile: string;
  readonly stderrFile: string;
  running(): boolean;
  /** Waits until `pattern` matches the stdout (or stderr) file; returns the match. */
  waitFor(pattern: RegExp, options?: { stream?: 'stdout' | 'stderr'; timeoutMs?: number }): Promise<RegExpExecArray>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
  tail(chars?: number): string;
}

/** `node <args>` with stdout and stderr written straight to files in `logDir` (drained, costs what a log file costs). */
export function spawnNode(name: string, args: string[], env: NodeJS.ProcessEnv, logDir: string): Child {
  const stdoutFile = path.join(logDir, `${name}.stdout.log`);
  const stderrFile = path.join(logDir, `${name}.stderr.log`);
  const out = fs.openSync(stdoutFile, 'w');
  const err = fs.openSync(stderrFile, 'w');
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', out, err] });
  fs.closeSync(out);
  fs.closeSync(err);
  children.add(child);
  child.once('exit', () => children.delete(child));
  if (child.pid === undefined) throw new Error(`${name}: could not be started`);
  const read = (file: string) => {
    try {
      return fs.readFileSync(file, 'utf8');
    } catch {
      return '';
    }
  };
  const tail = (chars = 3000) =>
    `--- ${name} stdout ---\n${read(stdoutFile).slice(-chars)}\n--- ${name} stderr ---\n${read(stderrFile).slice(-chars)}`;
  return {
    name,
    pid: child.pid,
    stdoutFile,
    stderrFile,
    running: () => isRunning(child),
    tail,
    async waitFor(pattern, options = {}) {
      const file = options.stream === 'stderr' ? stderrFile : stdoutFile;
      const deadline = Date.now() + (options.timeoutMs ?? 60_000);
      for (;;) {
        const match = pattern.exec(read(file));
        if (match) return match;
        if (!isRunning(child)) throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before printing ${pattern}\n${tail()}`);
        if (Date.now() > deadline) throw new Error(`${name} did not print ${pattern} in time\n${tail()}`);
        await sleep(25);
      }
    },
    async stop(graceMs = 15_000) {
      if (!isRunning(child)) return;
      child.kill('SIGTERM');
      if (!(await waitForExit(child, graceMs))) {
        child.kill('SIGKILL');
        await waitForExit(child, 5_000);
      }
    },
  };
}

/** The environment of Drover children: embedded SQLite, no rate limit, default (info) logging. */
export function droverEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) {
    if (name === 'DATABASE_URL' || name === 'NODE_OPTIONS' || name.startsWith('DROVER_')) delete env[name];
  }
  env.DROVER_RATE_LIMIT_PER_MINUTE = '0';
  // Benches register hundreds of runners from one address.
  env.DROVER_REGISTER_LIMIT_PER_MINUTE = '0';
  env.DROVER_LOG_LEVEL = 'info';
  return { ...env, ...extra };
}

export interface Server extends Child {
  readonly url: string;
  readonly dataDir: string;
  readonly apiKey: string;
  readonly adminToken: string;
  readonly sqliteFile: string;
}

/**
 * `drover serve` on a fresh (or prepared) data dir; resolves once it listens and, with the local
 * runner, once that runner is connected. `nodeArgs` go before the script (e.g. --cpu-prof).
 */
export async function startServe(options: {
  name?: string;
  dataDir: string;
  localRunner: boolean;
  env?: Record<string, string>;
  nodeArgs?: string[];
}): Promise<Server> {
  const name = options.name ?? 'drover-serve';
  const args = [...(options.nodeArgs ?? []), path.join(ROOT, 'bin/drover.mjs'), 'serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', options.dataDir];
  if (!options.localRunner) args.push('--no-local-runner');
  const child = spawnNode(name, args, droverEnv(options.env), options.dataDir);
  try {
    const [, url] = await child.waitFor(/Drover listening on (http:\/\/\S+)/);
    if (options.localRunner) await child.waitFor(/Local runner \d+ connected/);
    const apiKey = fs.readFileSync(path.join(options.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    const adminToken = fs.readFileSync(path.join(options.dataDir, 'admin-token'), 'utf8').trim();
    return { ...child, url, dataDir: options.dataDir, apiKey, adminToken, sqliteFile: path.join(options.dataDir, 'drover.sqlite') };
  } catch (error) {
    await child.stop(2000);
    throw error;
  }
}

/**
 * `drover runner` against `serverUrl` with a registration token; its own work dir under `dir`.
 * `env` is added to Drover's children's environment (a PATH with agent CLIs on it); `beforeStart`
 * may fill the work dir first (credentials, the agent-home template).
 */
export async function startRunner(options: {
  name: string;
  serverUrl: string;
  token: string;
  maxPods: number;
  dir: string;
  env?: Record<string, string>;
  /** `--allow-host` entries (a loopback model stand-in the relay may forward to). */
  allowHosts?: readonly string[];
  beforeStart?: (workDir: string) => void;
}): Promise<Child> {
  const workDir = path.join(options.dir, options.name);
  fs.mkdirSync(workDir, { recursive: true });
  options.beforeStart?.(workDir);
  const args = [
    path.join(ROOT, 'bin/drover.mjs'),
    'runner',
    '--server',
    options.serverUrl,
    '--token',
    options.token,
    '--name',
    options.name,
    '--max-pods',
    String(options.maxPods),
    '--work-dir',
    workDir,
    '--drain-seconds',
    '1',
    ...(options.allowHosts ?? []).flatMap((host) => ['--allow-host', host]),
  ];
  const child = spawnNode(options.name, args, droverEnv(options.env), options.dir);
  await child.waitFor(/runner connecting to/, { stream: 'stderr' });
  return child;
}

// ---------------------------------------------------------------------------------------------
// HTTP

export interface ApiAnswer<T = unknown> {
  status: number;
  body: T;
  text: string;
}

export async function call<T = Record<string, unknown>>(
  baseUrl: string,
  method: string,
  urlPath: string,
  options: { headers?: Record<string, string>; json?: unknown } = {},
): Promise<ApiAnswer<T>> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  let body: string | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  const response = await fetch(baseUrl + urlPath, { method, headers, body });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  return { status: response.status, body: parsed as T, text };
}

export async function expect<T = Record<string, unknown>>(
  status: number,
  baseUrl: string,
  method: string,
  urlPath: string,
  options: { headers?: Record<string, string>; json?: unknown } = {},
): Promise<T> {
  const answer = await call<T>(baseUrl, method, urlPath, options);
  if (answer.status !== status) throw new Error(`${method} ${urlPath} answered ${answer.status}, expected ${status}: ${answer.text.slice(0, 500)}`);
  return answer.body;
}

/** A registration token for `drover runner` / the runner simulator. */
export async function registrationToken(server: Server): Promise<string> {
  const body = await expect<{ token: string }>(201, server.url, 'POST', '/api/v1/admin/orgs/default/runner-tokens', {
    headers: { authorization: `Bearer ${server.adminToken}` },
    // One token serves every runner of a bench (up to the 1,000 simulated ones).
    json: { expires_in_hours: 24, uses: 1000 },
  });
  return body.token;
}

/** Runner counts by status from GET /runners. */
export async function runnerStatusCounts(server: Server): Promise<Record<string, number>> {
  const body = await expect<{ runners: { status: string }[] }>(200, server.url, 'GET', `${ORG}/runners`, { headers: { 'x-api-key': server.apiKey } });
  const counts: Record<string, number> = {};
  for (const r of body.runners) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

export async function waitUntil(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number, everyMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// /proc readings (Linux)

export function readMemoryKb(pid: number): { rssKb: number; hwmKb: number } | null {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  return { rssKb: field('VmRSS'), hwmKb: field('VmHWM') };
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

/** user + system CPU seconds of a process so far (its own threads; not its children). */
export function readCpuSeconds(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/**
 * The helper processes of a `drover serve` or `drover runner` process: its local runner (a
 * `drover runner` child) and each runner's process launchers, found through /proc, labelled by
 * `prefix`. The launchers' reaped children are the agents.
 */
export function helperProcesses(pid: number, prefix: string): Record<string, number> {
  const found: Record<string, number> = {};
  const walk = (parent: number, depth: number) => {
    if (depth > 3) return;
    let tasks: string[];
    try {
      tasks = fs.readdirSync(`/proc/${parent}/task`);
    } catch {
      return;
    }
    for (const task of tasks) {
      let children: number[];
      try {
        children = fs.readFileSync(`/proc/${parent}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
      } catch {
        continue;
      }
      for (const child of children) {
        let cmdline: string;
        try {
          cmdline = fs.readFileSync(`/proc/${child}/cmdline`, 'utf8').replaceAll('\0', ' ');
        } catch {
          continue;
        }
        if (cmdline.includes('launcher-child.mjs')) {
          // A runner has several launcher helpers (src/runner/launcher.ts): `launcher`, `launcher 2` …
          const taken = Object.keys(found).filter((label) => label.startsWith(`${prefix} launcher`)).length;
          found[taken === 0 ? `${prefix} launcher` : `${prefix} launcher ${taken + 1}`] = child;
        }
        else if (/drover\.mjs runner\b/.test(cmdline)) {
          found[`${prefix} local runner`] = child;
          walk(child, depth + 1);
        }
      }
    }
  };
  walk(pid, 0);
  return found;
}

/** user + system CPU seconds of a process's reaped children (cutime + cstime): the agents a runner spawned. */
export function readChildrenCpuSeconds(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** Busy (non-idle, non-iowait) CPU seconds of the whole machine so far. */
export function machineBusySeconds(): number {
  const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
  return (total - fields[3] - fields[4]) / CLOCK_TICKS;
}

/**
 * CPU accounting over a window: the given processes (own + reaped children), this process, and
 * everything else on the machine, each as % of one core.
 */
export class CpuWindow {
  private readonly started = performance.now();
  private readonly machine0 = machineBusySeconds();
  private readonly own0 = process.cpuUsage();
  private readonly procs0: Map<number, { own: number; kids: number }>;
  readonly loadAvgStart = os.loadavg();

  constructor(private readonly pids: Record<string, number>) {
    this.procs0 = new Map(Object.values(pids).map((pid) => [pid, { own: readCpuSeconds(pid) ?? 0, kids: readChildrenCpuSeconds(pid) ?? 0 }]));
  }

  /**
   * `pct[label]`: the process's own CPU; `childPct[label]`: CPU of the children it reaped in the
   * window (the agents a runner spawned); `otherPct`: everything else on the machine.
   */
  end(): {
    seconds: number;
    pct: Record<string, number>;
    childPct: Record<string, number>;
    ownPct: number;
    otherPct: number;
    machinePct: number;
    loadAvg: { start: number[]; end: number[] };
  } {
    const seconds = (performance.now() - this.started) / 1000;
    const machine = machineBusySeconds() - this.machine0;
    const own = process.cpuUsage(this.own0);
    const ownSec = (own.user + own.system) / 1e6;
    const pct: Record<string, number> = {};
    const childPct: Record<string, number> = {};
    let procsSec = 0;
    for (const [label, pid] of Object.entries(this.pids)) {
      const before = this.procs0.get(pid) ?? { own: 0, kids: 0 };
      const usedOwn = Math.max(0, (readCpuSeconds(pid) ?? before.own) - before.own);
      const usedKids = Math.max(0, (readChildrenCpuSeconds(pid) ?? before.kids) - before.kids);
      procsSec += usedOwn + usedKids;
      pct[label] = round((usedOwn / seconds) * 100, 1);
      childPct[label] = round((usedKids / seconds) * 100, 1);
    }
    return {
      seconds,
      pct,
      childPct,
      ownPct: round((ownSec / seconds) * 100, 1),
      otherPct: round((Math.max(0, machine - procsSec - ownSec) / seconds) * 100, 0),
      machinePct: round((machine / seconds) * 100, 0),
      loadAvg: { start: this.loadAvgStart, end: os.loadavg() },
    };
  }
}

export const loadAvgText = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');

// ---------------------------------------------------------------------------------------------
// Numbers and output

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length) - 1; // nearest rank
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))];
}

export function summary(values: number[]): { n: number; p50: number; p90: number; p99: number; max: number; min: number; mean: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    min: sorted[0] ?? NaN,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? NaN,
    mean: sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : NaN,
  };
}

export const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/** An integer setting of a bench from the environment (`fallback` when unset), at least `min`. */
export function envInt(name: string, fallback: number, min = 1): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`);
  return value;
}

export function markdownTable(rows: Row[]): string {
  const cell = (s: string) => s.replaceAll('|', '\\|');
  const lines = ['| Metric | Value | Target | Result |', '|---|---|---|---|'];
  for (const r of rows) {
    const result = r.pass === undefined ? '' : r.pass ? 'PASS' : '**FAIL**';
    lines.push(`| ${cell(r.name)} | ${cell(r.value)} | ${cell(r.target ?? '')} | ${result} |`);
  }
  return lines.join('\n');
}

export const log = (line = '') => process.stderr.write(line + '\n');

/** `npx tsx bench/<file>.ts`: runs the bench, prints its Markdown table, exits 1 when it broke. */
export function runIfMain(metaUrl: string, title: string, run: () => Promise<BenchResult>): void {
  if (!process.argv[1] || metaUrl !== pathToFileURL(path.resolve(process.argv[1])).href) return;
  installSignalCleanup();
  run().then(
    (result) => {
      process.stdout.write(`\n### ${title}\n\n${markdownTable(result.rows)}\n`);
      reportFigures(
        title,
        result.rows.map((r) => ({ figure: r.name, measured: r.value, target: r.target, pass: r.pass ?? null })),
      );
      process.exit(0);
    },
    (error: unknown) => {
      process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}

/**
 * A bench's `run()`: its parts in order (`a`, `b`, …), or only the one named by the environment
 * variable `onlyVariable` (e.g. BENCH_PODS_ONLY=b), after a line naming the machine.
 */
export async function runParts(label: string, onlyVariable: string, parts: Record<string, () => Promise<Row[]>>): Promise<BenchResult> {
  log(`${label} bench on ${machineLine()}`);
  const only = process.env[onlyVariable];
  const rows: Row[] = [];
  for (const [name, part] of Object.entries(parts)) if (!only || only === name) rows.push(...(await part()));
  return { rows };
}

export function machineLine(): string {
  return `${os.cpus().length}× ${os.cpus()[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}`;
}

/**
 * CPU profiling of the server child when BENCH_CPU_PROF=1: V8 profiles (one per thread; the main
 * thread's is the big one) written at its exit into bench/results/profiles/<label>-<time>/.
 */
export function profileArgs(label: string): string[] {
  if (process.env.BENCH_CPU_PROF !== '1') return [];
  const dir = path.join(ROOT, 'bench/results/profiles', `${label}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  fs.mkdirSync(dir, { recursive: true });
  log(`server CPU profile → ${dir} (figures include the profiler's overhead)`);
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`];
}

/** The sum of the figures of a runner's launcher helpers (`<prefix> launcher`, `<prefix> launcher 2` …). */
export function launchersSum(figures: Record<string, number>, prefix: string): number {
  return round(
    Object.entries(figures)
      .filter(([label]) => label === `${prefix} launcher` || label.startsWith(`${prefix} launcher `))
      .reduce((sum, [, value]) => sum + value, 0),
  );
}
