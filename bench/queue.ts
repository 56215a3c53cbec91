/**
 * Queue and agent-overhead bench: `npx tsx bench/queue.ts` (`npm run bench:queue`).
 *
 * (a) The pod queue (docs/decisions.md "Runners and pods"). A real `drover serve --no-local-runner`
 *     on a fresh SQLite data dir and 2 `drover runner` processes with --max-pods 4 (8 slots, default
 *     bubblewrap sandbox). 200 `shell` pods (`PROMPT "true"`) are POSTed at once (200 requests in
 *     flight together); 8 get a slot, the rest are `queued`. The bench then reads the server's
 *     SQLite file (read-only, every 20 ms) until every pod has ended. Reported:
 *     - all complete, none lost: 200 answers 201, 200 rows with those keys, all `completed`;
 *     - start order: the queue's order is the server's (`created_at`, `id`) order of the pods (the
 *       order in which it accepted the 200 concurrent POSTs); each pod's start is `started_at`. A
 *       placement pass may hand out up to 8 free slots at once, to two runners that start their
 *       agents in parallel, so pods placed in one pass may start a few ms apart in any order:
 *       "FIFO" holds when no pod starts more than 7 places (slots − 1) away from its place in the
 *       queue (max displacement < 8). The number of inverted pairs is reported too;
 *     - submit → running of the last pod to start: its `started_at` minus the bench's Date.now()
 *       just before it sent the first POST (same machine, same wall clock).
 * (b) Drover's overhead around a real agent CLI: Claude Code (the published CLI from the test
 *     cache, test/helpers/agent-clis.ts) answering the Anthropic stand-in of test/helpers/
 *     model-mocks on loopback, run from 30 pods one after another by a runner with the default
 *     sandbox. The runner's PATH starts with a wrapper named `claude` that writes
 *     `drover-bench cli-start <date +%s%N>` to stderr as its first command, runs the real CLI, then
 *     writes `drover-bench cli-exit <date +%s%N>` right after it returned, and exits with its code.
 *     The instants, all on this machine's wall clock:
 *     - pod `running`: `pods.started_at` (the server applying the runner's pod_started, sent when the
 *       sandbox process was spawned);
 *     - CLI process started: the wrapper's `cli-start` (bwrap has set up the sandbox and exec'ed the
 *       wrapper; the wrapper's own start, one bash, is counted as Drover's);
 *     - CLI exit: the wrapper's `cli-exit`;
 *     - pod `completed`: `pods.finished_at` (the server applying pod_exited, sent after the runner
 *       read the CLI's results and removed the pod's workspace and HOME).
 *     Overheads: CLI started − running (negative when the sandbox started the CLI before the server
 *     had applied pod_started), and completed − CLI exit. Target p50 < 50 ms each.
 *
 * Environment: BENCH_QUEUE_PODS (200), BENCH_QUEUE_CLI_PODS (30), BENCH_QUEUE_ONLY=a|b.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { AGENT_CLIS, ensureAgentClis, writeAgentHome } from '../test/helpers/agent-clis.ts';
import { startModelMock } from '../test/helpers/model-mocks/server.ts';
import {
  CpuWindow,
  ORG,
  call,
  expect,
  helperProcesses,
  launchersSum,
  loadAvgText,
  log,
  makeTempDir,
  registrationToken,
  removeTempDir,
  round,
  runIfMain,
  runParts,
  runnerStatusCounts,
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
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
};
const ms = (n: number) => `${round(n, 1)} ms`;
const ENDED = ['completed', 'failed', 'terminated'];

interface PodTimes {
  id: number;
  key: string;
  status: string;
  runner_id: number | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
}

/** Reads pods from the server's SQLite file until every one of `keys` has ended. */
async function waitForEnd(sqliteFile: string, keys: ReadonlySet<string>, timeoutMs: number): Promise<PodTimes[]> {
  const db = new Database(sqliteFile, { readonly: true, fileMustExist: true });
  try {
    const read = db.prepare('select id, key, status, runner_id, created_at, started_at, finished_at from pods');
    let rows: PodTimes[] = [];
    await waitUntil(
      'every pod to end',
      () => {
        rows = (read.all() as PodTimes[]).filter((r) => keys.has(r.key));
        return rows.length === keys.size && rows.every((r) => ENDED.includes(r.status));
      },
      timeoutMs,
      20,
    );
    return rows;
  } finally {
    db.close();
  }
}

