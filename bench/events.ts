/**
 * The event stream under load (contract §11): 1,000 concurrent SSE subscribers on one `drover
 * serve` (SQLite) while tickets are created at 200/s.
 *
 * - Delivery latency: from the moment a ticket's POST answered (201) to the moment each
 *   subscriber read that ticket's `ticket.created` event, p50/p99 over every (ticket, subscriber)
 *   pair (target p99 < 100 ms). An event read before its POST's answer counts as 0.
 * - Ticket create rate, closed loop (16 requests in flight, 8 s), without subscribers and with the
 *   1,000 subscribers connected and receiving every event (target: with ≥ 0.7× without); then how
 *   long after the last create every subscriber had every event of the burst (a subscriber that
 *   reads slower than events come is written to at its own pace and catches up from the log).
 * - The server's RSS with the subscribers connected, and its peak (target < 400 MB).
 *
 * The subscribers run in a worker thread of this process (bench/events-subscribers.ts), on the
 * same machine as the server: the CPU they take is reported.
 *
 * Run alone: `npm run bench:events`. Environment: BENCH_EVENTS_SUBSCRIBERS (1000),
 * BENCH_EVENTS_RATE (200 per second), BENCH_EVENTS_SECONDS (10).
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import {
  ORG,
  call,
  envInt,
  loadAvgText,
  log,
  makeTempDir,
  profileArgs,
  readCpuSeconds,
  readMemoryKb,
  removeTempDir,
  round,
  runIfMain,
  runParts,
  sleep,
  startServe,
  type Row,
  type Server,
} from './harness.ts';

const now = () => performance.timeOrigin + performance.now();

async function createTicket(server: Server, title: string): Promise<{ slug: string; answeredAt: number }> {
  const answer = await call<{ ticket: { slug: string } }>(server.url, 'POST', `${ORG}/tickets`, { headers: { 'x-api-key': server.apiKey }, json: { type: 'task', title } });
  if (answer.status !== 201) throw new Error(`POST /tickets answered ${answer.status}: ${answer.text.slice(0, 200)}`);
  return { slug: answer.body.ticket.slug, answeredAt: now() };
}

/** Tickets created with `inFlight` requests at a time for `seconds`: their rate, and the last one's slug. */
async function createRate(server: Server, inFlight: number, seconds: number, label: string): Promise<{ rate: number; created: number; last: string }> {
  const until = performance.now() + seconds * 1000;
  let created = 0;
  let last = { slug: '', answeredAt: 0 };
  await Promise.all(
    Array.from({ length: inFlight }, async (_, worker) => {
      while (performance.now() < until) {
        const ticket = await createTicket(server, `${label} ${worker} ${created}`);
        if (ticket.answeredAt > last.answeredAt) last = ticket;
        created++;
      }
    }),
  );
  return { rate: created / seconds, created, last: last.slug };
}

/** The subscribers' worker: `ask` sends a message and resolves with the answer of the same type. */
function startSubscribers(): { ask: <T>(message: { type: string; [key: string]: unknown }) => Promise<T>; worker: Worker } {
  // The worker is TypeScript too: it loads through tsx's API (a worker does not inherit tsx's hooks).
  const file = new URL('./events-subscribers.ts', import.meta.url).href;
  const worker = new Worker(`import('tsx/esm/api').then(({ tsImport }) => tsImport(${JSON.stringify(file)}, ${JSON.stringify(file)}))`, { eval: true });
  const ask = <T>(message: { type: string; [key: string]: unknown }) =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (answer: { type: string } & T) => {
        if (answer.type !== message.type) return;
        worker.off('message', onMessage);
        worker.off('error', reject);
        resolve(answer);
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
      worker.postMessage(message);
    });
  return { ask, worker };
}

