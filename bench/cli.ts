/**
 * Wall time of a client command (docs/cli.md): `drover tickets list` against a running `drover
 * serve` (SQLite, 50 tickets), as a user types it: `node bin/drover.mjs tickets list`, one process
 * after another, from spawn to exit. Target: under 300 ms (median).
 *
 * For scale, the same run of `node -e 0` (Node's own start, the floor) and of `drover serve --version`
 * (which runs from the full server bundle) are measured too.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { CpuWindow, ROOT, droverEnv, expect, log, loadAvgText, machineLine, makeTempDir, removeTempDir, round, runIfMain, startServe, summary, type Row } from './harness.ts';

const RUNS = Number(process.env.BENCH_CLI_RUNS ?? 30);
const TARGET_MS = 300;

/** Milliseconds from spawn to exit of `node <args>`; throws on a non-zero exit. */
function timed(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('exit', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`node ${args.join(' ')} exited ${code}\n${stderr}`))));
  });
}

async function series(args: string[], env: NodeJS.ProcessEnv, runs = RUNS): Promise<ReturnType<typeof summary>> {
  for (let i = 0; i < 3; i++) await timed(args, env); // warm the page cache and the bundle
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push(await timed(args, env));
  return summary(times);
}

const fmt = (s: ReturnType<typeof summary>) => `p50 ${round(s.p50, 0)} ms, p90 ${round(s.p90, 0)} ms, max ${round(s.max, 0)} ms (n=${s.n})`;

export async function run(): Promise<{ rows: Row[] }> {
  log(`CLI bench on ${machineLine()}`);
  const dataDir = makeTempDir('cli');
  try {
    const server = await startServe({ dataDir, localRunner: false });
    try {
      const headers = { 'x-api-key': server.apiKey };
      for (let i = 0; i < 50; i++) await expect(201, server.url, 'POST', '/api/v1/ext/orgs/default/tickets', { headers, json: { type: 'task', title: `Ticket ${i}`, labels: ['bench'] } });
      const env = droverEnv({ XDG_CONFIG_HOME: path.join(dataDir, 'config'), HOME: dataDir });
      const drover = path.join(ROOT, 'bin', 'drover.mjs');
      await timed([drover, 'login', '--server', server.url, '--org', 'default', '--api-key', server.apiKey], env);

      const usage = new CpuWindow({ server: server.pid });
      const list = await series([drover, 'tickets', 'list'], env);
      const json = await series([drover, 'tickets', 'list', '--json'], env);
      const cpu = usage.end();
      const floor = await series(['-e', '0'], env);
      const version = await series([drover, 'serve', '--version'], env, 10);
      log(`tickets list: ${fmt(list)}`);
      return {
        rows: [
          { name: '`drover tickets list` wall time (spawn → exit, 50 tickets)', value: fmt(list), target: `p50 < ${TARGET_MS} ms`, pass: list.p50 < TARGET_MS },
          { name: '`drover tickets list --json` wall time', value: fmt(json) },
          { name: '`node -e 0` (Node start, the floor)', value: fmt(floor) },
          { name: '`drover serve --version` (runs from the server bundle)', value: fmt(version) },
          { name: 'CPU during the two series, % of one core', value: `server ${cpu.pct.server}%, other processes ${cpu.otherPct}% (the CLI processes included)` },
          { name: 'load average (1/5/15 min) start → end', value: `${loadAvgText(cpu.loadAvg.start)} → ${loadAvgText(cpu.loadAvg.end)}` },
        ],
      };
    } finally {
      await server.stop();
    }
  } finally {
    removeTempDir(dataDir);
  }
}

runIfMain(import.meta.url, 'CLI: wall time of a client command', run);
