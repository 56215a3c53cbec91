/**
 * Network walls bench: `npx tsx bench/network.ts` (docs/runners.md "Network").
 *
 * 1. Pod start: the time from asking for a sandboxed `true` to its exit, with the network walls
 *    (PodNetwork.open: proxy and Drover API on one in-pod port, one operator loopback endpoint;
 *    two in-pod socat bridges waited for; closed after) against the same bubblewrap sandbox without them,
 *    interleaved (walls, plain, walls, …) after a warm-up. BENCH_NETWORK_STARTS pairs (200).
 * 2. CONNECT tunnel through a pod's proxy (runner side: its Unix socket) to a loopback echo
 *    server the operator allowed, against a direct TCP connection to it, interleaved: the round
 *    trip of a 64-byte message (BENCH_NETWORK_PINGS, 2,000 each) and the throughput of 256 MiB.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { envInt, loadAvgText, log, round, runIfMain, runParts, summary, type Row } from './harness.ts';
import { openSandbox, type SandboxLaunch } from '../src/runner/sandbox/index.ts';
import { runnerNetwork } from '../src/runner/network/runner.ts';
import { PodNetwork } from '../src/runner/network/index.ts';

const BULK = 256 * 1024 * 1024;
const ms = (n: number) => `${round(n, 1)} ms`;

/** Runs a sandbox launch to its end: bwrap reads its options from the pipe on fd 3. */
function exitOf(launch: SandboxLaunch): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(launch.command, launch.args, { env: launch.env, stdio: ['ignore', 'ignore', 'ignore', 'pipe'] });
    const fd3 = child.stdio[3] as Writable;
    fd3.on('error', () => {});
    fd3.end(launch.fd3 ?? '');
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
  });
}

