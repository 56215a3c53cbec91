/**
 * Model relay bench: `npm run bench:relay` (docs/agents.md "The model relay").
 *
 * Three processes, as in use: a stand-in of the Anthropic Messages API (streamed answers: a
 * `message_start` with usage, BENCH_RELAY_DELTAS text deltas (64), `message_delta`, `message_stop`,
 * each written as its own chunk), the runner's real relay (ModelRelay with its price table, one
 * pod registered with a placeholder, the stand-in as its upstream), and this client.
 *
 * 1. Added latency per call: BENCH_RELAY_CALLS (2,000) pairs of the same streamed call, through
 *    the relay and straight to the stand-in, interleaved (the order alternating) after
 *    BENCH_RELAY_WARMUP (200) pairs: time to the first byte of the answer and to its last byte;
 *    the added time is each pair's difference. Target: p50 < 2 ms for both.
 *    Then BENCH_RELAY_BODY_CALLS (300) pairs the same way with an agent-sized request body (part 3's
 *    body of BENCH_RELAY_BODY_KIB, 256 KiB: agents send their whole conversation on every call).
 * 2. Throughput: BENCH_RELAY_STREAMS (50) streamed calls at a time, BENCH_RELAY_BURST (1,000)
 *    calls in all, each answer ~BENCH_RELAY_KIB (64) KiB, through the relay and straight,
 *    interleaved (direct, relay, direct, relay): calls and MiB per second.
 *
 * 3. Reading a request: the model of an agent-sized body (BENCH_RELAY_BODY_KIB, 256 KiB of
 *    conversation: text with quotes and escapes, tool calls and results) as the relay finds it
 *    (a scan of the top-level keys, src/runner/relay/request.ts) against JSON.parse of the body
 *    (how it was found before), in this process, interleaved after a warm-up: µs per body, with
 *    `model` first (as the SDKs send it) and last (the scan's worst case).
 *
 * BENCH_RELAY_PROFILE=<dir>: the relay's process is profiled (`--cpu-prof`, its profile written there).
 *
 * Every call through the relay must be counted by it (its usage read and priced); the bench fails
 * otherwise. The machine's load average is printed with the figures: the machine may be shared.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { envInt, loadAvgText, log, machineLine, round, runIfMain, summary, type Row } from './harness.ts';

const CALLS = envInt('BENCH_RELAY_CALLS', 2000);
const WARMUP = envInt('BENCH_RELAY_WARMUP', 200);
const STREAMS = envInt('BENCH_RELAY_STREAMS', 50);
const BURST = envInt('BENCH_RELAY_BURST', 1000);
const DELTAS = envInt('BENCH_RELAY_DELTAS', 64);
const KIB = envInt('BENCH_RELAY_KIB', 64);
const BODY_KIB = envInt('BENCH_RELAY_BODY_KIB', 256);
const BODY_CALLS = envInt('BENCH_RELAY_BODY_CALLS', 300);
const REAL_KEY = 'sk-ant-bench-real-key-0000';
const MODEL = 'claude-sonnet-4-5';

// ---------------------------------------------------------------------------------------------
// The two children: this file run with BENCH_RELAY_ROLE=upstream or relay.

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The stand-in: a streamed Messages answer of `deltas` chunks of `text` each. */
async function upstreamRole(): Promise<void> {
  const server = http.createServer({ noDelay: true, keepAliveTimeout: 65_000 }, (req, res) => {
    req.resume();
    req.on('end', () => {
      const big = (req.headers['x-bench-kib'] ?? '') !== '';
      const deltas = big ? Math.max(1, Math.round((KIB * 1024) / 1024)) : DELTAS;
      const text = big ? 'x'.repeat(1000) : 'token ';
      if (req.headers['x-api-key'] !== REAL_KEY) {
        res.writeHead(401).end('{"type":"error"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(sse('message_start', { type: 'message_start', message: { id: 'msg_bench', type: 'message', role: 'assistant', model: MODEL, content: [], usage: { input_tokens: 100, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } } }));
      for (let i = 0; i < deltas; i++) res.write(sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }));
      res.write(sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: deltas } }));
      res.end(sse('message_stop', { type: 'message_stop' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.stdout.write(`${JSON.stringify({ port: (server.address() as { port: number }).port })}\n`);
}

/** The runner's relay, one pod with the stand-in as its upstream; `count` answers how many calls it recorded. */
async function relayRole(upstream: string): Promise<void> {
  // Ends cleanly when the bench is done, so that a profile asked for (NODE_OPTIONS=--cpu-prof) is written.
  process.once('SIGTERM', () => process.exit(0));
  const { ModelRelay } = await import('../src/runner/relay/server.ts');
  const { PriceTable } = await import('../src/runner/relay/pricing.ts');
  let calls = 0;
  let priced = 0;
  const relay = new ModelRelay(new PriceTable(), {
    call: (call) => {
      calls++;
      if (call.cost_usd !== null && call.cost_usd > 0) priced++;
    },
    budgetReached: () => {},
    upstreamAllowed: () => true,
  });
  await relay.listen();
  const { pod } = relay.pods.attach({ key: 'p-bench', credentials: { ANTHROPIC_API_KEY: REAL_KEY }, env: { ANTHROPIC_BASE_URL: upstream }, budgets: [] });
  const placeholder = [...pod.placeholders.keys()][0];
  process.stdout.write(`${JSON.stringify({ port: relay.port, placeholder })}\n`);
  readline.createInterface({ input: process.stdin }).on('line', () => process.stdout.write(`${JSON.stringify({ calls, priced })}\n`));
}

// ---------------------------------------------------------------------------------------------
// The client

interface RoleChild {
  child: ChildProcess;
  /** The next JSON line the child prints. */
  next(): Promise<Record<string, unknown>>;
}

function startRole(role: string, extra: Record<string, string> = {}): RoleChild {
  const file = fileURLToPath(import.meta.url);
  const profile = role === 'relay' && process.env.BENCH_RELAY_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_RELAY_PROFILE}`] : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', file], {
    cwd: path.resolve(path.dirname(file), '..'),
    env: { ...process.env, BENCH_RELAY_ROLE: role, ...extra },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: child.stdout! });
  const waiting: ((line: string) => void)[] = [];
  const queued: string[] = [];
  lines.on('line', (line) => (waiting.length > 0 ? waiting.shift()!(line) : queued.push(line)));
  return {
    child,
    next: () =>
      new Promise((resolve, reject) => {
        const take = (line: string) => resolve(JSON.parse(line) as Record<string, unknown>);
        if (queued.length > 0) take(queued.shift()!);
        else waiting.push(take);
        child.once('exit', (code) => reject(new Error(`${role} exited (${code})`)));
      }),
  };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/** One streamed call: ms to the first byte of the answer and to its last, and the bytes it carried. */
const SMALL_BODY = Buffer.from(JSON.stringify({ model: MODEL, stream: true, max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] }));

function streamedCall(url: string, key: string, big: boolean, body: Buffer = SMALL_BODY): Promise<{ first: number; last: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request(`${url}/v1/messages`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'x-api-key': key, 'content-length': body.length, ...(big ? { 'x-bench-kib': '1' } : {}) } }, (res) => {
      let first = 0;
      let bytes = 0;
      let text = '';
      res.on('data', (chunk: Buffer) => {
        if (bytes === 0) first = performance.now() - started;
        bytes += chunk.length;
        if (res.statusCode !== 200) text += chunk.toString('utf8');
      });
      res.on('end', () => (res.statusCode === 200 ? resolve({ first, last: performance.now() - started, bytes }) : reject(new Error(`status ${res.statusCode}: ${text.slice(0, 300)}`))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** `total` calls, `concurrency` at a time: calls and MiB a second. */
async function burst(url: string, key: string, total: number, concurrency: number): Promise<{ callsPerSec: number; mibPerSec: number }> {
  let started = 0;
  let bytes = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (started < total) {
      started++;
      // Awaited first: `bytes += await …` would read `bytes` before the call and lose the other workers' bytes.
      const call = await streamedCall(url, key, true).catch((error: Error) => {
        throw new Error(`${url}: ${error.message}`);
      });
      bytes += call.bytes;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - t0) / 1000;
  return { callsPerSec: total / seconds, mibPerSec: bytes / 1024 / 1024 / seconds };
}

const ms = (value: number) => `${round(value, 2)} ms`;

/** An agent's request body of about `kib` KiB: a conversation of text, tool calls and tool results. */
function conversationBody(kib: number, modelLast: boolean): Buffer {
  const messages: unknown[] = [];
  let size = 0;
  for (let i = 0; size < kib * 1024; i++) {
    const text = `Step ${i}: the "tests" in {src/x.ts} fail with \\n and \u00e9 — ${'lorem ipsum dolor sit amet '.repeat(20)}`;
    const message = i % 2 === 0
      ? { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: [{ type: 'text', text }] }] }
      : { role: 'assistant', content: [{ type: 'text', text }, { type: 'tool_use', id: `toolu_${i}`, name: 'Bash', input: { command: `npx vitest run test/${i}.test.ts`, timeout: 120000 } }] };
    size += JSON.stringify(message).length;
    messages.push(message);
  }
  const rest = { max_tokens: 32000, system: [{ type: 'text', text: 'You are an agent.' }], messages, tools: [], stream: true };
  return Buffer.from(JSON.stringify(modelLast ? { ...rest, model: MODEL } : { model: MODEL, ...rest }));
}

/** µs p50 per body: the relay's read of the model, and JSON.parse of the body, interleaved. */
async function bodyReads(): Promise<{ bytes: number; first: { scan: number; parse: number }; last: { scan: number; parse: number } }> {
  const { prepareBody } = await import('../src/runner/relay/request.ts');
  const measure = (body: Buffer) => {
    const scan: number[] = [];
    const parse: number[] = [];
    const one = (list: number[] | null, read: () => unknown) => {
      const t0 = performance.now();
      if (read() !== MODEL) throw new Error('the model was not read');
      list?.push((performance.now() - t0) * 1000);
    };
    for (let i = 0; i < 250; i++) {
      const keep = i >= 50;
      const viaScan = () => prepareBody('anthropic', '/v1/messages', body, 'application/json').model;
      const viaParse = () => (JSON.parse(body.toString('utf8')) as { model: string }).model;
      if (i % 2 === 0) {
        one(keep ? scan : null, viaScan);
        one(keep ? parse : null, viaParse);
      } else {
        one(keep ? parse : null, viaParse);
        one(keep ? scan : null, viaScan);
      }
    }
    return { scan: summary(scan).p50, parse: summary(parse).p50 };
  };
  const first = conversationBody(BODY_KIB, false);
  return { bytes: first.length, first: measure(first), last: measure(conversationBody(BODY_KIB, true)) };
}

export async function run(): Promise<{ rows: Row[] }> {
  log(`relay bench on ${machineLine()}`);
  const loadBefore = os.loadavg();
  const upstream = startRole('upstream');
  let relay: RoleChild | null = null;
  try {
    const direct = `http://127.0.0.1:${(await upstream.next()).port as number}`;
    relay = startRole('relay', { BENCH_RELAY_UPSTREAM: direct });
    const info = await relay.next();
    const viaRelay = `http://127.0.0.1:${info.port as number}/anthropic`;
    const placeholder = info.placeholder as string;

    const pair = async (i: number) => {
      const one = () => streamedCall(viaRelay, placeholder, false);
      const two = () => streamedCall(direct, REAL_KEY, false);
      if (i % 2 === 0) {
        const r = await one();
        return { relayed: r, straight: await two() };
      }
      const d = await two();
      return { relayed: await one(), straight: d };
    };
    log(`warm-up: ${WARMUP} pairs …`);
    for (let i = 0; i < WARMUP; i++) await pair(i);
    log(`${CALLS} interleaved pairs of streamed calls (${DELTAS} deltas each) …`);
    const first = { relayed: [] as number[], straight: [] as number[], added: [] as number[] };
    const last = { relayed: [] as number[], straight: [] as number[], added: [] as number[] };
    for (let i = 0; i < CALLS; i++) {
      const { relayed, straight } = await pair(i);
      first.relayed.push(relayed.first);
      first.straight.push(straight.first);
      first.added.push(relayed.first - straight.first);
      last.relayed.push(relayed.last);
      last.straight.push(straight.last);
      last.added.push(relayed.last - straight.last);
    }

    log(`${BODY_CALLS} interleaved pairs with a ~${BODY_KIB} KiB request body …`);
    const agentBody = conversationBody(BODY_KIB, false);
    const bodied = { first: [] as number[], last: [] as number[] };
    for (let i = -Math.ceil(BODY_CALLS / 10); i < BODY_CALLS; i++) {
      const one = () => streamedCall(viaRelay, placeholder, false, agentBody);
      const two = () => streamedCall(direct, REAL_KEY, false, agentBody);
      const straightFirst = i % 2 !== 0;
      const d0 = straightFirst ? await two() : null;
      const r = await one();
      const d = d0 ?? (await two());
      if (i < 0) continue;
      bodied.first.push(r.first - d.first);
      bodied.last.push(r.last - d.last);
    }

    log(`throughput: ${BURST} calls of ~${KIB} KiB, ${STREAMS} at a time, direct and through the relay, twice each …`);
    const straightBursts = [];
    const relayBursts = [];
    for (let turn = 0; turn < 2; turn++) {
      straightBursts.push(await burst(direct, REAL_KEY, BURST, STREAMS));
      relayBursts.push(await burst(viaRelay, placeholder, BURST, STREAMS));
    }
    log(`reading the model of a ~${BODY_KIB} KiB request body …`);
    const reads = await bodyReads();
    relay.child.stdin!.write('count\n');
    const counted = await relay.next();
    const expected = WARMUP + CALLS + Math.ceil(BODY_CALLS / 10) + BODY_CALLS + 2 * BURST;
    if (counted.calls !== expected || counted.priced !== expected) throw new Error(`the relay recorded ${String(counted.calls)} calls (${String(counted.priced)} priced) of ${expected}`);
    const best = (list: { callsPerSec: number; mibPerSec: number }[]) => list.reduce((a, b) => (b.callsPerSec > a.callsPerSec ? b : a));
    const s = best(straightBursts);
    const r = best(relayBursts);
    const f = { relayed: summary(first.relayed), straight: summary(first.straight), added: summary(first.added) };
    const l = { relayed: summary(last.relayed), straight: summary(last.straight), added: summary(last.added) };
    const loadAfter = os.loadavg();
    return {
      rows: [
        { name: `time to first byte, through the relay / straight, p50 (${CALLS} interleaved pairs)`, value: `${ms(f.relayed.p50)} / ${ms(f.straight.p50)}` },
        { name: 'relay: added time to first byte p50 / p90 / p99', value: `${ms(f.added.p50)} / ${ms(f.added.p90)} / ${ms(f.added.p99)}`, target: 'p50 < 2 ms', pass: f.added.p50 < 2 },
        { name: `time to last byte, through the relay / straight, p50`, value: `${ms(l.relayed.p50)} / ${ms(l.straight.p50)}` },
        { name: 'relay: added time to last byte p50 / p90 / p99', value: `${ms(l.added.p50)} / ${ms(l.added.p90)} / ${ms(l.added.p99)}`, target: 'p50 < 2 ms', pass: l.added.p50 < 2 },
        { name: `relay: added time to first / last byte p50 (p90), ${round(agentBody.length / 1024, 0)} KiB request bodies (${BODY_CALLS} interleaved pairs)`, value: `${ms(summary(bodied.first).p50)} (${ms(summary(bodied.first).p90)}) / ${ms(summary(bodied.last).p50)} (${ms(summary(bodied.last).p90)})`, target: 'p50 < 2 ms', pass: summary(bodied.last).p50 < 2 },
        { name: `${STREAMS} concurrent streamed calls (~${KIB} KiB each): through the relay`, value: `${round(r.callsPerSec, 0)} calls/s, ${round(r.mibPerSec, 1)} MiB/s` },
        { name: `${STREAMS} concurrent streamed calls: straight to the stand-in`, value: `${round(s.callsPerSec, 0)} calls/s, ${round(s.mibPerSec, 1)} MiB/s` },
        { name: `reading the model of a ${round(reads.bytes / 1024, 0)} KiB request body, p50: scan (model first / last) vs JSON.parse`, value: `${round(reads.first.scan, 1)} µs / ${round(reads.last.scan, 1)} µs vs ${round(reads.first.parse, 1)} µs` },
        { name: 'calls the relay recorded (usage read and priced)', value: `${String(counted.calls)} of ${expected}` },
        { name: 'load average (1/5/15 min) before / after', value: `${loadAvgText(loadBefore)} — ${loadAvgText(loadAfter)}` },
      ],
    };
  } finally {
    agent.destroy();
    relay?.child.kill('SIGTERM');
    upstream.child.kill('SIGTERM');
  }
}

const role = process.env.BENCH_RELAY_ROLE;
if (role === 'upstream') void upstreamRole();
else if (role === 'relay') void relayRole(process.env.BENCH_RELAY_UPSTREAM ?? '');
else runIfMain(import.meta.url, 'Model relay: added latency per streamed call, throughput at 50 streams', run);
