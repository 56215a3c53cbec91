/**
 * Pod walls bench: `npm run bench:walls` (docs/runners.md "Limits", "Isolation").
 *
 * One `drover serve` (SQLite, no local runner) and two `drover runner`s on this machine: `walled`
 * with every wall it can put up (bubblewrap, the pod's cgroups, and the network namespace with its
 * egress proxy when the runner has them: its record's `isolation` is printed) and `plain` with
 * `--sandbox none` (the cgroups still apply there; they are the runner's, not the sandbox's).
 * The figure: POST /pods of a `shell` pod running `echo` → the pod ended, as the API shows it
 * (`finished_at`, recorded by the server on this machine's clock, minus the moment POST was sent),
 * for each runner, one pod at a time, alternating walled / plain after BENCH_WALLS_WARMUP (5) pairs
 * of warm-up, BENCH_WALLS_ROUNDS (30) pairs measured. Added cost = walled − plain of each pair.
 * BENCH_WALLS_TRACE=1: the runners trace their pods' phases (DROVER_TRACE_POD_PHASES, src/runner/pod-phases.ts),
 * and the p50 of each phase's own time is printed per runner (docs/runners.md "What a pod start costs").
 */
import fs from 'node:fs';
import os from 'node:os';
import {
  ORG,
  envInt,
  loadAvgText,
  expect,
  log,
  makeTempDir,
  registrationToken,
  removeTempDir,
  round,
  runIfMain,
  runParts,
  sleep,
  startRunner,
  startServe,
  summary,
  waitUntil,
  type Child,
  type Row,
  type Server,
} from './harness.ts';

const ms = (n: number) => `${round(n, 1)} ms`;
const ENDED = ['completed', 'failed', 'terminated'];

interface PodJson {
  pod_key: string;
  status: string;
  finished_at: string | null;
  error_message: string | null;
}

const TRACE = process.env.BENCH_WALLS_TRACE === '1';

/** The p50 of each phase's own time (`+ms`) over the measured pods' `pod-phases` lines of a runner's log. */
function phaseMedians(logFile: string, skip: number): string {
  const lines = fs.readFileSync(logFile, 'utf8').split('\n').filter((line) => line.startsWith('pod-phases ')).slice(skip);
  const steps = new Map<string, number[]>();
  for (const line of lines) {
    for (const [, phase, took] of line.matchAll(/ ([a-z-]+)=[0-9.]+\(\+([0-9.]+)\)/g)) {
      if (!steps.has(phase)) steps.set(phase, []);
      steps.get(phase)!.push(Number(took));
    }
  }
  return [...steps].map(([phase, values]) => `${phase} ${round(summary(values).p50, 1)}`).join(', ') + ` (${lines.length} pods)`;
}

async function runnerOnline(server: Server, name: string, sandbox: 'bwrap' | 'none', dataDir: string): Promise<{ child: Child; id: number; isolation: unknown }> {
  const env = { DROVER_RUNNER_SANDBOX: sandbox, ...(TRACE ? { DROVER_TRACE_POD_PHASES: '1' } : {}) };
  const child = await startRunner({ name, serverUrl: server.url, token: await registrationToken(server), maxPods: 4, dir: dataDir, env });
  const headers = { 'x-api-key': server.apiKey };
  let found: { id: number; isolation: unknown } | null = null;
  await waitUntil(`runner ${name} online`, async () => {
    const body = await expect<{ runners: { id: number; name: string; status: string; isolation: unknown }[] }>(200, server.url, 'GET', `${ORG}/runners`, { headers });
    const runner = body.runners.find((r) => r.name === name && r.status === 'online');
    if (runner) found = { id: runner.id, isolation: runner.isolation };
    return runner !== undefined;
  }, 30_000);
  return { child, ...found! };
}

