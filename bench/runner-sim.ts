/**
 * Runner-link bench: `npx tsx bench/runner-sim.ts` (or `run()` from another script).
 *
 * One `drover serve --no-local-runner` on a fresh temp data dir (SQLite, rate limit off, log level
 * info, logs to files). 1,000 runners are registered (POST /api/v1/runner/register with one
 * registration token from POST /api/v1/admin/orgs/default/runner-tokens), then this one process
 * opens 1,000 WebSockets to /api/v1/runner/connect (Authorization: Bearer <credential>), sends a
 * valid protocol-1 `hello` on each, waits for every `welcome`, and sends `heartbeat` every 10 s
 * per socket, each socket at its own random phase within the 10 s. Once GET /runners reports all
 * 1,000 `online` and a settling period of one heartbeat interval has passed (so every socket is in
 * its steady rhythm), the server's CPU (utime + stime from /proc/<pid>/stat) is taken over a 60 s
 * window and its memory (VmRSS sampled every second, and VmHWM) from /proc/<pid>/status.
 *
 * Environment: BENCH_RUNNERS (10000), BENCH_RUNNER_WINDOW (60 s), BENCH_CPU_PROF=1.
 */
import WebSocket from 'ws';
import { PROTOCOL_VERSION, decodeRunnerMessage } from '../src/protocol/runner-link.ts';
import {
  CpuWindow,
  ORG,
  call,
  expect,
  loadAvgText,
  log,
  machineLine,
  makeTempDir,
  profileArgs,
  readMemoryKb,
  registrationToken,
  removeTempDir,
  round,
  runIfMain,
  runnerStatusCounts,
  sleep,
  startServe,
  waitUntil,
  type Row,
} from './harness.ts';

const HEARTBEAT_MS = 10_000;

const num = (name: string, fallback: number) => {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
};

/** Runs `task` over `items` with at most `limit` at a time. */
async function pool<T, R>(items: T[], limit: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await task(items[i], i);
      }
    }),
  );
  return results;
}

interface SimRunner {
  socket: WebSocket;
  welcomed: boolean;
  closed: { code: number; reason: string } | null;
  timer: NodeJS.Timeout | null;
  heartbeats: number;
}

