/**
 * Loop bench: `npx tsx bench/loops.ts` (or `run()` from another script).
 *
 * (a) Cron fan-out. A real `drover serve` on a fresh temp data dir (SQLite, rate limit off, log
 *     level info, logs to files, the organization's active-pods quota at 500:
 *     DROVER_ORG_MAX_ACTIVE_PODS) with its local runner at DROVER_LOCAL_RUNNER_MAX_PODS=500 (or,
 *     with BENCH_LOOPS_RUNNERS=N, no local runner and N external `drover runner` processes sharing
 *     the 500 slots). 500 loops are created through the API (cron `* * * * *`, agent `shell`,
 *     prompt `true`, execution_mode direct, policy skip, max_concurrent_runs 1), early in a minute,
 *     so every one of them gets the same next_run_at: the next minute boundary M (checked in the
 *     database before M; the bench aborts if they differ). The server is left alone until M.
 *     For each of the 500 runs of slot M, the latency is `pods.started_at − loop_runs.scheduled_at`
 *     (scheduled_at = M exactly; started_at is the server's clock when the runner reported the
 *     agent process started), read from the database. Also broken down into cron pick-up
 *     (run created_at − M), launch (pod created_at − run created_at) and runner start
 *     (pod started_at − pod created_at). With the server's default lead
 *     (DROVER_CRON_PREPARE_AHEAD_MS, 30 s; BENCH_LOOPS_PREPARE_AHEAD_MS sets it, 0 turns it off)
 *     the runs are prepared before M (docs/decisions.md "Loops and runs"): their pods are created
 *     and their sandboxes built ahead, and each agent is let go at M. The pick-up is then negative
 *     (the run was recorded before its slot) and the runner start holds the wait for the slot; the
 *     latency counts from M all the same. The CPU row covers M − 1 s on, not the preparation.
 * (b) Manual trigger throughput with `skip`. Fresh server (local runner, default 4 slots); one loop
 *     without cron, policy skip, max_concurrent_runs 1, whose first run (`sleep 3600`) holds its
 *     only slot, so every further trigger is recorded as `skipped`. autocannon POST
 *     /loops/:slug/trigger (body `{}`), 50 connections, 2 s warm-up (discarded), then 10 s measured.
 *     Checks: every response 201; the database holds exactly that many `skipped` runs and the one
 *     `running`.
 *
 * Environment: BENCH_LOOPS (500), BENCH_LOOPS_RUNNERS (0 = local runner), BENCH_LOOPS_ONLY=a|b,
 * BENCH_LOOPS_PREPARE_AHEAD_MS (unset: the server's default lead),
 * BENCH_TRIGGER_DURATION (10), BENCH_TRIGGER_CONNECTIONS (50), BENCH_CPU_PROF=1,
 * BENCH_LOOPS_TRACE=1: (a)'s runners trace their pods' phases (DROVER_TRACE_POD_PHASES,
 * src/runner/pod-phases.ts) and the runner start is broken down further: dispatch (pod created →
 * the runner was asked to start it), the runner's own phases up to the spawn, and the report
 * (spawn, or for a prepared pod the go signal at its slot (phase `slot`) → the server recorded
 * started_at); docs/runners.md "What a pod start costs".
 */
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import {
  CpuWindow,
  ORG,
  ROOT,
  envInt,
  expect,
  helperProcesses,
  loadAvgText,
  log,
  makeTempDir,
  profileArgs,
  readMemoryKb,
  registrationToken,
  removeTempDir,
  round,
  runIfMain,
  runParts,
  runnerStatusCounts,
  sleep,
  startRunner,
  startServe,
  summary,
  waitUntil,
  type Child,
  type Row,
} from './harness.ts';

const ms = (n: number) => `${Math.round(n)} ms`;
const TRACE = process.env.BENCH_LOOPS_TRACE === '1';

/** One pod's `pod-phases` line (src/runner/pod-phases.ts): when its start was asked for, and each phase's end and own time. */
interface PhaseLine {
  at: number;
  ends: Map<string, number>;
  own: Map<string, number>;
}

