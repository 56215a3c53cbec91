/**
 * The event stream under load (docs/events.md): 1,000 concurrent SSE subscribers on one `drover
 * serve` (SQLite) while tickets are created at 200/s.
 *
 * - Delivery latency: from the moment a ticket's POST answered (201) to the moment each
 *   subscriber read that ticket's `ticket.created` event, p50/p99 over every (ticket, subscriber)
 *   pair (target p99 < 100 ms), after a second of such creates that is not measured (the first
 *   writes to a thousand new connections are slower). An event read before its POST's answer counts as 0.
 * - Ticket create rate, closed loop (16 requests in flight, 5 s), without subscribers and with the
 *   1,000 subscribers connected and receiving every event, in turn (three times with, each between
 *   two without; the means are compared; target: with ≥ 0.7× without); then how
 *   long after the last create every subscriber had every event of the burst (a subscriber that
 *   reads slower than events come is written to at its own pace and catches up from the log).
 * - The server's RSS with the subscribers connected, and its peak (target < 400 MB).
 *
 * The subscribers run in a worker thread of this process (bench/events-subscribers.ts), on the
 * same machine as the server: the CPU they take is reported. The creates go over keep-alive
 * connections written by hand (bench/keepalive-client.ts): `fetch` took as much CPU per request
 * as the server, from the same two cores.
 *
 * Run alone: `npm run bench:events`. Environment: BENCH_EVENTS_SUBSCRIBERS (1000),
 * BENCH_EVENTS_RATE (200 per second), BENCH_EVENTS_SECONDS (10).
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { KeepAlivePool } from './keepalive-client.ts';
import {
  CpuWindow,
  ORG,
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
} from './harness.ts';

const now = () => performance.timeOrigin + performance.now();

interface Created {
  /** Slugs are `PREFIX-<number>`, numbered in order: tickets are known by their number. */
  number: number;
  answeredAt: number;
}

async function createTicket(client: KeepAlivePool, title: string): Promise<Created> {
  const answer = await client.request('POST', `${ORG}/tickets`, { type: 'task', title });
  const answeredAt = now();
  if (answer.status !== 201) throw new Error(`POST /tickets answered ${answer.status}: ${answer.body.slice(0, 200)}`);
  const { slug } = (JSON.parse(answer.body) as { ticket: { slug: string } }).ticket;
  return { number: Number(slug.slice(slug.lastIndexOf('-') + 1)), answeredAt };
}

/** Tickets created with `inFlight` requests at a time for `seconds`: their rate, and the last one's number. */
async function createRate(client: KeepAlivePool, inFlight: number, seconds: number, label: string): Promise<{ rate: number; created: number; last: number }> {
  const until = performance.now() + seconds * 1000;
  let created = 0;
  let last = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async (_, worker) => {
      while (performance.now() < until) {
        const ticket = await createTicket(client, `${label} ${worker} ${created}`);
        last = Math.max(last, ticket.number);
        created++;
      }
    }),
  );
  return { rate: created / seconds, created, last };
}

/** Tickets created at `rate` per second, each on its own (a slow answer does not delay the next). */
async function createPaced(client: KeepAlivePool, rate: number, count: number, label: string): Promise<{ written: Created[]; rate: number }> {
  const writes: Promise<Created>[] = [];
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    writes.push(createTicket(client, `${label} ${i}`));
  }
  const written = await Promise.all(writes);
  return { written, rate: written.length / ((performance.now() - start) / 1000) };
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

/** The subscribers are many streams of one key: the per-key and per-organization caps (20, 500) are lifted. */
const UNCAPPED_STREAMS = { DROVER_MAX_STREAMS_PER_KEY: '0', DROVER_MAX_STREAMS_PER_ORG: '0' };
/** Seconds of each closed-loop phase (creates with 16 in flight), alone or with the subscribers. */
const CLOSED_LOOP_SECONDS = 5;
/** How many times the rate with subscribers is measured (each between two measures of the rate alone). */
const WITH_SUBSCRIBERS_RUNS = 3;
const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

