/**
 * Tenant isolation bench: `npx tsx bench/isolation.ts` (or `run()` from another script).
 *
 * One `drover serve` (embedded SQLite, rate limit off, log level info, logs to files, no local
 * runner). Organization A (`default`) has 1,000 tickets; organization B (`flood`) has one
 * `drover runner` (4 slots) which, with its launcher and agents, runs at nice 19: it stands in for
 * a runner machine of its own, so that the figure is what B's flood costs the server. A steady load reads A's ticket list: autocannon `GET /tickets?limit=20`
 * at a fixed rate (BENCH_ISOLATION_RATE req/s, default 250, over 4 connections), every response
 * time recorded with when it arrived.
 *
 * 1. Quiet: the load alone for BENCH_ISOLATION_QUIET seconds (10), after a 3 s warm-up.
 * 2. Flood within the quota: B runs `shell` pods, one after another, each printing
 *    BENCH_ISOLATION_FLOOD_MB (200) MiB of text as fast as it can, until BENCH_ISOLATION_FLOOD_SECONDS
 *    (10) of flooding have been measured, under the default DROVER_POD_OUTPUT_BYTES_PER_SEC (1 MiB/s):
 *    B's runner drops the excess as it reads it; the server stores what the quota allows.
 * 3. The same with B's output quota off (PATCH /admin/orgs/flood/quotas pod_output_bytes_per_sec 0,
 *    once B's runner has logged the change): every byte crosses the link and is stored (appended,
 *    the kept 1 MiB tail trimmed behind it).
 *
 * During the floods the load runs on, and only the responses that arrived while one of B's pods
 * was running (from its `started_at` to its `finished_at`, server clock = this machine's clock) are
 * counted. The figure: A's p99 during each kind of flood against the quiet p99 (target ≤ 1.5×). CPU
 * of the server, of B's runner, its launcher and agents, and of everything else on the machine is
 * reported per phase, with the load average.
 *
 * Environment: BENCH_ISOLATION_RATE (250), BENCH_ISOLATION_CONNECTIONS (4), BENCH_ISOLATION_QUIET (10),
 * BENCH_ISOLATION_FLOOD_MB (200), BENCH_ISOLATION_FLOOD_SECONDS (10), BENCH_CPU_PROF=1.
 */
import os from 'node:os';
import autocannon from 'autocannon';
import {
  CpuWindow,
  ORG,
  envInt,
  expect,
  helperProcesses,
  launchersSum,
  loadAvgText,
  log,
  machineLine,
  makeTempDir,
  profileArgs,
  removeTempDir,
  round,
  runIfMain,
  sleep,
  startRunner,
  startServe,
  summary,
  waitUntil,
  type Row,
  type Server,
} from './harness.ts';

const ms = (n: number) => `${round(n, 1)} ms`;

interface Sample {
  at: number;
  ms: number;
}

/** A steady load on A's ticket list; every 2xx response time with its arrival time. */
class Load {
  private readonly samples: Sample[] = [];
  private instance: autocannon.Instance | null = null;
  private done: Promise<void> | null = null;
  non2xx = 0;

  constructor(
    private readonly server: Server,
    private readonly rate: number,
    private readonly connections: number,
  ) {}

  start(maxSeconds: number): void {
    this.done = new Promise((resolve, reject) => {
      this.instance = autocannon(
        {
          url: `${this.server.url}${ORG}/tickets?limit=20`,
          headers: { 'x-api-key': this.server.apiKey },
          connections: this.connections,
          overallRate: this.rate,
          duration: maxSeconds,
          timeout: 10,
        },
        (error) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve()),
      );
      this.instance.on('response', (_client, statusCode, _bytes, responseTime) => {
        if (statusCode >= 200 && statusCode < 300) this.samples.push({ at: Date.now(), ms: responseTime });
        else this.non2xx++;
      });
    });
  }

  /** Waits for the load to run its course. */
  async finished(): Promise<void> {
    await this.done;
  }

  /** Ends the load now. */
  async stop(): Promise<void> {
    this.instance?.stop();
    await this.done;
  }

  between(from: number, to: number): number[] {
    return this.samples.filter((s) => s.at >= from && s.at <= to).map((s) => s.ms);
  }
}

