/**
 * Part of the delivery bench (bench/delivery.ts): "pod end → delivery recorded". A real
 * `drover serve` with its local runner (bwrap) and the bench's repository registered by path; each
 * `shell` pod changes a file and, as its last act, prints the time. The figure is from that time
 * to the pod's `delivery` showing as settled through the API (polled every 10 ms), so it holds
 * the runner's capture and push, the report over the runner link and the server's recording.
 */
import fs from 'node:fs';
import path from 'node:path';
import { call, expect, ORG, round, sleep, startServe, summary, type Row } from './harness.ts';

const POLL_MS = 10;

export async function podEndToRecorded(root: string, origin: string, rounds: number, warmup: number): Promise<Row[]> {
  const dataDir = path.join(root, 'serve');
  fs.mkdirSync(dataDir, { recursive: true });
  const server = await startServe({ name: 'delivery-serve', dataDir, localRunner: true, env: { DROVER_LOG_LEVEL: 'warn' } });
  try {
    const headers = { 'x-api-key': server.apiKey };
    await expect(201, server.url, 'POST', '/api/v1/admin/orgs/default/repositories', {
      headers: { authorization: `Bearer ${server.adminToken}` },
      json: { name: 'bench', full_name: 'bench/bench', provider: 'git', url: origin, default_branch: 'main' },
    });
    const figures: number[] = [];
    for (let i = 0; i < warmup + rounds; i++) {
      const script = [`echo "pod round ${i}" >> dir7/file7.txt`, `echo new > pod-new-${i}.txt`, 'echo "ENDED_AT $(date +%s%3N)"'].join('\n');
      const made = await expect<{ pod: { pod_key: string } }>(201, server.url, 'POST', `${ORG}/pods`, {
        headers,
        json: { agent_slug: 'shell', agentfile_layer: ['REPO bench', 'PROMPT <<END', script, 'END'].join('\n') },
      });
      const key = made.pod.pod_key;
      let recordedAt = 0;
      for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(POLL_MS)) {
        const got = await call<{ pod: { delivery: { status: string; error: string | null } | null } }>(server.url, 'GET', `${ORG}/pods/${key}`, { headers });
        const status = got.body.pod.delivery?.status;
        if (status && status !== 'pending') {
          recordedAt = Date.now();
          if (status !== 'pushed') throw new Error(`pod ${key}: delivery ${status}: ${got.body.pod.delivery?.error ?? ''}`);
          break;
        }
      }
      if (recordedAt === 0) throw new Error(`pod ${key}: no delivery recorded within 120 s`);
      const output = await call<{ output: string }>(server.url, 'GET', `${ORG}/pods/${key}/output`, { headers });
      const ended = Number(/ENDED_AT (\d+)/.exec(output.body.output)?.[1]);
      if (!Number.isFinite(ended)) throw new Error(`pod ${key}: no ENDED_AT line in its output`);
      if (i >= warmup) figures.push(recordedAt - ended);
    }
    const s = summary(figures);
    return [{ name: `pod end → delivery recorded (agent's last line to the API showing it; ${s.n} pods, bwrap, local runner) p50 / p90 / max`, value: `${round(s.p50, 0)} ms / ${round(s.p90, 0)} ms / ${round(s.max, 0)} ms` }];
  } finally {
    await server.stop();
  }
}