async function measure(): Promise<Row[]> {
  const STARTS = envInt('BENCH_NETWORK_STARTS', 200);
  const PINGS = envInt('BENCH_NETWORK_PINGS', 2000);
  const rows: Row[] = [{ name: 'load average (1 / 5 / 15 min) at the start', value: loadAvgText(os.loadavg()) }];
  const scratch = fs.mkdtempSync('/var/tmp/drover-bench-network-');
  const work = path.join(scratch, 'work');
  const ws = path.join(scratch, 'ws');
  fs.mkdirSync(ws, { recursive: true });
  const echo = net.createServer((s) => s.pipe(s));
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
  const echoPort = (echo.address() as net.AddressInfo).port;
  try {
    const pathEnv = process.env.PATH ?? '/usr/bin:/bin';
    const sandbox = await openSandbox('bwrap', { workDir: work, pathEnv });
    const runner = (await runnerNetwork(sandbox, { workDir: work, pathEnv, allowHosts: [`127.0.0.1:${echoPort}`], servers: ['http://127.0.0.1:4000'] }))!;
    const spec = { mode: 'restricted' as const, allow: [], agentSlug: 'shell', builtin: true, apiUrl: 'http://127.0.0.1:4000' };
    const env = { PATH: '/usr/bin:/bin' };
    let seq = 0;
    const walled = async () => {
      const t0 = performance.now();
      const pod = await PodNetwork.open(runner, { ...spec, key: `p-bench-${seq++}` }, () => {});
      const inner = pod.wrap('/bin/true', []);
      await exitOf(sandbox.wrap(inner.command, inner.args, { cwd: ws, writable: [ws], readOnly: [], netDir: pod.room.dir }, { ...env, ...pod.env }));
      await pod.close();
      return performance.now() - t0;
    };
    const plain = async () => {
      const t0 = performance.now();
      await exitOf(sandbox.wrap('/bin/true', [], { cwd: ws, writable: [ws], readOnly: [] }, env));
      return performance.now() - t0;
    };
    for (let i = 0; i < 10; i++) await walled().then(plain);
    const w: number[] = [];
    const p: number[] = [];
    for (let i = 0; i < STARTS; i++) {
      w.push(await walled());
      p.push(await plain());
    }
    const [sw, sp, sa] = [summary(w), summary(p), summary(w.map((v, i) => v - p[i]))];
    log(`pod start, ${STARTS} interleaved pairs: walls p50 ${ms(sw.p50)} p99 ${ms(sw.p99)}; plain bwrap p50 ${ms(sp.p50)} p99 ${ms(sp.p99)}; added p50 ${ms(sa.p50)} p99 ${ms(sa.p99)}`);
    rows.push(
      { name: `sandboxed true with the network walls (${STARTS}, interleaved) p50 / p99`, value: `${ms(sw.p50)} / ${ms(sw.p99)}` },
      { name: `sandboxed true, plain bwrap (${STARTS}, interleaved) p50 / p99`, value: `${ms(sp.p50)} / ${ms(sp.p99)}` },
      { name: 'added by the network walls, per pair, p50', value: ms(sa.p50), target: '< 40 ms', pass: sa.p50 < 40 },
      { name: 'added by the network walls, per pair, p99', value: ms(sa.p99), target: '< 100 ms', pass: sa.p99 < 100 },
    );

    // 2. The proxy, runner side.
    const pod = await PodNetwork.open(runner, { ...spec, key: 'p-bench-proxy' }, () => {});
    const proxySocket = pod.room.bridges.find((b) => `http://127.0.0.1:${b.port}` === pod.env.HTTP_PROXY)!.socket;
    const tunnel = () =>
      new Promise<net.Socket>((resolve, reject) => {
        const s = net.connect(proxySocket);
        s.once('error', reject);
        s.write(`CONNECT 127.0.0.1:${echoPort} HTTP/1.1\r\nHost: 127.0.0.1:${echoPort}\r\n\r\n`);
        s.once('data', (d) => (String(d).startsWith('HTTP/1.1 200') ? resolve(s) : reject(new Error(String(d)))));
      });
    const directly = () => new Promise<net.Socket>((resolve, reject) => net.connect(echoPort, '127.0.0.1').once('connect', function (this: net.Socket) { resolve(this); }).once('error', reject));
    const ping = (s: net.Socket) =>
      new Promise<number>((resolve) => {
        const t0 = performance.now();
        s.once('data', () => resolve(performance.now() - t0));
        s.write(Buffer.alloc(64, 1));
      });
    const bulk = (s: net.Socket) =>
      new Promise<number>((resolve) => {
        let got = 0;
        const t0 = performance.now();
        s.on('data', (d: Buffer) => {
          got += d.length;
          if (got >= BULK) resolve((BULK / (1024 * 1024)) / ((performance.now() - t0) / 1000));
        });
        const chunk = Buffer.alloc(1024 * 1024, 2);
        let sent = 0;
        const pump = () => {
          while (sent < BULK) {
            sent += chunk.length;
            if (!s.write(chunk)) return void s.once('drain', pump);
          }
        };
        pump();
      });
    const [t, d] = [await tunnel(), await directly()];
    for (let i = 0; i < 100; i++) await ping(t).then(() => ping(d));
    const tp: number[] = [];
    const dp: number[] = [];
    for (let i = 0; i < PINGS; i++) {
      tp.push(await ping(t));
      dp.push(await ping(d));
    }
    const [st, sd] = [summary(tp), summary(dp)];
    rows.push({ name: `round trip of 64 bytes, ${PINGS} interleaved: CONNECT tunnel / direct, p50 (p99)`, value: `${ms(st.p50)} (${ms(st.p99)}) / ${ms(sd.p50)} (${ms(sd.p99)})` });
    t.destroy();
    d.destroy();
    const rates: string[] = [];
    for (let round = 0; round < 2; round++) {
      const [a, b] = [await tunnel(), await directly()];
      rates.push(`tunnel ${(await bulk(a)).toFixed(0)} MiB/s, direct ${(await bulk(b)).toFixed(0)} MiB/s`);
      a.destroy();
      b.destroy();
    }
    rows.push({ name: 'throughput of 256 MiB echoed, 2 rounds', value: rates.join('; ') });
    await pod.close();
    return rows;
  } finally {
    echo.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

export const run = () => runParts('network', 'BENCH_NETWORK_ONLY', { a: measure });

runIfMain(import.meta.url, 'Network walls: pod start and the egress proxy', run);
