/**
 * Pod bench: `npx tsx bench/pods.ts` (or `run()` from another script).
 *
 * (a) Start latency. A real `drover serve` on a fresh temp data dir (embedded SQLite, its local
 *     runner with DROVER_LOCAL_RUNNER_MAX_PODS = the pod count, so a slot is always free; rate
 *     limit off; log level info, logs written to files). 200 `shell` pods with `PROMPT "true"` are
 *     created strictly one after another (concurrency 1): POST /pods, then GET /pods/:key every
 *     5 ms until the pod is no longer `initializing`, then the next POST.
 *     The latency reported against the targets is POST sent → `running` recorded by the server:
 *     `pods.started_at` (server clock, ms, set when the runner's pod_started is applied) minus
 *     the bench's Date.now() just before it sent the POST; both are the same machine's wall clock,
 *     so this covers the whole path (HTTP, auth, validation, placement, insert, wake-up, start_pod
 *     on the runner link, workspace, spawn of bash, pod_started back, the update) without the poll
 *     interval inflating it. Two cross-checks are reported: `started_at − created_at` (server-side
 *     only) and what the polling client saw (POST sent → first GET not `initializing`, which adds
 *     up to 5 ms of poll interval plus one GET). Measured twice in the same run, with the local
 *     runner's pods in the bubblewrap sandbox (the default) and with `--sandbox none`: the
 *     difference of the p50s is the sandbox's overhead.
 * (b) Sustained throughput. `drover serve --no-local-runner` and 4 `drover runner` processes
 *     with --max-pods 8 (32 slots). The driver keeps 32 pods in flight: it watches the pods it
 *     created in the server's SQLite file (read-only, every 5 ms, so completion detection adds no
 *     HTTP load to the server) and POSTs a new pod as soon as one ends. Pods completed per second
 *     over the measured window (after a warm-up) are counted from `pods.finished_at`.
 *
 * Environment: BENCH_PODS_COUNT (200), BENCH_PODS_WARMUP (5 s), BENCH_PODS_DURATION (30 s),
 * BENCH_PODS_ONLY=a|b, BENCH_CPU_PROF=1 (server under --cpu-prof; profiles in bench/results/profiles).
 */