async function fanOut(): Promise<Row[]> {
  const subscribers = envInt('BENCH_EVENTS_SUBSCRIBERS', 1000);
  const rate = envInt('BENCH_EVENTS_RATE', 200);
  const seconds = envInt('BENCH_EVENTS_SECONDS', 10);
  const dataDir = makeTempDir('events');
  try {
    const server = await startServe({ name: 'drover-serve-events', dataDir, localRunner: false, env: { DROVER_LOG_LEVEL: 'warn' }, nodeArgs: profileArgs('events') });
    const { ask, worker } = startSubscribers();
    try {
      await createRate(server, 16, 2, 'warm-up');
      const aloneCpu = readCpuSeconds(server.pid) ?? NaN;
      const without = await createRate(server, 16, 8, 'alone');
      const cpuPerCreateWithout = ((readCpuSeconds(server.pid) ?? NaN) - aloneCpu) / without.created;
      log(`create rate without subscribers: ${round(without.rate)}/s`);

      const { count: connected } = await ask<{ count: number }>({ type: 'connect', url: `${server.url}${ORG}/events?types=ticket.created`, apiKey: server.apiKey, count: subscribers });
      log(`${connected} subscribers connected`);
      await ask({ type: 'phase', name: 'paced', base: Number(without.last.slice(without.last.lastIndexOf('-') + 1)) + 1, size: rate * seconds });
      await sleep(1000);
      const loadStart = os.loadavg();
      const cpuStart = { server: readCpuSeconds(server.pid) ?? NaN, own: process.cpuUsage(), at: performance.now() };

      // Paced: one create every 1/rate s, each on its own (a slow answer does not delay the next).
      const writes: Promise<{ slug: string; answeredAt: number }>[] = [];
      const start = performance.now();
      for (let i = 0; i < rate * seconds; i++) {
        const due = start + (i * 1000) / rate;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        writes.push(createTicket(server, `paced ${i}`));
      }
      const written = await Promise.all(writes);
      const pacedRate = written.length / ((performance.now() - start) / 1000);
      await sleep(2000); // the last events' delivery
      const elapsed = (performance.now() - cpuStart.at) / 1000;
      const own = process.cpuUsage(cpuStart.own);
      const serverCpu = ((readCpuSeconds(server.pid) ?? NaN) - cpuStart.server) / elapsed;
      const lat = await ask<{ delivered: number; missing: number; p50: number; p99: number; max: number }>({ type: 'latencies', written: written.map((w) => [w.slug, w.answeredAt]) });
      const rssMb = (readMemoryKb(server.pid)?.rssKb ?? NaN) / 1024;

      await ask({ type: 'phase', name: 'burst' });
      const burstCpu = { server: readCpuSeconds(server.pid) ?? NaN, own: process.cpuUsage(), at: performance.now() };
      const withSubscribers = await createRate(server, 16, 8, 'with subscribers');
      const burstElapsed = (performance.now() - burstCpu.at) / 1000;
      const burstOwn = process.cpuUsage(burstCpu.own);
      const burstServerCpu = ((readCpuSeconds(server.pid) ?? NaN) - burstCpu.server) / burstElapsed;
      const burstEnd = performance.now();
      let caughtUp = NaN;
      let behind = connected;
      for (let waited = 0; waited < 300_000; waited += 250) {
        const { counts, last } = await ask<{ counts: number[]; last: string[] }>({ type: 'counts' });
        behind = counts.filter((count, i) => count !== withSubscribers.created || last[i] !== withSubscribers.last).length;
        if (behind === 0) {
          caughtUp = (performance.now() - burstEnd) / 1000;
          break;
        }
        await sleep(250);
      }
      // The server's CPU for the burst's creates and for handing their events to every subscriber,
      // including what it spent after the burst while the subscribers caught up.
      const cpuPerCreateWith = ((readCpuSeconds(server.pid) ?? NaN) - burstCpu.server) / withSubscribers.created;
      const loadEnd = os.loadavg();
      const peakMb = (readMemoryKb(server.pid)?.hwmKb ?? NaN) / 1024;
      return [
        { name: `subscribers connected / tickets created paced at ${rate}/s for ${seconds} s`, value: `${connected} / ${written.length} (${round(pacedRate)}/s achieved)` },
        { name: 'events delivered / missing', value: `${lat.delivered} / ${lat.missing}`, target: '0 missing', pass: lat.missing === 0 },
        { name: 'delivery latency after the 201, p50 / p99 / max', value: `${round(lat.p50)} / ${round(lat.p99)} / ${round(lat.max)} ms`, target: 'p99 < 100 ms', pass: lat.p99 < 100 },
        { name: 'CPU while paced, % of one core', value: `server ${round(serverCpu * 100)}%, bench process (subscribers and creates) ${round(((own.user + own.system) / 1e6 / elapsed) * 100)}%` },
        {
          name: 'ticket create rate (16 in flight, 8 s) without / with subscribers',
          value: `${round(without.rate)} / ${round(withSubscribers.rate)} per s (${round(withSubscribers.rate / without.rate, 2)}×)`,
          target: '≥ 0.7×',
          pass: withSubscribers.rate >= 0.7 * without.rate,
        },
        {
          name: 'server CPU per ticket created without / with subscribers (each event written to all of them)',
          value: `${round(cpuPerCreateWithout * 1000, 2)} / ${round(cpuPerCreateWith * 1000, 2)} ms (${round(cpuPerCreateWithout / cpuPerCreateWith, 2)}×)`,
        },
        {
          name: 'CPU during the burst with subscribers, % of one core',
          value: `server ${round(burstServerCpu * 100)}%, bench process ${round(((burstOwn.user + burstOwn.system) / 1e6 / burstElapsed) * 100)}%`,
        },
        {
          name: `every subscriber had all ${withSubscribers.created} events of the burst, after its last create`,
          value: Number.isNaN(caughtUp) ? `not within 300 s (${behind} behind)` : `${round(caughtUp, 2)} s`,
          target: 'all delivered',
          pass: !Number.isNaN(caughtUp),
        },
        { name: 'server RSS with the subscribers connected / peak', value: `${round(rssMb)} / ${round(peakMb)} MB`, target: '< 400 MB', pass: peakMb < 400 },
        { name: 'load average (1/5/15 min) start → end', value: `${loadAvgText(loadStart)} → ${loadAvgText(loadEnd)}` },
      ];
    } finally {
      worker.postMessage({ type: 'close' });
      await worker.terminate();
      await server.stop();
    }
  } finally {
    removeTempDir(dataDir);
  }
}

export const run = () => runParts('events', 'BENCH_EVENTS_ONLY', { a: fanOut });

runIfMain(import.meta.url, 'Events: 1,000 SSE subscribers while tickets are created at 200/s', run);
