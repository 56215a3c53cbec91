/**
 * One load scenario: an optional warm-up (discarded), then a measured autocannon run, while the
 * server child's RSS is sampled every 100 ms and its CPU time is read before and after.
 */
import fs from 'node:fs';
import os from 'node:os';
import autocannon from 'autocannon';
import { RssSampler, readCpuSeconds, type ServerProcess } from './proc.ts';

export interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  /** Shown in reports; with `paths` the requests rotate over those instead. */
  path: string;
  paths?: string[];
  body?: string;
  headers: Record<string, string>;
  /** How the request differs from a plain one (`gzip, as the dashboard reads it`), shown with its path. */
  note?: string;
}

export interface LoadOptions {
  connections: number;
  durationSec: number;
  warmupSec: number;
}

export interface ScenarioResult {
  name: string;
  method: string;
  path: string;
  note?: string;
  target: string;
  connections: number;
  durationSec: number;
  /** autocannon's average of the per-second request counts (all responses). */
  reqPerSec: number;
  /** 2xx responses divided by the measured duration. */
  okPerSec: number;
  /** From the 2xx response times (float ms, exact percentiles from every response). */
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  /** autocannon's own (1 ms-resolution histogram) percentiles, for cross-checking. */
  autocannonLatencyMs: { p50: number; p99: number; mean: number };
  requests: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  warmup: { durationSec: number; requests: number; non2xx: number; errors: number };
  serverPeakRssMb: number;
  /** CPU used by the server child / by this (load generator) process, as % of one core. */
  serverCpuPct: number | null;
  /**
   * Server CPU time (user + system) per request answered in the measured run, in µs: far less
   * sensitive to what else runs on the machine than req/s (a shared core slows the rate, not the
   * work per request).
   */
  serverCpuUsPerRequest: number | null;
  loadgenCpuPct: number;
  /**
   * CPU used by everything else on the machine during the run, as % of one core (from /proc/stat):
   * a high value means other processes competed with the server and the figures are disturbed.
   */
  otherCpuPct: number | null;
  machineCores: number;
  /** Every measured attempt when a disturbed run was repeated (see `measure`); the reported one is marked. */
  attempts?: { reqPerSec: number; p50: number; p99: number; cpuUsPerRequest: number | null; otherCpuPct: number | null; reported: boolean }[];
}

interface RawRun {
  result: autocannon.Result;
  latencies: Float64Array;
}

function runAutocannon(url: string, scenario: Scenario, connections: number, durationSec: number): Promise<RawRun> {
  let chunk = new Float64Array(1 << 16);
  let used = 0;
  const chunks: Float64Array[] = [];
  let next = 0;
  const paths = scenario.paths;
  const options: autocannon.Options = {
    url: url + scenario.path,
    method: scenario.method,
    headers: scenario.headers,
    body: scenario.body,
    connections,
    duration: durationSec,
    timeout: 10,
    requests: paths
      ? [
          {
            setupRequest: (request) => {
              request.path = paths[next++ % paths.length];
              return request;
            },
          },
        ]
      : undefined,
  };
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (error, result) => {
      if (error) return reject(error instanceof Error ? error : new Error(String(error)));
      chunks.push(chunk.subarray(0, used));
      const all = new Float64Array(chunks.reduce((n, c) => n + c.length, 0));
      let offset = 0;
      for (const c of chunks) {
        all.set(c, offset);
        offset += c.length;
      }
      resolve({ result, latencies: all });
    });
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode < 200 || statusCode >= 300) return;
      if (used === chunk.length) {
        chunks.push(chunk);
        chunk = new Float64Array(chunk.length);
        used = 0;
      }
      chunk[used++] = responseTime;
    });
  });
}

/** Busy (non-idle, non-iowait) CPU seconds of the whole machine so far. */
function machineBusySeconds(): number | null {
  try {
    const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const total = fields.slice(0, 8).reduce((a, b) => a + b, 0); // user … steal (guest is inside user)
    return (total - fields[3] - fields[4]) / 100;
  } catch {
    return null;
  }
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length) - 1; // nearest rank
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))];
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