import Database from 'better-sqlite3';
import {
  CpuWindow,
  ORG,
  call,
  expect,
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

const num = (name: string, fallback: number) => {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
};

const POD_BODY = { agent_slug: 'shell', agentfile_layer: 'PROMPT "true"' };
const ACTIVE = ['initializing', 'running', 'orphaned'];
const ms = (n: number) => `${round(n, 1)} ms`;

interface PodTimes {
  key: string;
  status: string;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
}

/** (a) for each sandbox of the local runner, in the same run: the rows, and the p50 to compare. */
async function startLatencies(): Promise<Row[]> {
  const sandboxed = await startLatency('bwrap');
  const plain = await startLatency('none');
  const overhead = sandboxed.p50 - plain.p50;
  return [
    ...sandboxed.rows,
    ...plain.rows,
    { name: '(a) sandbox overhead, p50 with bwrap − p50 with --sandbox none', value: ms(overhead), target: '< 30 ms', pass: overhead < 30 },
  ];
}

async function startLatency(sandbox: 'bwrap' | 'none'): Promise<{ rows: Row[]; p50: number }> {
  const count = num('BENCH_PODS_COUNT', 200);
  const dataDir = makeTempDir('pods-latency');
  try {
    const server = await startServe({
      name: 'drover-serve',
      dataDir,
      localRunner: true,
      env: { DROVER_LOCAL_RUNNER_MAX_PODS: String(Math.min(1000, Math.max(8, count))), DROVER_LOCAL_RUNNER_SANDBOX: sandbox },
      nodeArgs: profileArgs(`pods-latency-${sandbox}`),
    });
    const headers = { 'x-api-key': server.apiKey };
    const sent: { key: string; sentAt: number; seenAt: number; seenStatus: string; polls: number }[] = [];
    let rssPeakKb = 0;
    log(`(a, sandbox ${sandbox}) server pid ${server.pid} at ${server.url}; creating ${count} shell pods one after another …`);
    const cpu = new CpuWindow({ server: server.pid });
    try {
      for (let i = 0; i < count; i++) {
        const sentAt = Date.now();
        const created = await expect<{ pod: { pod_key: string } }>(201, server.url, 'POST', `${ORG}/pods`, { headers, json: POD_BODY });
        const key = created.pod.pod_key;
        let status = 'initializing';
        let polls = 0;
        const deadline = Date.now() + 30_000;
        while (status === 'initializing') {
          await sleep(5);
          const answer = await call<{ pod: { status: string } }>(server.url, 'GET', `${ORG}/pods/${key}`, { headers });
          if (answer.status !== 200) throw new Error(`GET /pods/${key} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
          status = answer.body.pod.status;
          polls++;
          if (Date.now() > deadline) throw new Error(`pod ${key} did not leave initializing within 30 s`);
        }
        sent.push({ key, sentAt, seenAt: Date.now(), seenStatus: status, polls });
        if (i % 20 === 19) {
          rssPeakKb = Math.max(rssPeakKb, readMemoryKb(server.pid)?.rssKb ?? 0);
          log(`  ${i + 1} / ${count}`);
        }
      }
      const usage = cpu.end();
      // Let the last pods end, so every outcome is known.
      const db = new Database(server.sqliteFile, { readonly: true, fileMustExist: true });
      let rows: PodTimes[] = [];
      try {
        const read = db.prepare(`select key, status, created_at, started_at, finished_at from pods`);
        await waitUntil('every pod to end', () => (read.all() as PodTimes[]).every((p) => !ACTIVE.includes(p.status)), 60_000, 100);
        rows = read.all() as PodTimes[];
      } finally {
        db.close();
      }
      const memory = readMemoryKb(server.pid);
      const byKey = new Map(rows.map((r) => [r.key, r]));
      const endToEnd: number[] = [];
      const serverSide: number[] = [];
      const observed: number[] = [];
      const outcomes: Record<string, number> = {};
      for (const s of sent) {
        const row = byKey.get(s.key);
        if (!row) throw new Error(`pod ${s.key} is not in the database`);
        outcomes[row.status] = (outcomes[row.status] ?? 0) + 1;
        observed.push(s.seenAt - s.sentAt);
        if (row.started_at === null) continue;
        endToEnd.push(row.started_at - s.sentAt);
        serverSide.push(row.started_at - row.created_at);
      }
      const e2e = summary(endToEnd);
      const srv = summary(serverSide);
      const obs = summary(observed);
      const sawCompleted = sent.filter((s) => s.seenStatus !== 'running').length;
      const first = endToEnd[0];
      const result: Row[] = [
        {
          name: `(a, ${sandbox}) pod start latency p50 (POST sent → running recorded; ${e2e.n} pods, sequential)`,
          value: ms(e2e.p50),
          target: '< 150 ms',
          pass: e2e.n === count && e2e.p50 < 150,
        },
        { name: `(a, ${sandbox}) pod start latency p99`, value: ms(e2e.p99), target: '< 500 ms', pass: e2e.n === count && e2e.p99 < 500 },
        { name: `(a, ${sandbox}) pod start latency p90 / max / first pod`, value: `${ms(e2e.p90)} / ${ms(e2e.max)} / ${ms(first)}` },
        { name: `(a, ${sandbox}) server side only (started_at − created_at) p50 / p99`, value: `${ms(srv.p50)} / ${ms(srv.p99)}` },
        {
          name: `(a, ${sandbox}) client-observed (5 ms GET polling) p50 / p99`,
          value: `${ms(obs.p50)} / ${ms(obs.p99)} (${sawCompleted} of ${count} polls saw the pod already ended)`,
        },
        { name: `(a, ${sandbox}) pod outcomes`, value: Object.entries(outcomes).map(([k, v]) => `${k} ${v}`).join(', '), pass: outcomes.completed === count },
        {
          name: `(a, ${sandbox}) server CPU during the run (incl. its local runner; + bash children it reaped)`,
          value: `${usage.pct.server}% + ${usage.childPct.server}% of one core over ${round(usage.seconds, 1)} s; bench ${usage.ownPct}%, other processes ${usage.otherPct}%`,
        },
        { name: `(a, ${sandbox}) server RSS (sampled peak / VmHWM)`, value: `${round(Math.max(rssPeakKb, memory?.rssKb ?? 0) / 1024, 1)} MB / ${round((memory?.hwmKb ?? NaN) / 1024, 1)} MB` },
        { name: `(a, ${sandbox}) load average (1/5/15 min) start → end`, value: `${loadAvgText(usage.loadAvg.start)} → ${loadAvgText(usage.loadAvg.end)}` },
      ];
      return { rows: result, p50: e2e.p50 };
    } finally {
      await server.stop();
    }
  } finally {
    removeTempDir(dataDir);
  }
}

async function throughput(): Promise<Row[]> {
  const RUNNERS = 4;
  const SLOTS = 8;
  const target = RUNNERS * SLOTS;
  const warmupMs = num('BENCH_PODS_WARMUP', 5) * 1000;
  const durationMs = num('BENCH_PODS_DURATION', 30) * 1000;
  const dataDir = makeTempDir('pods-throughput');
  const runners: Child[] = [];
  try {
    const server = await startServe({ name: 'drover-serve', dataDir, localRunner: false, nodeArgs: profileArgs('pods-throughput') });
    try {
      const token = await registrationToken(server);
      for (let i = 1; i <= RUNNERS; i++) runners.push(await startRunner({ name: `runner-${i}`, serverUrl: server.url, token, maxPods: SLOTS, dir: dataDir }));
      await waitUntil(`${RUNNERS} runners online`, async () => (await runnerStatusCounts(server)).online === RUNNERS, 30_000, 200);
      log(`(b) server pid ${server.pid}, ${RUNNERS} runners × ${SLOTS} slots online; keeping ${target} pods in flight for ${(warmupMs + durationMs) / 1000} s …`);

      const headers = { 'x-api-key': server.apiKey };
      const db = new Database(server.sqliteFile, { readonly: true, fileMustExist: true });
      const inFlight = new Set<string>();
      let posting = 0;
      let created = 0;
      const postMs: number[] = [];
      const refused: Record<string, number> = {};
      let backoffUntil = 0;
      const post = async () => {
        posting++;
        try {
          const t = performance.now();
          const answer = await call<{ pod: { pod_key: string } }>(server.url, 'POST', `${ORG}/pods`, { headers, json: POD_BODY });
          if (Date.now() >= windowStart && Date.now() < windowEnd) postMs.push(performance.now() - t);
          if (answer.status === 201) {
            inFlight.add(answer.body.pod.pod_key);
            created++;
          } else {
            refused[answer.status] = (refused[answer.status] ?? 0) + 1;
            backoffUntil = Date.now() + 20;
          }
        } finally {
          posting--;
        }
      };
      const activeCount = db.prepare(`select count(*) as n from pods where status in ('initializing', 'running', 'orphaned')`);
      const ended = (keys: string[]) =>
        db.prepare(`select key from pods where key in (${keys.map(() => '?').join(',')}) and status not in ('initializing', 'running', 'orphaned')`).all(...keys) as { key: string }[];

      const t0 = Date.now();
      const windowStart = t0 + warmupMs;
      const windowEnd = windowStart + durationMs;
      let cpu: CpuWindow | null = null;
      let usage: ReturnType<CpuWindow['end']> | null = null;
      const busySamples: number[] = [];
      const pids = { server: server.pid, ...Object.fromEntries(runners.map((r) => [r.name, r.pid])) };
      try {
        while (Date.now() < windowEnd) {
          const now = Date.now();
          if (cpu === null && now >= windowStart) cpu = new CpuWindow(pids);
          if (inFlight.size > 0) for (const { key } of ended([...inFlight])) inFlight.delete(key);
          if (now >= backoffUntil) for (let free = target - inFlight.size - posting; free > 0; free--) void post();
          if (cpu !== null) busySamples.push((activeCount.get() as { n: number }).n);
          await sleep(5);
        }
        usage = cpu?.end() ?? null;
        // Stop creating; let what is in flight end.
        await waitUntil('in-flight POSTs', () => posting === 0, 30_000, 10);
        await waitUntil('in-flight pods to end', () => (inFlight.size === 0 ? true : (ended([...inFlight]).forEach(({ key }) => inFlight.delete(key)), inFlight.size === 0)), 60_000, 50);
        const rows = db.prepare(`select key, status, created_at, started_at, finished_at from pods`).all() as PodTimes[];
        const inWindow = rows.filter((r) => r.finished_at !== null && r.finished_at >= windowStart && r.finished_at < windowEnd);
        const completed = inWindow.filter((r) => r.status === 'completed').length;
        const notCompleted = rows.filter((r) => r.status !== 'completed');
        const lifetime = summary(inWindow.filter((r) => r.started_at !== null).map((r) => r.finished_at! - r.created_at));
        const startDelay = summary(inWindow.filter((r) => r.started_at !== null).map((r) => r.started_at! - r.created_at));
        const busy = summary(busySamples);
        const seconds = durationMs / 1000;
        const perRunner = db
          .prepare(`select runner_id, count(*) as n from pods where finished_at >= ? and finished_at < ? group by runner_id order by runner_id`)
          .all(windowStart, windowEnd) as { runner_id: number; n: number }[];
        db.close();
        const cpuText = usage
          ? `server ${usage.pct.server}%, runners ${runners.map((r) => `${usage!.pct[r.name]}%`).join(' / ')} (their bash children ${runners.map((r) => `${usage!.childPct[r.name]}%`).join(' / ')}), bench ${usage.ownPct}%, other processes ${usage.otherPct}% (machine ${usage.machinePct}% of one core, 2 cores = 200%)`
          : 'n/a';
        return [
          {
            name: `(b) sustained throughput, ${RUNNERS} runners × ${SLOTS} slots, ${seconds} s after ${warmupMs / 1000} s warm-up`,
            value: `${round(completed / seconds, 1)} pods/s completed (${completed} pods)`,
          },
          { name: '(b) slots busy (server view, sampled every ~5 ms) mean / p50 of 32', value: `${round(busy.mean, 1)} / ${busy.p50}` },
          { name: '(b) pod lifetime created → finished p50 / p99 (window)', value: `${ms(lifetime.p50)} / ${ms(lifetime.p99)}` },
          { name: '(b) created → running p50 / p99 (window, under load)', value: `${ms(startDelay.p50)} / ${ms(startDelay.p99)}` },
          { name: '(b) POST /pods response time under this load p50 / p99 (window)', value: `${ms(summary(postMs).p50)} / ${ms(summary(postMs).p99)}` },
          { name: '(b) pods completed per runner (window)', value: perRunner.map((r) => `#${r.runner_id}: ${r.n}`).join(', ') },
          {
            name: '(b) POST /pods refused / pods not completed (whole run)',
            value: `${JSON.stringify(refused)} / ${notCompleted.length} of ${created}${notCompleted.length ? ` (${[...new Set(notCompleted.map((r) => r.status))].join(', ')})` : ''}`,
            pass: Object.keys(refused).length === 0 && notCompleted.length === 0,
          },
          { name: '(b) CPU over the window, % of one core', value: cpuText },
          { name: '(b) load average (1/5/15 min) window start → end', value: usage ? `${loadAvgText(usage.loadAvg.start)} → ${loadAvgText(usage.loadAvg.end)}` : 'n/a' },
        ];
      } finally {
        if (db.open) db.close();
      }
    } finally {
      await Promise.all(runners.map((r) => r.stop()));
      await server.stop();
    }
  } finally {
    removeTempDir(dataDir);
  }
}

export const run = () => runParts('pods', 'BENCH_PODS_ONLY', { a: startLatencies, b: throughput });

runIfMain(import.meta.url, 'Pods: start latency and throughput', run);
