/**
 * `npm run bench`: every bench under bench/ in one command, one after the other, each in its own
 * process with a time cap, within one budget (BENCH_BUDGET_MIN, 20 minutes), then ONE summary
 * table (bench, figure, target, measured, pass/fail) with the commit and the machine's load
 * average at the start and the end. Each bench reports its figures through bench/summary.ts
 * (JSON lines in BENCH_SUMMARY_FILE); a bench that fails, runs over its cap or is not reached
 * within the budget says so in the table. The sizes are set down from each bench's own defaults
 * so that all fit in the budget on a 2-core machine; each bench alone (`npm run bench:<name>`)
 * runs at its full size. Output: bench/results/summary.md and summary.jsonl; each bench's
 * output in bench/results/logs/<name>.log.
 *
 * BENCH_ALL_ONLY=tickets,walls runs a subset.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, installSignalCleanup, machineLine } from './harness.ts';
import { readFigures, summaryTable, type Figure } from './summary.ts';

interface BenchPart {
  name: string;
  file: string;
  /** Seconds it may run at most. */
  capSec: number;
  env?: Record<string, string>;
}

/** In order of what the issues' targets need first. */
const PARTS: BenchPart[] = [
  { name: 'tickets', file: 'run.ts', capSec: 300, env: { BENCH_LARGE: '0', BENCH_DURATION: '5', BENCH_WARMUP: '2', BENCH_QUIET_WAIT: '0', BENCH_RETRIES: '0' } },
  { name: 'runners', file: 'runner-sim.ts', capSec: 330, env: { BENCH_RUNNERS: '10000', BENCH_RUNNER_WINDOW: '30' } },
  { name: 'walls', file: 'walls.ts', capSec: 150, env: { BENCH_WALLS_ROUNDS: '20', BENCH_WALLS_WARMUP: '3' } },
  { name: 'network', file: 'network.ts', capSec: 120, env: { BENCH_NETWORK_STARTS: '50', BENCH_NETWORK_PINGS: '500' } },
  { name: 'relay', file: 'relay.ts', capSec: 150, env: { BENCH_RELAY_CALLS: '300', BENCH_RELAY_BURST: '200', BENCH_RELAY_WARMUP: '50', BENCH_RELAY_BODY_CALLS: '100' } },
  { name: 'delivery', file: 'delivery.ts', capSec: 180, env: { BENCH_DELIVERY_ROUNDS: '5' } },
  { name: 'dashboard', file: 'dashboard.ts', capSec: 150, env: { BENCH_DASHBOARD_RUNS: '3' } },
  { name: 'pods', file: 'pods.ts', capSec: 150, env: { BENCH_PODS_COUNT: '50', BENCH_PODS_DURATION: '10' } },
  { name: 'queue', file: 'queue.ts', capSec: 120 },
  { name: 'checkout', file: 'checkout.ts', capSec: 120, env: { BENCH_CHECKOUT_PODS: '6' } },
  // (a) creates its loops early in a minute for the next one: up to ~2 minutes of waiting alone.
  { name: 'loops', file: 'loops.ts', capSec: 180 },
  { name: 'isolation', file: 'isolation.ts', capSec: 120 },
  { name: 'events', file: 'events.ts', capSec: 120 },
  { name: 'transcripts', file: 'transcripts.ts', capSec: 120, env: { BENCH_TRANSCRIPT_RUNS: '10' } },
  { name: 'mcp', file: 'mcp.ts', capSec: 60 },
  { name: 'cli', file: 'cli.ts', capSec: 60 },
  { name: 'channels', file: 'channels.ts', capSec: 90, env: { BENCH_CHANNEL_MESSAGES: '100000', BENCH_CHANNEL_ITERATIONS: '500' } },
  { name: 'activity', file: 'activity.ts', capSec: 120, env: { BENCH_ACTIVITY_EVENTS: '200000' } },
];