/** The `pod-phases` lines of the given logs, by pod key. */
function phaseLines(files: string[]): Map<string, PhaseLine> {
  const found = new Map<string, PhaseLine>();
  for (const file of files) {
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    for (const [, key, at, rest] of text.matchAll(/pod-phases (\S+) at=(\d+)((?: [a-z-]+=[0-9.]+\(\+[0-9.]+\))*)/g)) {
      const line: PhaseLine = { at: Number(at), ends: new Map(), own: new Map() };
      for (const [, phase, end, took] of rest.matchAll(/ ([a-z-]+)=([0-9.]+)\(\+([0-9.]+)\)/g)) {
        line.ends.set(phase, Number(end));
        line.own.set(phase, Number(took));
      }
      found.set(key, line);
    }
  }
  return found;
}

/** The breakdown of the runner start from the phase trace of the slot's pods (BENCH_LOOPS_TRACE=1). */
function traceRows(rows: SlotRow[], traced: Map<string, PhaseLine>, slot: number): Row[] {
  const pods = rows.filter((r) => r.pod_key !== null && r.pod_started_at !== null && traced.has(r.pod_key));
  const line = (r: SlotRow) => traced.get(r.pod_key!)!;
  const p = (values: number[]) => {
    const s = summary(values);
    return `${ms(s.p50)} / ${ms(s.p99)} / ${ms(s.max)}`;
  };
  const phases = [...new Set(pods.flatMap((r) => [...line(r).own.keys()]))];
  return [
    { name: `(a) trace: pods traced`, value: `${pods.length} of ${rows.length}` },
    { name: '(a) trace p50 / p99 / max: dispatch (pod created → runner asked to start it)', value: p(pods.map((r) => line(r).at - r.pod_created_at!)) },
    { name: '(a) trace p50 / p99 / max: runner asked → spawned (its own phases)', value: p(pods.map((r) => line(r).ends.get('spawned') ?? NaN).filter(Number.isFinite)) },
    {
      // A pod prepared ahead of its slot reports once its agent was let go (`slot`), not at its spawn.
      name: '(a) trace p50 / p99 / max: report (spawned, or let go at the slot → server recorded started_at)',
      value: p(pods.filter((r) => line(r).ends.has('spawned')).map((r) => r.pod_started_at! - (line(r).at + (line(r).ends.get('slot') ?? line(r).ends.get('spawned')!)))),
    },
    {
      name: '(a) trace p50 / p99 / max: prepared pods let go (since the slot)',
      value: pods.some((r) => line(r).ends.has('slot')) ? p(pods.filter((r) => line(r).ends.has('slot')).map((r) => line(r).at + line(r).ends.get('slot')! - slot)) : 'none prepared',
    },
    { name: '(a) trace p50 / p99 / max: runner asked (since the slot)', value: p(pods.map((r) => line(r).at - slot)) },
    ...phases.map((phase) => ({ name: `(a) trace p50 / p99 / max of the phase's own time: ${phase}`, value: p(pods.map((r) => line(r).own.get(phase)).filter((v): v is number => v !== undefined)) })),
  ];
}

/** Runs `task` over `items` with at most `limit` at a time. */
async function pool<T>(items: T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await task(items[next++]);
    }),
  );
}

interface SlotRow {
  loop_id: number;
  pod_key: string | null;
  run_status: string;
  scheduled_at: number;
  run_created_at: number;
  error_message: string | null;
  pod_status: string | null;
  pod_created_at: number | null;
  pod_started_at: number | null;
}