async function fanOut(): Promise<Row[]> {
  const subscribers = envInt('BENCH_EVENTS_SUBSCRIBERS', 1000);
  const rate = envInt('BENCH_EVENTS_RATE', 200);
  const seconds = envInt('BENCH_EVENTS_SECONDS', 10);
  const dataDir = makeTempDir('events');
  try {
    const server = await startServe({ name: 'drover-serve-events', dataDir, localRunner: false, env: { DROVER_LOG_LEVEL: 'warn', ...UNCAPPED_STREAMS }, nodeArgs: profileArgs('events') });
    const { ask, worker } = startSubscribers();
    const client = new KeepAlivePool(new URL(server.url), { 'x-api-key': server.apiKey });
    const serverCpu = () => readCpuSeconds(server.pid) ?? NaN;
    const connect = async () => {
      const { count } = await ask<{ count: number }>({ type: 'connect', url: `${server.url}${ORG}/events?types=ticket.created`, apiKey: server.apiKey, count: subscribers });
      log(`${count} subscribers connected`);
      return count;
    };
    const disconnect = async () => {
      await ask({ type: 'disconnect' });
      await sleep(1000);
    };
    /** Creates at full speed without subscribers. */
    const alone = async () => {
      const cpu = serverCpu();
      const { rate, created } = await createRate(client, 16, CLOSED_LOOP_SECONDS, 'alone');
      log(`create rate without subscribers: ${round(rate)}/s`);
      return { rate, cpuPerCreate: (serverCpu() - cpu) / created };
    };
    /** Creates at full speed with the subscribers connected, then until each of them has had every event. */
    const burst = async (connected: number) => {
      await ask({ type: 'phase', name: 'burst' });
      const serverCpuAtStart = serverCpu();
      const window = new CpuWindow({ server: server.pid });
      const { rate, created, last } = await createRate(client, 16, CLOSED_LOOP_SECONDS, 'with subscribers');
      const { pct, ownPct } = window.end();
      const cpu = { serverPct: pct.server, benchPct: ownPct };
      const end = performance.now();
      let caughtUp = NaN;
      let behind = connected;
      for (let waited = 0; waited < 300_000; waited += 250) {
        const answer = await ask<{ counts: number[]; last: number[] }>({ type: 'counts' });
        behind = answer.counts.filter((count, i) => count !== created || answer.last[i] !== last).length;
        if (behind === 0) {
          caughtUp = (performance.now() - end) / 1000;
          break;
        }
        await sleep(250);
      }
      log(`create rate with subscribers: ${round(rate)}/s`);
      // The server's CPU for the creates and for handing their events to every subscriber,
      // including what it spent after the burst while the subscribers caught up.
      return { rate, created, cpu, caughtUp, behind, cpuPerCreate: (serverCpu() - serverCpuAtStart) / created };
    };
    try {
      await createRate(client, 16, 5, 'warm-up');
      const alones = [await alone()];

      const connected = await connect();
      // The first events written to a thousand new connections go out slower: a second of them is not measured.
      const warmUp = await createPaced(client, rate, rate, 'warm-up paced');
      await sleep(1000);
      await ask({ type: 'phase', name: 'paced', base: Math.max(...warmUp.written.map((w) => w.number)) + 1, size: rate * seconds });
      const pacedWindow = new CpuWindow({ server: server.pid });
      const { written, rate: pacedRate } = await createPaced(client, rate, rate * seconds, 'paced');
      await sleep(2000); // the last events' delivery
      const pacedCpu = pacedWindow.end();
      const lat = await ask<{ delivered: number; missing: number; p50: number; p99: number; max: number }>({ type: 'latencies', written: written.map((w) => [w.number, w.answeredAt]) });
      const rssMb = (readMemoryKb(server.pid)?.rssKb ?? NaN) / 1024;

      // Alone and with the subscribers in turn (A B A B A B A), each rate with subscribers between
      // two alone: the machine's speed drifts by a fifth from one minute to the next here, and a
      // single pair of runs measured the drift as much as the subscribers.
      const bursts = [await burst(connected)];
      await disconnect();
      alones.push(await alone());
      while (bursts.length < WITH_SUBSCRIBERS_RUNS) {
        bursts.push(await burst(await connect()));
        await disconnect();
        alones.push(await alone());
      }
      const peakMb = (readMemoryKb(server.pid)?.hwmKb ?? NaN) / 1024;

      const aloneRate = mean(alones.map((a) => a.rate));
      const withRate = mean(bursts.map((b) => b.rate));
      const aloneCpu = mean(alones.map((a) => a.cpuPerCreate));
      const withCpu = mean(bursts.map((b) => b.cpuPerCreate));
      const list = (values: number[], digits = 0) => values.map((value) => round(value, digits)).join(', ');
      return [
        { name: `subscribers connected / tickets created paced at ${rate}/s for ${seconds} s`, value: `${connected} / ${written.length} (${round(pacedRate)}/s achieved)` },
        { name: 'events delivered / missing', value: `${lat.delivered} / ${lat.missing}`, target: '0 missing', pass: lat.missing === 0 },
        { name: 'delivery latency after the 201, p50 / p99 / max', value: `${round(lat.p50)} / ${round(lat.p99)} / ${round(lat.max)} ms`, target: 'p99 < 100 ms', pass: lat.p99 < 100 },
        { name: 'CPU while paced, % of one core', value: `server ${pacedCpu.pct.server}%, bench process (subscribers and creates) ${pacedCpu.ownPct}%` },
        {
          name: `ticket create rate (16 in flight, ${CLOSED_LOOP_SECONDS} s each, in turn) without / with subscribers`,
          value: `${round(aloneRate)} (${list(alones.map((a) => a.rate))}) / ${round(withRate)} (${list(bursts.map((b) => b.rate))}) per s (${round(withRate / aloneRate, 2)}×)`,
          target: '≥ 0.7×',
          pass: withRate >= 0.7 * aloneRate,
        },
        {
          name: 'server CPU per ticket created without / with subscribers (each event written to all of them)',
          value: `${round(aloneCpu * 1000, 2)} / ${round(withCpu * 1000, 2)} ms (${round(aloneCpu / withCpu, 2)}×)`,
        },
        {
          name: 'CPU during the creates with subscribers, % of one core',
          value: `server ${list(bursts.map((b) => b.cpu.serverPct))}%, bench process ${list(bursts.map((b) => b.cpu.benchPct))}%`,
        },
        {
          name: 'every subscriber had every event of those creates, after the last one',
          value: bursts.map((b) => (Number.isNaN(b.caughtUp) ? `not within 300 s (${b.behind} behind)` : `${round(b.caughtUp, 2)} s (${b.created} events)`)).join(', '),
          target: 'all delivered',
          pass: bursts.every((b) => !Number.isNaN(b.caughtUp)),
        },
        { name: 'server RSS with the subscribers connected / peak', value: `${round(rssMb)} / ${round(peakMb)} MB`, target: '< 400 MB', pass: peakMb < 400 },
        { name: 'load average (1/5/15 min) start → end', value: `${loadAvgText(pacedCpu.loadAvg.start)} → ${loadAvgText(os.loadavg())}` },
      ];
    } finally {
      client.close();
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