const RESULTS = path.join(ROOT, 'bench/results');
const log = (line = '') => process.stdout.write(line + '\n');
const loadText = () => os.loadavg().map((l) => l.toFixed(2)).join(' / ');

function commit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
    return dirty ? `${head}+uncommitted` : head;
  } catch {
    return 'unknown';
  }
}

/** Runs one bench in its own process group; on its cap the whole group is stopped. */
function runPart(part: BenchPart, capSec: number, summaryFile: string): Promise<{ code: number | null; timedOut: boolean; seconds: number }> {
  const logFile = path.join(RESULTS, 'logs', `${part.name}.log`);
  const out = fs.openSync(logFile, 'w');
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', part.file)], {
    cwd: ROOT,
    env: { ...process.env, ...part.env, BENCH_SUMMARY_FILE: summaryFile },
    stdio: ['ignore', out, out],
    detached: true,
  });
  fs.closeSync(out);
  return new Promise((resolve) => {
    let timedOut = false;
    const stopGroup = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      // SIGTERM lets the bench stop its servers and remove its temp dirs; SIGKILL after 15 s.
      stopGroup('SIGTERM');
      setTimeout(() => stopGroup('SIGKILL'), 15_000).unref();
    }, capSec * 1000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, timedOut, seconds: (performance.now() - started) / 1000 });
    });
  });
}

async function main(): Promise<void> {
  installSignalCleanup();
  const budgetSec = Number(process.env.BENCH_BUDGET_MIN ?? 20) * 60;
  const only = process.env.BENCH_ALL_ONLY ? new Set(process.env.BENCH_ALL_ONLY.split(',')) : null;
  fs.mkdirSync(path.join(RESULTS, 'logs'), { recursive: true });
  const summaryFile = path.join(RESULTS, 'summary.jsonl');
  fs.rmSync(summaryFile, { force: true });
  const started = performance.now();
  const loadStart = loadText();
  const head = commit();
  log(`npm run bench: ${machineLine()}, commit ${head}, load average ${loadStart} (1/5/15 min), budget ${budgetSec / 60} min`);
  const outcomes: Figure[] = [];
  for (const part of PARTS) {
    if (only && !only.has(part.name)) continue;
    if (!fs.existsSync(path.join(ROOT, 'bench', part.file))) continue;
    const left = budgetSec - (performance.now() - started) / 1000;
    if (left < 30) {
      outcomes.push({ bench: part.name, figure: 'not run', measured: 'the 20-minute budget was used up before it', pass: false });
      log(`- ${part.name}: not run (budget used up)`);
      continue;
    }
    const before = readFigures(summaryFile).length;
    const result = await runPart(part, Math.min(part.capSec, left), summaryFile);
    const reported = readFigures(summaryFile).length - before;
    log(`- ${part.name}: ${result.timedOut ? 'stopped at its cap' : `exit ${result.code}`} after ${result.seconds.toFixed(0)} s, ${reported} figures (load ${loadText()})`);
    if (result.timedOut || result.code !== 0) {
      outcomes.push({
        bench: part.name,
        figure: result.timedOut ? `stopped after ${Math.round(result.seconds)} s (its cap)` : `failed (exit ${result.code})`,
        measured: `see bench/results/logs/${part.name}.log`,
        pass: false,
      });
    }
  }
  const minutes = (performance.now() - started) / 60_000;
  const figures = [...readFigures(summaryFile), ...outcomes];
  const table = summaryTable(figures);
  const footer =
    `_${new Date().toISOString()}, commit ${head}, ${machineLine()}; the whole run took ${minutes.toFixed(1)} min. ` +
    `Load average (1/5/15 min) ${loadStart} at the start, ${loadText()} at the end: the machine was shared with other work, so absolute figures are disturbed; ratios are measured in turn within one run._`;
  fs.writeFileSync(path.join(RESULTS, 'summary.md'), `${table}\n\n${footer}\n`);
  log(`\n${table}\n\n${footer}`);
}

await main();
