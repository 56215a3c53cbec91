/**
 * 1,000 simulated runners against one `drover serve`: each registers, holds one WebSocket, says
 * hello and heartbeats every 10 s (phases spread over the interval). Once all are online, the
 * server's CPU share (utime + stime from /proc over a 60 s window) and memory are read.
 *
 * Run alone: `npx tsx bench/runner-sim.ts` (BENCH_RUNNERS=1000, BENCH_WINDOW_SEC=60).
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import WebSocket from 'ws';
import { encode } from '../src/gateway/protocol.ts';
import { ROOT, droverEnv, installCleanupHandlers, makeTempDir, readCpuSeconds, readMemory, removeTempDir, startProcess } from './proc.ts';
import { markdownRows, type BenchRow } from './pods.ts';

const HEARTBEAT_MS = 10_000;

export async function run(): Promise<{ rows: BenchRow[] }> {
  const count = Number(process.env.BENCH_RUNNERS ?? 1000);
  const windowSec = Number(process.env.BENCH_WINDOW_SEC ?? 60);
  const dir = makeTempDir('runner-sim');
  const dataDir = path.join(dir, 'data');
  const server = await startProcess({
    name: 'drover',
    args: [path.join(ROOT, 'bin/drover.mjs'), 'serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir, '--no-local-runner'],
    env: droverEnv(),
    logDir: dir,
    ready: /Drover listening on (http:\/\/\S+)/,
  });
  const sockets: WebSocket[] = [];
  const timers: NodeJS.Timeout[] = [];
  try {
    const admin = fs.readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
    const key = fs.readFileSync(path.join(dataDir, 'bootstrap-api-key'), 'utf8').trim();
    const tokenResponse = await fetch(`${server.url}/api/v1/admin/orgs/default/runner-tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: '{}',
    });
    const { token } = (await tokenResponse.json()) as { token: string };
    const credentials: string[] = [];
    for (let i = 0; i < count; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(50, count - i) }, async (_, j) => {
          const response = await fetch(`${server.url}/api/v1/runner/register`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ token, name: `sim-${i + j}`, labels: [], max_pods: 4, version: 'sim', os: 'linux', arch: 'x64' }),
          });
          return ((await response.json()) as { credential: string }).credential;
        }),
      );
      credentials.push(...batch);
    }
    const wsUrl = server.url.replace(/^http/, 'ws') + '/api/v1/runner/connect';
    const hello = encode({ type: 'hello', version: 'sim', os: 'linux', arch: 'x64', labels: [], max_pods: 4, agents: ['shell'], draining: false, pods: [], finished: [] });
    const heartbeat = encode({ type: 'heartbeat', draining: false, pods: [] });
    for (let i = 0; i < credentials.length; i += 100) {
      await Promise.all(
        credentials.slice(i, i + 100).map(
          (credential, j) =>
            new Promise<void>((resolve, reject) => {
              const socket = new WebSocket(wsUrl, { headers: { authorization: `Bearer ${credential}` } });
              sockets.push(socket);
              socket.once('open', () => {
                socket.send(hello);
                const phase = ((i + j) / count) * HEARTBEAT_MS;
                timers.push(
                  setTimeout(() => {
                    socket.send(heartbeat);
                    timers.push(setInterval(() => socket.readyState === WebSocket.OPEN && socket.send(heartbeat), HEARTBEAT_MS));
                  }, phase),
                );
                resolve();
              });
              socket.once('error', reject);
            }),
        ),
      );
    }
    const deadline = Date.now() + 60_000;
    let online = 0;
    while (Date.now() < deadline) {
      const response = await fetch(`${server.url}/api/v1/ext/orgs/default/runners`, { headers: { 'x-api-key': key } });
      const { runners } = (await response.json()) as { runners: { status: string }[] };
      online = runners.filter((r) => r.status === 'online').length;
      if (online >= count) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    await new Promise((r) => setTimeout(r, 2000));
    const cpuBefore = readCpuSeconds(server.pid) ?? 0;
    const started = Date.now();
    await new Promise((r) => setTimeout(r, windowSec * 1000));
    const cpuShare = ((readCpuSeconds(server.pid) ?? 0) - cpuBefore) / ((Date.now() - started) / 1000);
    const memory = readMemory(server.pid);
    const rssMb = memory ? memory.rssKb / 1024 : NaN;
    const openSockets = sockets.filter((s) => s.readyState === WebSocket.OPEN).length;
    return {
      rows: [
        { name: `runners online (of ${count} simulated)`, value: String(online), target: String(count), pass: online >= count },
        { name: `sockets still open after the ${windowSec} s window`, value: String(openSockets), target: String(count), pass: openSockets === count },
        { name: `server CPU over ${windowSec} s, heartbeats every 10 s`, value: `${(cpuShare * 100).toFixed(1)} % of one core`, target: '< 10 %', pass: cpuShare < 0.1 },
        { name: 'server RSS', value: `${rssMb.toFixed(1)} MB (peak ${memory ? (memory.hwmKb / 1024).toFixed(1) : '?'} MB)`, target: '< 300 MB', pass: rssMb < 300 },
      ],
    };
  } finally {
    for (const timer of timers) clearTimeout(timer);
    for (const socket of sockets) socket.terminate();
    await server.stop();
    removeTempDir(dir);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  installCleanupHandlers();
  run().then(
    ({ rows }) => console.log(`\n== Runner connections ==\n\n${markdownRows(rows)}\n`),
    (error) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