async function queue(): Promise<Row[]> {
  const count = num('BENCH_QUEUE_PODS', 200);
  const RUNNERS = 2;
  const SLOTS = 4;
  const dataDir = makeTempDir('queue');
  const runners: Child[] = [];
  try {
    const server = await startServe({ name: 'drover-serve', dataDir, localRunner: false });
    try {
      const token = await registrationToken(server);
      for (let i = 1; i <= RUNNERS; i++) runners.push(await startRunner({ name: `runner-${i}`, serverUrl: server.url, token, maxPods: SLOTS, dir: dataDir }));
      await waitUntil(`${RUNNERS} runners online`, async () => (await runnerStatusCounts(server)).online === RUNNERS, 30_000, 100);
      log(`(a) ${RUNNERS} runners × ${SLOTS} slots online; submitting ${count} shell pods at once …`);
      const headers = { 'x-api-key': server.apiKey };
      const launchers = Object.assign({}, ...runners.map((r) => helperProcesses(r.pid, r.name))) as Record<string, number>;
      const cpu = new CpuWindow({ server: server.pid, ...Object.fromEntries(runners.map((r) => [r.name, r.pid])), ...launchers });
      const firstSent = Date.now();
      const answers = await Promise.all(
        Array.from({ length: count }, () => call<{ pod: { pod_key: string; status: string } }>(server.url, 'POST', `${ORG}/pods`, { headers, json: { agent_slug: 'shell', agentfile_layer: 'PROMPT "true"' } })),
      );
      const accepted = answers.filter((a) => a.status === 201);
      const keys = new Set(accepted.map((a) => a.body.pod.pod_key));
      const queuedAtOnce = accepted.filter((a) => a.body.pod.status === 'queued').length;
      const rows = await waitForEnd(server.sqliteFile, keys, 180_000);
      const usage = cpu.end();

      const completed = rows.filter((r) => r.status === 'completed').length;
      const inQueueOrder = [...rows].sort((x, y) => x.created_at - y.created_at || x.id - y.id);
      const place = new Map(inQueueOrder.map((r, i) => [r.key, i]));
      const inStartOrder = rows.filter((r) => r.started_at !== null).sort((x, y) => x.started_at! - y.started_at! || place.get(x.key)! - place.get(y.key)!);
      let displacement = 0;
      inStartOrder.forEach((r, i) => (displacement = Math.max(displacement, Math.abs(i - place.get(r.key)!))));
      let inversions = 0;
      for (let i = 0; i < inQueueOrder.length; i++) {
        for (let j = i + 1; j < inQueueOrder.length; j++) if (inQueueOrder[j].started_at! < inQueueOrder[i].started_at!) inversions++;
      }
      const lastStart = Math.max(...rows.map((r) => r.started_at ?? Number.NaN));
      const lastFinish = Math.max(...rows.map((r) => r.finished_at ?? Number.NaN));
      const waits = summary(rows.filter((r) => r.started_at !== null).map((r) => r.started_at! - r.created_at));
      const perRunner = new Map<number | null, number>();
      for (const r of rows) perRunner.set(r.runner_id, (perRunner.get(r.runner_id) ?? 0) + 1);
      const seconds = (lastFinish - firstSent) / 1000;
      return [
        {
          name: `(a) ${count} pods POSTed at once to ${RUNNERS} runners × ${SLOTS} slots: answered 201 / queued at once / completed / rows found`,
          value: `${accepted.length} / ${queuedAtOnce} / ${completed} / ${rows.length}`,
          target: `${count} completed, none lost`,
          pass: accepted.length === count && completed === count && rows.length === count,
        },
        {
          name: '(a) start order vs queue order (created_at, id): max displacement / inverted pairs',
          value: `${displacement} places / ${inversions} of ${(count * (count - 1)) / 2} pairs`,
          target: `FIFO: displacement < ${RUNNERS * SLOTS}`,
          pass: displacement < RUNNERS * SLOTS,
        },
        { name: '(a) first POST sent → last pod running', value: ms(lastStart - firstSent) },
        { name: '(a) first POST sent → last pod completed; throughput', value: `${ms(lastFinish - firstSent)}; ${round(count / seconds, 1)} pods/s` },
        { name: '(a) wait in the queue (created → running) p50 / p99 / max', value: `${ms(waits.p50)} / ${ms(waits.p99)} / ${ms(waits.max)}` },
        { name: '(a) pods per runner', value: [...perRunner].map(([id, n]) => `#${id}: ${n}`).join(', ') },
        {
          name: '(a) CPU, % of one core',
          value: `server ${usage.pct.server}%, runners ${runners.map((r) => `${usage.pct[r.name]}%`).join(' / ')}, their launchers ${Object.keys(launchers).map((l) => `${usage.pct[l]}%`).join(' / ')} (+ the agents they reaped ${Object.keys(launchers).map((l) => `${usage.childPct[l]}%`).join(' / ')}), other processes ${usage.otherPct}% over ${round(usage.seconds, 1)} s`,
        },
        { name: '(a) load average (1/5/15 min) start → end', value: `${loadAvgText(usage.loadAvg.start)} → ${loadAvgText(usage.loadAvg.end)}` },
      ];
    } finally {
      await Promise.all(runners.map((r) => r.stop()));
      await server.stop();
    }
  } finally {
    removeTempDir(dataDir);
  }
}