export async function runScenario(server: ServerProcess, scenario: Scenario, load: LoadOptions): Promise<ScenarioResult> {
  let warmup = { durationSec: 0, requests: 0, non2xx: 0, errors: 0 };
  if (load.warmupSec > 0) {
    const { result } = await runAutocannon(server.url, scenario, load.connections, load.warmupSec);
    warmup = { durationSec: load.warmupSec, requests: result.requests.total, non2xx: result.non2xx, errors: result.errors };
  }

  const sampler = new RssSampler(server.pid, 100);
  const cpuBefore = readCpuSeconds(server.pid);
  const machineBefore = machineBusySeconds();
  const ownBefore = process.cpuUsage();
  const started = performance.now();
  const { result, latencies } = await runAutocannon(server.url, scenario, load.connections, load.durationSec);
  const wallSec = (performance.now() - started) / 1000;
  const ownCpu = process.cpuUsage(ownBefore);
  const cpuAfter = readCpuSeconds(server.pid);
  const machineAfter = machineBusySeconds();
  const { peakRssKb } = sampler.stop();
  const serverCpu = cpuBefore !== null && cpuAfter !== null ? cpuAfter - cpuBefore : null;
  const ownCpuSec = (ownCpu.user + ownCpu.system) / 1e6;
  const otherCpu = serverCpu !== null && machineBefore !== null && machineAfter !== null ? Math.max(0, machineAfter - machineBefore - serverCpu - ownCpuSec) : null;

  latencies.sort();
  const mean = latencies.length ? latencies.reduce((a, b) => a + b, 0) / latencies.length : NaN;
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stat.count ?? 0;

  return {
    name: scenario.name,
    method: scenario.method,
    path: scenario.path,
    ...(scenario.note ? { note: scenario.note } : {}),
    target: server.name,
    connections: load.connections,
    durationSec: result.duration,
    reqPerSec: round(result.requests.average, 1),
    okPerSec: round(result['2xx'] / result.duration, 1),
    latencyMs: {
      p50: round(percentile(latencies, 50)),
      p90: round(percentile(latencies, 90)),
      p99: round(percentile(latencies, 99)),
      max: round(latencies.length ? latencies[latencies.length - 1] : NaN),
      mean: round(mean),
    },
    autocannonLatencyMs: { p50: result.latency.p50, p99: result.latency.p99, mean: result.latency.average },
    requests: result.requests.total,
    ok2xx: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    warmup,
    serverPeakRssMb: round(peakRssKb / 1024, 1),
    serverCpuPct: serverCpu !== null ? round((serverCpu / wallSec) * 100, 0) : null,
    serverCpuUsPerRequest: serverCpu !== null && result.requests.total > 0 ? round((serverCpu * 1e6) / result.requests.total, 0) : null,
    loadgenCpuPct: round((ownCpuSec / wallSec) * 100, 0),
    otherCpuPct: otherCpu !== null ? round((otherCpu / wallSec) * 100, 0) : null,
    machineCores: os.cpus().length,
  };
}

/**
 * Waits (up to `maxWaitSec`) until the rest of the machine uses less than `thresholdPct` of a core,
 * measured over one second, so a run does not start while, say, a test suite is running beside it.
 */
export async function waitForQuiet(maxWaitSec: number, thresholdPct: number, log: (line: string) => void): Promise<number | null> {
  const started = Date.now();
  let announced = false;
  for (;;) {
    const before = machineBusySeconds();
    await new Promise((r) => setTimeout(r, 1000));
    const after = machineBusySeconds();
    if (before === null || after === null) return null;
    const busyPct = Math.round((after - before) * 100);
    if (busyPct < thresholdPct) return busyPct;
    if ((Date.now() - started) / 1000 >= maxWaitSec) {
      log(`  machine still busy (${busyPct}% of a core used by other processes) after ${maxWaitSec} s; measuring anyway`);
      return busyPct;
    }
    if (!announced) {
      log(`  waiting for the machine to become quiet (other processes use ${busyPct}% of a core) …`);
      announced = true;
    }
  }
}

export interface MeasureOptions extends LoadOptions {
  /** Extra attempts when other processes used >= `disturbedPct` % of a core during a run. */
  retries: number;
  disturbedPct: number;
  quietWaitSec: number;
  log: (line: string) => void;
}

/**
 * Runs a scenario; when the run was disturbed by other processes, waits for quiet and repeats it
 * (at most `retries` times). The attempt reported is the one that was least disturbed, chosen on
 * the disturbance alone, never on its figures; every attempt is kept in `attempts`.
 */
export async function measure(server: ServerProcess, scenario: Scenario, options: MeasureOptions): Promise<ScenarioResult> {
  const attempts: ScenarioResult[] = [];
  for (let i = 0; i <= options.retries; i++) {
    if (options.quietWaitSec > 0) await waitForQuiet(options.quietWaitSec, options.disturbedPct, options.log);
    const result = await runScenario(server, scenario, options);
    attempts.push(result);
    if (result.otherCpuPct === null || result.otherCpuPct < options.disturbedPct) break;
    if (i < options.retries) options.log(`  (disturbed: other processes used ${result.otherCpuPct}% of a core; repeating this run)`);
  }
  let best = attempts[0];
  for (const a of attempts) if ((a.otherCpuPct ?? 0) <= (best.otherCpuPct ?? 0)) best = a;
  if (attempts.length > 1) {
    best.attempts = attempts.map((a) => ({
      reqPerSec: a.reqPerSec,
      p50: a.latencyMs.p50,
      p99: a.latencyMs.p99,
      cpuUsPerRequest: a.serverCpuUsPerRequest,
      otherCpuPct: a.otherCpuPct,
      reported: a === best,
    }));
    // Failures in any attempt count: a repeated run must not hide errors.
    best.non2xx = attempts.reduce((n, a) => n + a.non2xx, 0);
    best.errors = attempts.reduce((n, a) => n + a.errors, 0);
    best.timeouts = attempts.reduce((n, a) => n + a.timeouts, 0);
  }
  return best;
}