/** POST /pods → ended for one `echo` pod on `runnerId`: the milliseconds, from the server's `finished_at`. */
async function podToEnd(server: Server, runnerId: number): Promise<number> {
  const headers = { 'x-api-key': server.apiKey };
  const sentAt = Date.now();
  const created = await expect<{ pod: PodJson }>(201, server.url, 'POST', `${ORG}/pods`, {
    headers,
    json: { agent_slug: 'shell', runner_id: runnerId, agentfile_layer: 'PROMPT "echo walls"' },
  });
  const key = created.pod.pod_key;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { pod } = await expect<{ pod: PodJson }>(200, server.url, 'GET', `${ORG}/pods/${key}`, { headers });
    if (ENDED.includes(pod.status)) {
      if (pod.status !== 'completed') throw new Error(`pod ${key} ended ${pod.status}: ${pod.error_message ?? ''}`);
      return Date.parse(pod.finished_at!) - sentAt;
    }
    if (Date.now() > deadline) throw new Error(`pod ${key} did not end within 30 s`);
    await sleep(5);
  }
}

async function podStart(): Promise<Row[]> {
  const warmup = envInt('BENCH_WALLS_WARMUP', 5);
  const rounds = envInt('BENCH_WALLS_ROUNDS', 30);
  const dataDir = makeTempDir('walls');
  const load = loadAvgText(os.loadavg());
  try {
    const server = await startServe({ name: 'drover-serve', dataDir, localRunner: false });
    const runners: Child[] = [];
    try {
      const walled = await runnerOnline(server, 'walled', 'bwrap', dataDir);
      runners.push(walled.child);
      const plain = await runnerOnline(server, 'plain', 'none', dataDir);
      runners.push(plain.child);
      log(`walled runner isolation ${JSON.stringify(walled.isolation)}; plain ${JSON.stringify(plain.isolation)}`);
      for (let i = 0; i < warmup; i++) {
        await podToEnd(server, walled.id);
        await podToEnd(server, plain.id);
      }
      const w: number[] = [];
      const p: number[] = [];
      for (let i = 0; i < rounds; i++) {
        // Alternate which goes first, so neither always follows the other.
        if (i % 2 === 0) {
          w.push(await podToEnd(server, walled.id));
          p.push(await podToEnd(server, plain.id));
        } else {
          p.push(await podToEnd(server, plain.id));
          w.push(await podToEnd(server, walled.id));
        }
      }
      const added = w.map((value, i) => value - p[i]);
      const [sw, sp, sa] = [summary(w), summary(p), summary(added)];
      log(`walled p50 ${ms(sw.p50)} p99 ${ms(sw.p99)}; plain p50 ${ms(sp.p50)} p99 ${ms(sp.p99)}; added p50 ${ms(sa.p50)} p99 ${ms(sa.p99)}`);
      if (TRACE) {
        await sleep(200); // the last pods' lines are written once they are torn down
        for (const r of [walled, plain]) log(`${r.child.name} phases, ms, p50 of each step: ${phaseMedians(r.child.stderrFile, warmup)}`);
      }
      return [
        { name: 'load average (1 / 5 / 15 min) at the start / at the end', value: `${load} / ${loadAvgText(os.loadavg())}` },
        { name: `walled runner's isolation`, value: JSON.stringify(walled.isolation) },
        { name: `POST /pods → ended, walls on (${rounds} pods, interleaved) p50 / p99`, value: `${ms(sw.p50)} / ${ms(sw.p99)}` },
        { name: `POST /pods → ended, --sandbox none (${rounds} pods, interleaved) p50 / p99`, value: `${ms(sp.p50)} / ${ms(sp.p99)}` },
        { name: 'added by the walls, per pair, p50', value: ms(sa.p50), target: '< 40 ms', pass: sa.p50 < 40 },
        { name: 'added by the walls, per pair, p99', value: ms(sa.p99), target: '< 100 ms', pass: sa.p99 < 100 },
      ];
    } finally {
      await Promise.all(runners.map((r) => r.stop()));
      await server.stop();
    }
  } finally {
    removeTempDir(dataDir);
  }
}

export const run = () => runParts('walls', 'BENCH_WALLS_ONLY', { a: podStart });

runIfMain(import.meta.url, 'Pod walls: pod start with the walls against --sandbox none', run);