async function cronFanOut(): Promise<Row[]> {
  const count = envInt('BENCH_LOOPS', 500);
  const externalRunners = envInt('BENCH_LOOPS_RUNNERS', 0, 0);
  const dataDir = makeTempDir('loops-cron');
  const runners: Child[] = [];
  try {
    const server = await startServe({
      name: 'drover-serve',
      dataDir,
      localRunner: externalRunners === 0,
      env: {
        // The organization may run as many pods at once as the runners have slots: with the default
        // quota (100 active pods, docs/decisions.md "Quotas") 400 of the 500 pods would wait in the
        // queue for the first ones to end, and the figure would measure the quota, not the start.
        DROVER_ORG_MAX_ACTIVE_PODS: String(count),
        ...(externalRunners === 0 ? { DROVER_LOCAL_RUNNER_MAX_PODS: String(count) } : {}),
        ...(TRACE ? { DROVER_TRACE_POD_PHASES: '1' } : {}),
        ...(process.env.BENCH_LOOPS_PREPARE_AHEAD_MS !== undefined ? { DROVER_CRON_PREPARE_AHEAD_MS: process.env.BENCH_LOOPS_PREPARE_AHEAD_MS } : {}),
      },
      nodeArgs: profileArgs('loops-cron'),
    });
    try {
      if (externalRunners > 0) {
        const token = await registrationToken(server);
        const slots = Math.ceil(count / externalRunners);
        for (let i = 1; i <= externalRunners; i++) runners.push(await startRunner({ name: `runner-${i}`, serverUrl: server.url, token, maxPods: slots, dir: dataDir, env: TRACE ? { DROVER_TRACE_POD_PHASES: '1' } : {} }));
        await waitUntil(`${externalRunners} runners online`, async () => (await runnerStatusCounts(server)).online === externalRunners, 30_000, 200);
      }
      const runnerText = externalRunners === 0 ? `local runner with ${count} slots` : `${externalRunners} external runners × ${Math.ceil(count / externalRunners)} slots`;
      const headers = { 'x-api-key': server.apiKey };

      // Create early in a minute, so all loops share the next boundary, and before the server's lead
      // (up to ~45 s) reaches it: the check below reads every loop's next_run_at as the slot.
      const second = (Date.now() % 60_000) / 1000;
      if (second > 5) {
        log(`(a) waiting ${round(62 - second, 0)} s for the start of the next minute before creating the loops …`);
        await sleep(62_000 - (Date.now() % 60_000));
      }
      log(`(a) server pid ${server.pid} (${runnerText}); creating ${count} loops …`);
      const t = performance.now();
      await pool(
        Array.from({ length: count }, (_, i) => i),
        4,
        async (i) => {
          await expect(201, server.url, 'POST', `${ORG}/loops`, {
            headers,
            json: {
              name: `Cron ${i}`,
              slug: `cron-${i}`,
              prompt_template: 'true',
              agent_slug: 'shell',
              execution_mode: 'direct',
              cron_expression: '* * * * *',
              concurrency_policy: 'skip',
              max_concurrent_runs: 1,
            },
          });
        },
      );
      const createSec = (performance.now() - t) / 1000;
      const db = new Database(server.sqliteFile, { readonly: true, fileMustExist: true });
      try {
        const due = db.prepare(`select next_run_at, count(*) as n from loops group by next_run_at`).all() as { next_run_at: number; n: number }[];
        if (due.length !== 1 || due[0].n !== count) {
          throw new Error(`the loops do not share one next_run_at (creation crossed a minute boundary?): ${JSON.stringify(due)}`);
        }
        const slot = due[0].next_run_at;
        if (slot % 60_000 !== 0 || slot <= Date.now()) throw new Error(`unexpected slot ${new Date(slot).toISOString()}`);
        log(`(a) ${count} loops created in ${round(createSec, 1)} s, all due at ${new Date(slot).toISOString()}; waiting ${round((slot - Date.now()) / 1000, 0)} s …`);

        await sleep(Math.max(0, slot - Date.now() - 1000));
        const pids: Record<string, number> = {
          server: server.pid,
          ...helperProcesses(server.pid, 'server'),
          ...Object.fromEntries(runners.map((r) => [r.name, r.pid])),
          ...Object.assign({}, ...runners.map((r) => helperProcesses(r.pid, r.name))),
        };
        const cpu = new CpuWindow(pids);
        const rssBefore = readMemoryKb(server.pid)?.rssKb ?? 0;
        let rssPeakKb = rssBefore;
        const read = db.prepare(
          `select r.loop_id, r.pod_key, r.status as run_status, r.scheduled_at, r.created_at as run_created_at, r.error_message,
                  p.status as pod_status, p.created_at as pod_created_at, p.started_at as pod_started_at
             from loop_runs r left join pods p on p.key = r.pod_key
            where r.scheduled_at = ?`,
        );
        let rows: SlotRow[] = [];
        const deadline = slot + 120_000;
        for (;;) {
          rows = read.all(slot) as SlotRow[];
          rssPeakKb = Math.max(rssPeakKb, readMemoryKb(server.pid)?.rssKb ?? 0);
          if (rows.length === count && rows.every((r) => r.pod_started_at !== null || ['failed', 'skipped', 'cancelled', 'timeout'].includes(r.run_status))) break;
          if (Date.now() > deadline) break;
          await sleep(50);
        }
        const allStartedAt = Date.now();
        const usage = cpu.end();
        const memory = readMemoryKb(server.pid);

        const started = rows.filter((r) => r.pod_started_at !== null);
        const latency = summary(started.map((r) => r.pod_started_at! - r.scheduled_at));
        const pickup = summary(rows.map((r) => r.run_created_at - r.scheduled_at));
        const launch = summary(rows.filter((r) => r.pod_created_at !== null).map((r) => r.pod_created_at! - r.run_created_at));
        const runnerStart = summary(started.map((r) => r.pod_started_at! - r.pod_created_at!));
        const statuses: Record<string, number> = {};
        for (const r of rows) statuses[r.run_status] = (statuses[r.run_status] ?? 0) + 1;
        const missing = count - started.length;
        const pickupSeconds = new Map<number, number>();
        for (const r of rows) {
          const s = Math.floor((r.run_created_at - slot) / 1000);
          pickupSeconds.set(s, (pickupSeconds.get(s) ?? 0) + 1);
        }
        const errors = [...new Set(rows.filter((r) => r.pod_started_at === null).map((r) => r.error_message ?? r.run_status))].slice(0, 3);
        let traced: Row[] = [];
        if (TRACE) {
          // A pod's line is written once it is torn down: wait for the started ones' (at most 60 s).
          const logs = [server.stdoutFile, server.stderrFile, ...runners.map((r) => r.stderrFile)];
          const keys = started.map((r) => r.pod_key!);
          const until = Date.now() + 60_000;
          let lines = phaseLines(logs);
          while (keys.some((k) => !lines.has(k)) && Date.now() < until) {
            await sleep(500);
            lines = phaseLines(logs);
          }
          traced = traceRows(rows, lines, slot);
          // The raw material, for reading further (bench/results/ is not committed).
          const out = path.join(ROOT, 'bench/results', `loops-trace-${new Date(slot).toISOString().replace(/[:.]/g, '-')}.json`);
          fs.mkdirSync(path.dirname(out), { recursive: true });
          fs.writeFileSync(out, JSON.stringify({ slot, rows, phases: Object.fromEntries([...lines].map(([k, l]) => [k, { at: l.at, ends: Object.fromEntries(l.ends) }])) }));
          log(`(a) trace written to ${out}`);
        }
        return [
          {
            name: `(a) cron slot → pod running p50 (${started.length} of ${count} runs, ${runnerText})`,
            value: ms(latency.p50),
          },
          { name: '(a) cron slot → pod running p99', value: ms(latency.p99), target: '< 2 s', pass: missing === 0 && latency.p99 < 2000 },
          { name: '(a) cron slot → pod running p90 / max / min', value: `${ms(latency.p90)} / ${ms(latency.max)} / ${ms(latency.min)}` },
          { name: '(a) breakdown min / p50 / p99: cron pick-up (run created − slot)', value: `${ms(pickup.min)} / ${ms(pickup.p50)} / ${ms(pickup.p99)}` },
          { name: '(a) breakdown p50 / p99: launch (pod created − run created)', value: `${ms(launch.p50)} / ${ms(launch.p99)}` },
          { name: '(a) breakdown p50 / p99: runner start (pod running − pod created)', value: `${ms(runnerStart.p50)} / ${ms(runnerStart.p99)}` },
          {
            name: '(a) runs recorded per second after the slot (s: runs)',
            value: [...pickupSeconds.entries()].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}: ${n}`).join(', '),
          },
          {
            name: '(a) runs of the slot by status / without a running pod',
            value: `${Object.entries(statuses).map(([k, v]) => `${k} ${v}`).join(', ')} / ${missing}${errors.length ? ` (${errors.join('; ')})` : ''}`,
            pass: missing === 0 && rows.length === count,
          },
          {
            name: '(a) CPU from slot − 1 s until every pod ran, % of one core',
            value: `${round(usage.seconds, 1)} s: ${Object.keys(pids)
              .map((label) => `${label} ${usage.pct[label]}%${/ launcher( \d+)?$/.test(label) ? ` (+ ${usage.childPct[label]}% agents)` : ''}`)
              .join(', ')}; bench ${usage.ownPct}%, other processes ${usage.otherPct}%`,
          },
          { name: '(a) server RSS before the slot / peak during / VmHWM', value: `${round(rssBefore / 1024, 1)} / ${round(rssPeakKb / 1024, 1)} / ${round((memory?.hwmKb ?? NaN) / 1024, 1)} MB` },
          { name: '(a) load average (1/5/15 min) slot − 1 s → all running', value: `${loadAvgText(usage.loadAvg.start)} → ${loadAvgText(usage.loadAvg.end)} (${round((allStartedAt - slot) / 1000, 1)} s after the slot)` },
          ...traced,
        ];
      } finally {
        db.close();
      }
    } finally {
      await Promise.all(runners.map((r) => r.stop()));
      await server.stop();
    }
  } finally {
    removeTempDir(dataDir);
  }
}

function cannon(url: string, headers: Record<string, string>, connections: number, duration: number): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ url, method: 'POST', headers, body: '{}', connections, duration, timeout: 10 }, (error, result) =>
      error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(result),
    );
  });
}

async function triggerThroughput(): Promise<Row[]> {
  const duration = envInt('BENCH_TRIGGER_DURATION', 10);
  const connections = envInt('BENCH_TRIGGER_CONNECTIONS', 50);
  const dataDir = makeTempDir('loops-trigger');
  try {
    const server = await startServe({ name: 'drover-serve', dataDir, localRunner: true, nodeArgs: profileArgs('loops-trigger') });
    try {
      const headers = { 'x-api-key': server.apiKey };
      await expect(201, server.url, 'POST', `${ORG}/loops`, {
        headers,
        json: { name: 'Hold', slug: 'hold', prompt_template: 'sleep 3600', agent_slug: 'shell', execution_mode: 'direct', concurrency_policy: 'skip', max_concurrent_runs: 1 },
      });
      const first = await expect<{ run: { id: number; status: string } }>(201, server.url, 'POST', `${ORG}/loops/hold/trigger`, { headers, json: {} });
      await waitUntil(
        'the holding run to be running',
        async () => (await expect<{ run: { status: string } }>(200, server.url, 'GET', `${ORG}/loops/hold/runs/${first.run.id}`, { headers })).run.status === 'running',
        30_000,
        50,
      );
      const probe = await expect<{ run: { status: string } }>(201, server.url, 'POST', `${ORG}/loops/hold/trigger`, { headers, json: {} });
      if (probe.run.status !== 'skipped') throw new Error(`a trigger while the slot is held was recorded as ${probe.run.status}, not skipped`);

      const url = `${server.url}${ORG}/loops/hold/trigger`;
      const requestHeaders = { ...headers, 'content-type': 'application/json' };
      log(`(b) server pid ${server.pid}; autocannon POST /loops/hold/trigger, ${connections} connections, 2 s warm-up + ${duration} s …`);
      const warm = await cannon(url, requestHeaders, connections, 2);
      const cpu = new CpuWindow({ server: server.pid });
      const result = await cannon(url, requestHeaders, connections, duration);
      const usage = cpu.end();
      const memory = readMemoryKb(server.pid);

      const codes = (r: autocannon.Result) => Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([code, s]) => [code, s.count ?? 0]));
      const measuredCodes = codes(result);
      const warmCodes = codes(warm);
      const all201 = (r: autocannon.Result, c: Record<string, number>) => r.errors === 0 && r.timeouts === 0 && Object.keys(c).every((k) => k === '201');
      const ok = all201(result, measuredCodes) && all201(warm, warmCodes);
      const answered201 = (measuredCodes['201'] ?? 0) + (warmCodes['201'] ?? 0);

      const db = new Database(server.sqliteFile, { readonly: true, fileMustExist: true });
      let byStatus: Record<string, number> = {};
      try {
        byStatus = Object.fromEntries((db.prepare(`select status, count(*) as n from loop_runs group by status`).all() as { status: string; n: number }[]).map((r) => [r.status, r.n]));
      } finally {
        db.close();
      }
      // The probe and every 201 of the two autocannon runs are skipped runs; the first run holds the
      // slot. Requests still in flight when a run's time is up reach the server (and record a
      // skipped run) but their answers are not counted: at most one per connection per run.
      const sent = (r: autocannon.Result) => (r.requests as { sent?: number }).sent ?? r.requests.total;
      const minSkipped = answered201 + 1;
      const maxSkipped = sent(result) + sent(warm) + 1;
      const consistent =
        byStatus.running === 1 && byStatus.skipped >= minSkipped && byStatus.skipped <= maxSkipped && Object.keys(byStatus).every((s) => s === 'running' || s === 'skipped');
      const rps = result.requests.average;
      return [
        { name: `(b) POST /loops/:slug/trigger, policy skip, ${connections} connections, ${duration} s`, value: `${Math.round(rps)} req/s`, target: '> 300 req/s', pass: rps > 300 },
        { name: '(b) latency p50 / p99 / max (autocannon)', value: `${result.latency.p50} / ${result.latency.p99} / ${result.latency.max} ms` },
        {
          name: '(b) responses: status codes measured (warm-up) / errors / timeouts',
          value: `${JSON.stringify(measuredCodes)} (${JSON.stringify(warmCodes)}) / ${result.errors + warm.errors} / ${result.timeouts + warm.timeouts}`,
          target: 'all 201',
          pass: ok,
        },
        {
          name: '(b) runs in the database by status',
          value: `${Object.entries(byStatus).map(([k, v]) => `${k} ${v}`).join(', ')} (expected running 1, skipped ${minSkipped}…${maxSkipped}: 201s answered + probe … requests sent + probe)`,
          pass: consistent,
        },
        { name: '(b) CPU during the measured run, % of one core', value: `server ${usage.pct.server}%, autocannon (bench) ${usage.ownPct}%, other processes ${usage.otherPct}%` },
        { name: '(b) server RSS / VmHWM at the end', value: `${round((memory?.rssKb ?? NaN) / 1024, 1)} / ${round((memory?.hwmKb ?? NaN) / 1024, 1)} MB` },
        { name: '(b) load average (1/5/15 min) start → end', value: `${loadAvgText(usage.loadAvg.start)} → ${loadAvgText(usage.loadAvg.end)}` },
      ];
    } finally {
      await server.stop();
    }
  } finally {
    removeTempDir(dataDir);
  }
}

export const run = () => runParts('loops', 'BENCH_LOOPS_ONLY', { a: cronFanOut, b: triggerThroughput });

runIfMain(import.meta.url, 'Loops: cron fan-out and manual trigger throughput', run);