export async function run(): Promise<{ rows: Row[] }> {
  const count = num('BENCH_RUNNERS', 10_000);
  const windowSec = num('BENCH_RUNNER_WINDOW', 60);
  log(`runner-sim bench on ${machineLine()}`);
  const dataDir = makeTempDir('runner-sim');
  const sims: SimRunner[] = [];
  try {
    const server = await startServe({ name: 'drover-serve', dataDir, localRunner: false, nodeArgs: profileArgs('runner-sim') });
    try {
      log(`server pid ${server.pid} at ${server.url}`);
      // A registration token allows at most 1,000 registrations: one token per thousand runners.
      const tokens: string[] = [];
      for (let i = 0; i < Math.ceil(count / 1000); i++) tokens.push(await registrationToken(server));

      // Registration: one POST /runner/register per runner, 20 at a time.
      let t = performance.now();
      const credentials = await pool(
        Array.from({ length: count }, (_, i) => i),
        20,
        async (i) =>
          (
            await expect<{ credential: string }>(201, server.url, 'POST', '/api/v1/runner/register', {
              json: { token: tokens[Math.floor(i / 1000)], name: `sim-${i}`, labels: ['sim'], max_pods: 4, version: 'sim-0.1.0', os: 'linux', arch: 'x64' },
            })
          ).credential,
      );
      const registerSec = (performance.now() - t) / 1000;
      log(`registered ${count} runners in ${round(registerSec, 1)} s`);

      // The messages, checked against the protocol's own schema so the server cannot refuse them.
      const helloText = JSON.stringify({
        v: PROTOCOL_VERSION,
        type: 'hello',
        version: 'sim-0.1.0',
        os: 'linux',
        arch: 'x64',
        labels: ['sim'],
        max_pods: 4,
        agents: [{ slug: 'shell', version: null }],
        sandbox: 'none',
        draining: false,
        pods: [],
        finished: [],
      });
      const heartbeatText = JSON.stringify({ v: PROTOCOL_VERSION, type: 'heartbeat', draining: false, pods: [] });
      decodeRunnerMessage(helloText);
      decodeRunnerMessage(heartbeatText);

      // Connections: 50 handshakes at a time; each resolves on its `welcome`.
      const wsUrl = server.url.replace(/^http/, 'ws') + '/api/v1/runner/connect';
      const unexpected: string[] = [];
      let measuring = false;
      let heartbeatsInWindow = 0;
      t = performance.now();
      await pool(credentials, 50, (credential) => {
        const sim: SimRunner = { socket: new WebSocket(wsUrl, { headers: { authorization: `Bearer ${credential}` } }), welcomed: false, closed: null, timer: null, heartbeats: 0 };
        sims.push(sim);
        return new Promise<void>((resolve, reject) => {
          const timeout = setTimeout(() => reject(new Error('no welcome within 30 s')), 30_000);
          sim.socket.on('open', () => sim.socket.send(helloText));
          sim.socket.on('message', (data) => {
            const message = JSON.parse(String(data)) as { type: string };
            if (message.type === 'welcome' && !sim.welcomed) {
              sim.welcomed = true;
              clearTimeout(timeout);
              // Random phase within the interval, then every 10 s.
              sim.timer = setTimeout(() => {
                const beat = () => {
                  if (sim.socket.readyState !== WebSocket.OPEN) return;
                  sim.socket.send(heartbeatText);
                  sim.heartbeats++;
                  if (measuring) heartbeatsInWindow++;
                };
                beat();
                sim.timer = setInterval(beat, HEARTBEAT_MS);
              }, Math.random() * HEARTBEAT_MS);
              resolve();
            } else if (message.type !== 'welcome' && message.type !== 'output_limit') {
              // `output_limit` follows `welcome` on every connection (the organization's output quota).
              unexpected.push(message.type);
            }
          });
          sim.socket.on('close', (code, reason) => {
            sim.closed = { code, reason: String(reason) };
            if (!sim.welcomed) reject(new Error(`closed before welcome: ${code} ${String(reason)}`));
          });
          sim.socket.on('error', (error) => {
            if (!sim.welcomed) reject(error);
          });
        });
      });
      const connectSec = (performance.now() - t) / 1000;
      log(`${count} sockets welcomed in ${round(connectSec, 1)} s`);

      await waitUntil(`${count} runners online`, async () => (await runnerStatusCounts(server)).online === count, 60_000, 500);
      t = performance.now();
      const before = await runnerStatusCounts(server);
      const listMs = performance.now() - t;
      log(`GET /runners: ${JSON.stringify(before)}; settling for one heartbeat interval …`);
      await sleep(HEARTBEAT_MS + 1000);

      log(`measuring the server for ${windowSec} s …`);
      const cpu = new CpuWindow({ server: server.pid });
      measuring = true;
      let rssPeakKb = 0;
      const windowEnd = Date.now() + windowSec * 1000;
      while (Date.now() < windowEnd) {
        rssPeakKb = Math.max(rssPeakKb, readMemoryKb(server.pid)?.rssKb ?? 0);
        await sleep(1000);
      }
      measuring = false;
      const usage = cpu.end();
      const memory = readMemoryKb(server.pid);
      rssPeakKb = Math.max(rssPeakKb, memory?.rssKb ?? 0);
      const after = await runnerStatusCounts(server);
      const open = sims.filter((s) => s.socket.readyState === WebSocket.OPEN).length;
      const closed = sims.filter((s) => s.closed !== null);
      const runnerLog = await call(server.url, 'GET', `${ORG}/runners/available`, { headers: { 'x-api-key': server.apiKey } });
      const available = (runnerLog.body as { runners?: unknown[] }).runners?.length ?? 0;

      const unexpectedCount = unexpected.length;
      // After the window (so it does not disturb it): what pod placement costs with this many
      // runners (POST /pods lists every runner of the org with its pod count). The simulated
      // runners ignore start_pod, so these pods stay `initializing`; 20 sequential requests.
      const placeMs: number[] = [];
      for (let i = 0; i < 20; i++) {
        const t0 = performance.now();
        await expect(201, server.url, 'POST', `${ORG}/pods`, { headers: { 'x-api-key': server.apiKey }, json: { agent_slug: 'shell', agentfile_layer: 'PROMPT "true"' } });
        placeMs.push(performance.now() - t0);
      }
      placeMs.sort((a, b) => a - b);

      const cpuPct = usage.pct.server;
      const rssMb = rssPeakKb / 1024;
      const hwmMb = (memory?.hwmKb ?? NaN) / 1024;
      return {
        rows: [
          { name: `runners online before / after the window (GET /runners, of ${count})`, value: `${before.online ?? 0} / ${after.online ?? 0}`, target: `${count}`, pass: before.online === count && after.online === count },
          {
            name: 'sockets open at the end / closed by the server / unexpected messages',
            value: `${open} / ${closed.length}${closed.length ? ` (${[...new Set(closed.map((c) => `${c.closed!.code} ${c.closed!.reason}`))].join('; ')})` : ''} / ${unexpectedCount}`,
            pass: open === count && closed.length === 0 && unexpectedCount === 0,
          },
          { name: `heartbeats sent in the ${round(usage.seconds, 1)} s window`, value: `${heartbeatsInWindow} (${round(heartbeatsInWindow / usage.seconds, 1)}/s; expected ≈ ${round(count / 10, 0)}/s)` },
          { name: `server CPU over the window (utime + stime)`, value: `${cpuPct}% of one core`, target: '< 50 %', pass: cpuPct < 50 },
          { name: 'server RSS, highest VmRSS sampled during the window', value: `${round(rssMb, 1)} MB`, target: '< 1 GB', pass: rssMb < 1024 },
          { name: 'server VmHWM (peak since start: registration and connect burst included)', value: `${round(hwmMb, 1)} MB`, target: '< 1 GB', pass: hwmMb < 1024 },
          { name: 'registration of all runners (20 concurrent) / connect + hello → welcome (50 concurrent)', value: `${round(registerSec, 1)} s / ${round(connectSec, 1)} s` },
          { name: `GET /runners with ${count} runners (one call) / GET /runners/available count`, value: `${round(listMs, 1)} ms / ${available}` },
          { name: `POST /pods with ${count} runners online, after the window (20 sequential) p50 / max`, value: `${round(placeMs[9], 1)} ms / ${round(placeMs[19], 1)} ms` },
          { name: 'load generator CPU / other processes during the window', value: `${usage.ownPct}% / ${usage.otherPct}% of one core` },
          { name: 'load average (1/5/15 min) window start → end', value: `${loadAvgText(usage.loadAvg.start)} → ${loadAvgText(usage.loadAvg.end)}` },
        ],
      };
    } finally {
      for (const sim of sims) {
        if (sim.timer) clearInterval(sim.timer);
        sim.socket.terminate();
      }
      await server.stop();
    }
  } finally {
    removeTempDir(dataDir);
  }
}

runIfMain(import.meta.url, 'Runner connections: simulated runners heartbeating every 10 s', run);