const WRAPPER = (real: string) => `#!/bin/bash
echo "drover-bench cli-start $(date +%s%N)" >&2
"${real}" "$@"
code=$?
echo "drover-bench cli-exit $(date +%s%N)" >&2
exit $code
`;

async function cliOverhead(): Promise<Row[]> {
  const count = num('BENCH_QUEUE_CLI_PODS', 30);
  const clis = await ensureAgentClis(log);
  const mock = await startModelMock();
  const key = 'sk-bench-model-key';
  mock.requiredKey = key;
  // Not under /tmp: the real-agent tests keep agents' HOMEs out of the temp directory too.
  const dataDir = fs.mkdtempSync(path.join('/var/tmp', 'drover-bench-cli-'));
  let runner: Child | null = null;
  try {
    const wrapperDir = path.join(dataDir, 'wrapper');
    fs.mkdirSync(wrapperDir, { recursive: true });
    fs.writeFileSync(path.join(wrapperDir, 'claude'), WRAPPER(clis.executables['claude-code']), { mode: 0o755 });
    const server = await startServe({ name: 'drover-serve', dataDir, localRunner: false });
    try {
      runner = await startRunner({
        name: 'runner-cli',
        serverUrl: server.url,
        token: await registrationToken(server),
        maxPods: 1,
        dir: dataDir,
        env: { PATH: [wrapperDir, clis.binDir, path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':') },
        // The relay forwards to the loopback stand-in only when the operator allows it.
        allowHosts: [new URL(mock.url).host],
        beforeStart: (workDir) => {
          writeAgentHome(path.join(workDir, 'agent-home'), mock.url);
          fs.writeFileSync(path.join(workDir, 'credentials.json'), JSON.stringify({ ANTHROPIC_API_KEY: key }), { mode: 0o600 });
        },
      });
      await waitUntil('the runner online', async () => (await runnerStatusCounts(server)).online === 1, 30_000, 100);
      const headers = { 'x-api-key': server.apiKey };
      const layer = ['CREDENTIAL ANTHROPIC_API_KEY', `ENV ANTHROPIC_BASE_URL "${mock.url}"`, 'PROMPT "Say hello."'].join('\n');
      log(`(b) ${count} Claude Code pods one after another (wrapper ${path.join(wrapperDir, 'claude')}) …`);
      const startGaps: number[] = [];
      const endGaps: number[] = [];
      const cliTimes: number[] = [];
      const outcomes: Record<string, number> = {};
      const cpu = new CpuWindow({ server: server.pid, runner: runner.pid, ...helperProcesses(runner.pid, 'runner') });
      for (let i = 0; i < count; i++) {
        const created = await expect<{ pod: { pod_key: string } }>(201, server.url, 'POST', `${ORG}/pods`, { headers, json: { agent_slug: 'claude-code', agentfile_layer: layer } });
        const podKey = created.pod.pod_key;
        const [row] = await waitForEnd(server.sqliteFile, new Set([podKey]), 120_000);
        outcomes[row.status] = (outcomes[row.status] ?? 0) + 1;
        const output = (await expect<{ output: string }>(200, server.url, 'GET', `${ORG}/pods/${podKey}/output`, { headers })).output;
        const at = (what: string) => {
          const match = new RegExp(`drover-bench ${what} (\\d+)`).exec(output);
          return match ? Number(BigInt(match[1]) / 1000n) / 1000 : Number.NaN;
        };
        const [cliStart, cliExit] = [at('cli-start'), at('cli-exit')];
        if (row.status !== 'completed' || !Number.isFinite(cliStart) || !Number.isFinite(cliExit) || row.started_at === null || row.finished_at === null) {
          log(`  pod ${podKey} ${row.status}: ${output.slice(-500)}`);
          continue;
        }
        startGaps.push(cliStart - row.started_at);
        endGaps.push(row.finished_at - cliExit);
        cliTimes.push(cliExit - cliStart);
        if (i % 10 === 9) log(`  ${i + 1} / ${count}`);
      }
      const usage = cpu.end();
      const start = summary(startGaps);
      const end = summary(endGaps);
      const cli = summary(cliTimes);
      return [
        {
          name: `(b) pod running → CLI process started (Claude Code ${AGENT_CLIS['claude-code'].version}, ${start.n} pods) p50`,
          value: ms(start.p50),
          target: '< 50 ms',
          pass: start.n === count && start.p50 < 50,
        },
        { name: '(b) pod running → CLI process started p90 / min / max', value: `${ms(start.p90)} / ${ms(start.min)} / ${ms(start.max)}` },
        { name: '(b) CLI exit → pod completed p50', value: ms(end.p50), target: '< 50 ms', pass: end.n === count && end.p50 < 50 },
        { name: '(b) CLI exit → pod completed p90 / min / max', value: `${ms(end.p90)} / ${ms(end.min)} / ${ms(end.max)}` },
        { name: '(b) the CLI itself, start → exit, p50 / p90 (for scale)', value: `${ms(cli.p50)} / ${ms(cli.p90)}` },
        { name: '(b) pod outcomes', value: Object.entries(outcomes).map(([k, v]) => `${k} ${v}`).join(', '), pass: outcomes.completed === count },
        {
          name: '(b) CPU, % of one core',
          value: `server ${usage.pct.server}%, runner ${usage.pct.runner}%, its launchers ${launchersSum(usage.pct, 'runner')}% (+ the agents they reaped ${launchersSum(usage.childPct, 'runner')}%), other processes ${usage.otherPct}% over ${round(usage.seconds, 1)} s`,
        },
        { name: '(b) load average (1/5/15 min) start → end', value: `${loadAvgText(usage.loadAvg.start)} → ${loadAvgText(usage.loadAvg.end)}` },
      ];
    } finally {
      await runner?.stop();
      await server.stop();
    }
  } finally {
    await mock.close();
    removeTempDir(dataDir);
  }
}

export const run = () => runParts('queue', 'BENCH_QUEUE_ONLY', { a: queue, b: cliOverhead });

runIfMain(import.meta.url, 'Pod queue and agent-CLI overhead', run);