async function seedTickets(server: Server, count: number): Promise<void> {
  const headers = { 'x-api-key': server.apiKey };
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await expect(201, server.url, 'POST', `${ORG}/tickets`, { headers, json: { type: 'task', title: `Ticket ${i}`, labels: [`l${i % 7}`] } });
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

export async function run(): Promise<{ rows: Row[] }> {
  const rate = envInt('BENCH_ISOLATION_RATE', 250);
  const connections = envInt('BENCH_ISOLATION_CONNECTIONS', 4);
  const quietSec = envInt('BENCH_ISOLATION_QUIET', 10);
  const floodMb = envInt('BENCH_ISOLATION_FLOOD_MB', 200);
  const floodSec = envInt('BENCH_ISOLATION_FLOOD_SECONDS', 10);
  log(`isolation bench on ${machineLine()}`);
  const dataDir = makeTempDir('isolation');
  try {
    const server = await startServe({ name: 'drover-serve', dataDir, localRunner: false, nodeArgs: profileArgs('isolation') });
    const admin = { authorization: `Bearer ${server.adminToken}` };
    try {
      await expect(201, server.url, 'POST', '/api/v1/admin/orgs', { headers: admin, json: { slug: 'flood', name: 'Flood' } });
      const floodKey = (await expect<{ key: string }>(201, server.url, 'POST', '/api/v1/admin/orgs/flood/api-keys', { headers: admin, json: { name: 'bench', scopes: ['pods:write'] } })).key;
      const token = (await expect<{ token: string }>(201, server.url, 'POST', '/api/v1/admin/orgs/flood/runner-tokens', { headers: admin, json: {} })).token;
      const runner = await startRunner({ name: 'flood-runner', serverUrl: server.url, token, maxPods: 4, dir: dataDir });
      try {
        await seedTickets(server, 1000);
        const floodApi = (path: string, json: unknown) => expect<Record<string, unknown>>(201, server.url, 'POST', `/api/v1/ext/orgs/flood${path}`, { headers: { 'x-api-key': floodKey }, json });
        await waitUntil('the flood runner online', async () => {
          const body = await expect<{ runners: { status: string }[] }>(200, server.url, 'GET', '/api/v1/admin/orgs/flood/runners', { headers: admin });
          return body.runners.some((r) => r.status === 'online');
        }, 30_000);

        const warm = new Load(server, rate, connections);
        warm.start(3);
        await warm.finished();

        // The launcher's reaped children are B's agents.
        const pids: Record<string, number> = { server: server.pid, runner: runner.pid, ...helperProcesses(runner.pid, 'runner') };
        // B's runner stands in for a machine of its own (runners are the users' machines, not the
        // server's): on this one it runs at the lowest priority, its launcher and agents with it, so
        // what is measured is what B's flood costs the server, not what B's agents cost this CPU.
        for (const [label, pid] of Object.entries(pids)) if (label === 'runner' || label.startsWith('runner launcher')) os.setPriority(pid, 19);
        const quietLoad = new Load(server, rate, connections);
        const quietCpu = new CpuWindow(pids);
        const quietStart = Date.now();
        quietLoad.start(quietSec);
        await quietLoad.finished();
        const quietUsage = quietCpu.end();
        const quiet = summary(quietLoad.between(quietStart, Date.now()));
        log(`quiet: p50 ${ms(quiet.p50)}, p99 ${ms(quiet.p99)} (${quiet.n} requests)`);

        const floodReadKey = (await expect<{ key: string }>(201, server.url, 'POST', '/api/v1/admin/orgs/flood/api-keys', { headers: admin, json: { name: 'read', scopes: ['pods:read'] } })).key;
        /** B's pod floods, one after another, until `floodSec` of flooding is measured; A's responses during the floods are counted. */
        const flood = async (label: string) => {
          const load = new Load(server, rate, connections);
          load.start(3600);
          await sleep(1_000);
          const cpu = new CpuWindow(pids);
          const windows: { from: number; to: number; status: string; stored: number }[] = [];
          let flooded = 0;
          while (flooded < floodSec * 1000) {
            const pod = (await floodApi('/pods', {
              agent_slug: 'shell',
              agentfile_layer: `PROMPT "yes 'flood line 0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ' | head -c ${floodMb * 1024 * 1024}"`,
            })) as { pod: { pod_key: string } };
            let detail: { status: string; started_at: string | null; finished_at: string | null } = { status: 'initializing', started_at: null, finished_at: null };
            await waitUntil(
              `the flood pod (${label}) to end`,
              async () => {
                detail = (await expect<{ pod: typeof detail }>(200, server.url, 'GET', `/api/v1/ext/orgs/flood/pods/${pod.pod.pod_key}`, { headers: { 'x-api-key': floodReadKey } })).pod;
                return ['completed', 'failed', 'terminated'].includes(detail.status);
              },
              600_000,
              20,
            );
            const output = await expect<{ total_bytes: number }>(200, server.url, 'GET', `/api/v1/ext/orgs/flood/pods/${pod.pod.pod_key}/output?tail_bytes=1`, {
              headers: { 'x-api-key': floodReadKey },
            });
            const window = { from: Date.parse(detail.started_at!), to: Date.parse(detail.finished_at!), status: detail.status, stored: output.total_bytes };
            windows.push(window);
            flooded += window.to - window.from;
          }
          const usage = cpu.end();
          await load.stop();
          const during = summary(windows.flatMap((w) => load.between(w.from, w.to)));
          const stored = windows.map((w) => w.stored);
          log(`${label}: ${windows.length} floods over ${(flooded / 1000).toFixed(1)} s; A p50 ${ms(during.p50)}, p99 ${ms(during.p99)} (${during.n} requests); stored ${Math.min(...stored)}–${Math.max(...stored)} bytes per pod`);
          return { windows, during, usage, seconds: flooded / 1000, stored, non2xx: load.non2xx, ok: windows.every((w) => w.status === 'completed') };
        };

        const limited = await flood('flood within the default output quota');
        await expect(200, server.url, 'PATCH', '/api/v1/admin/orgs/flood/quotas', { headers: admin, json: { pod_output_bytes_per_sec: 0 } });
        // The runner hears of it at a heartbeat once its link has reread the organization's quota (10 s).
        await runner.waitFor(/pod output: no limit/, { stream: 'stderr', timeoutMs: 60_000 });
        const unlimited = await flood('flood with the output quota off');

        const cpuText = (u: ReturnType<CpuWindow['end']>) =>
          `server ${u.pct.server}%, B's runner ${u.pct.runner}% (its launchers ${launchersSum(u.pct, 'runner')}%, agent ${launchersSum(u.childPct, 'runner')}%), bench ${u.ownPct}%, other processes ${u.otherPct}% (machine ${u.machinePct}% of one core, 2 cores = 200%; load ${loadAvgText(u.loadAvg.start)} → ${loadAvgText(u.loadAvg.end)})`;
        const row = (name: string, f: Awaited<ReturnType<typeof flood>>): Row[] => [
          {
            name: `A's GET /tickets p99 while B's pods flood ${floodMb} MiB each ${name}; B's runner at nice 19 (÷ quiet p99)`,
            value: `${ms(f.during.p99)} (p50 ${ms(f.during.p50)}, ${f.during.n} requests during ${f.windows.length} floods, ${round(f.seconds, 1)} s in all) = ${round(f.during.p99 / quiet.p99, 2)}×`,
            target: '≤ 1.5× quiet',
            pass: f.during.p99 <= 1.5 * quiet.p99 && f.ok && f.non2xx === 0,
          },
          { name: `  … output stored per flood pod / CPU during the floods`, value: `${Math.min(...f.stored)}–${Math.max(...f.stored)} bytes / ${cpuText(f.usage)}` },
        ];
        return {
          rows: [
            { name: `A's GET /tickets?limit=20 quiet, ${rate} req/s over ${connections} connections, ${quietSec} s`, value: `p50 ${ms(quiet.p50)}, p99 ${ms(quiet.p99)} (${quiet.n} requests)` },
            { name: '  … CPU while quiet', value: cpuText(quietUsage) },
            ...row('within the default quota (1 MiB/s)', limited),
            ...row("with B's output quota off (every byte stored)", unlimited),
          ],
        };
      } finally {
        await runner.stop();
      }
    } finally {
      await server.stop();
    }
  } finally {
    removeTempDir(dataDir);
  }
}

runIfMain(import.meta.url, 'Tenant isolation: one organization floods pod output while another reads tickets', run);
