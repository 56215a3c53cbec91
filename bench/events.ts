/**
 * The event stream under load (contract §11): 1,000 concurrent SSE subscribers on one `drover
 * serve` (SQLite) while tickets are created at 200/s.
 *
 * - Delivery latency: from the moment a ticket's POST answered (201) to the moment each
 *   subscriber read that ticket's `ticket.created` event, p50/p99 over every (ticket, subscriber)
 *   pair (target p99 < 100 ms). An event read before its POST's answer counts as 0.
 * - Ticket create rate, closed loop (16 requests in flight, 8 s), without subscribers and with the
 *   1,000 subscribers connected and receiving every event (target: with ≥ 0.7× without).
 * - The server's RSS with the subscribers connected (target < 400 MB).
 *
 * The subscribers run in this process (plain node:http, one socket each, frames scanned for the
 * ticket slug without JSON parsing), on the same machine as the server: their CPU is reported.
 *
 * Run alone: `npm run bench:events`. Environment: BENCH_EVENTS_SUBSCRIBERS (1000),
 * BENCH_EVENTS_RATE (200 per second), BENCH_EVENTS_SECONDS (10).
 */
import http from 'node:http';
import os from 'node:os';
import {
  ORG,
  call,
  envInt,
  loadAvgText,
  log,
  makeTempDir,
  readCpuSeconds,
  readMemoryKb,
  removeTempDir,
  round,
  runIfMain,
  runParts,
  sleep,
  startServe,
  summary,
  type Row,
  type Server,
} from './harness.ts';

interface Subscriber {
  request: http.ClientRequest;
  /** Arrival time (performance.now()) of each ticket slug's event. */
  seen: Map<string, number>;
}

function subscribe(server: Server, agent: http.Agent): Promise<Subscriber> {
  return new Promise((resolve, reject) => {
    const seen = new Map<string, number>();
    const url = new URL(`${server.url}${ORG}/events?types=ticket.created`);
    const request = http.get(url, { agent, headers: { 'x-api-key': server.apiKey, accept: 'text/event-stream' } }, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`subscribe answered ${response.statusCode}`));
      response.setEncoding('utf8');
      let buffer = '';
      response.on('data', (chunk: string) => {
        const now = performance.now();
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const at = frame.indexOf('"slug":"');
          if (at !== -1) seen.set(frame.slice(at + 8, frame.indexOf('"', at + 8)), now);
        }
      });
      resolve({ request, seen });
    });
    request.on('error', reject);
  });
}

async function createTicket(server: Server, title: string): Promise<{ slug: string; answeredAt: number }> {
  const answer = await call<{ ticket: { slug: string } }>(server.url, 'POST', `${ORG}/tickets`, { headers: { 'x-api-key': server.apiKey }, json: { type: 'task', title } });
  if (answer.status !== 201) throw new Error(`POST /tickets answered ${answer.status}: ${answer.text.slice(0, 200)}`);
  return { slug: answer.body.ticket.slug, answeredAt: performance.now() };
}

/** Tickets created per second with `inFlight` requests at a time for `seconds`. */
async function createRate(server: Server, inFlight: number, seconds: number, label: string): Promise<number> {
  const until = performance.now() + seconds * 1000;
  let created = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async (_, worker) => {
      while (performance.now() < until) {
        await createTicket(server, `${label} ${worker} ${created}`);
        created++;
      }
    }),
  );
  return created / seconds;
}

async function fanOut(): Promise<Row[]> {
  const subscribers = envInt('BENCH_EVENTS_SUBSCRIBERS', 1000);
  const rate = envInt('BENCH_EVENTS_RATE', 200);
  const seconds = envInt('BENCH_EVENTS_SECONDS', 10);
  const dataDir = makeTempDir('events');
  try {
    const server = await startServe({ name: 'drover-serve-events', dataDir, localRunner: false, env: { DROVER_LOG_LEVEL: 'warn' } });
    const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
    try {
      await createRate(server, 16, 2, 'warm-up');
      const rateWithout = await createRate(server, 16, 8, 'alone');
      log(`create rate without subscribers: ${round(rateWithout)}/s`);

      const open: Subscriber[] = [];
      for (let i = 0; i < subscribers; i += 100) open.push(...(await Promise.all(Array.from({ length: Math.min(100, subscribers - i) }, () => subscribe(server, agent)))));
      log(`${open.length} subscribers connected`);
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
      const latencies: number[] = [];
      let missing = 0;
      for (const { slug, answeredAt } of written) {
        for (const subscriber of open) {
          const at = subscriber.seen.get(slug);
          if (at === undefined) missing++;
          else latencies.push(Math.max(0, at - answeredAt));
        }
      }
      const memory = readMemoryKb(server.pid);
      const rateWith = await createRate(server, 16, 8, 'with subscribers');
      const loadEnd = os.loadavg();
      const lat = summary(latencies);
      const rssMb = (memory?.rssKb ?? NaN) / 1024;
      for (const subscriber of open) subscriber.request.destroy();
      return [
        { name: `subscribers connected / tickets created paced at ${rate}/s for ${seconds} s`, value: `${open.length} / ${written.length} (${round(pacedRate)}/s achieved)` },
        { name: 'events delivered / missing', value: `${latencies.length} / ${missing}`, target: '0 missing', pass: missing === 0 },
        { name: 'delivery latency after the 201, p50 / p99 / max', value: `${round(lat.p50)} / ${round(lat.p99)} / ${round(lat.max)} ms`, target: 'p99 < 100 ms', pass: lat.p99 < 100 },
        { name: 'ticket create rate (16 in flight, 8 s) without / with subscribers', value: `${round(rateWithout)} / ${round(rateWith)} per s (${round(rateWith / rateWithout, 2)}×)`, target: '≥ 0.7×', pass: rateWith >= 0.7 * rateWithout },
        { name: 'server RSS with the subscribers connected', value: `${round(rssMb)} MB`, target: '< 400 MB', pass: rssMb < 400 },
        { name: 'CPU while paced, % of one core', value: `server ${round(serverCpu * 100)}%, subscribers (bench process) ${round(((own.user + own.system) / 1e6 / elapsed) * 100)}%` },
        { name: 'load average (1/5/15 min) start → end', value: `${loadAvgText(loadStart)} → ${loadAvgText(loadEnd)}` },
      ];
    } finally {
      agent.destroy();
      await server.stop();
    }
  } finally {
    removeTempDir(dataDir);
  }
}

export const run = () => runParts('events', 'BENCH_EVENTS_ONLY', { a: fanOut });

runIfMain(import.meta.url, 'Events: 1,000 SSE subscribers while tickets are created at 200/s', run);
