/**
 * Round trip of a tool call through `drover mcp` (docs/mcp.md), as an agent makes it: the MCP
 * SDK's Client talking over stdio to one `drover mcp` process, which calls a running `drover serve`
 * (embedded SQLite, the default) with an API key. Measured from `callTool` to its answer, for
 * `channel_post` (a write) and `ticket_get` (a read), one call after another. Target: p50 < 15 ms.
 *
 * For scale: the same operations straight over HTTP from this process (what the MCP hop adds is
 * the difference), and the time from spawning `drover mcp` to its `tools/list` answer.
 */
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CpuWindow, ORG, ROOT, droverEnv, expect, log, loadAvgText, machineLine, makeTempDir, removeTempDir, round, runIfMain, startServe, summary, type Row } from './harness.ts';

const CALLS = Number(process.env.BENCH_MCP_CALLS ?? 500);
const TARGET_MS = 15;
const DROVER = path.join(ROOT, 'bin', 'drover.mjs');

const fmt = (s: ReturnType<typeof summary>) => `p50 ${round(s.p50, 2)} ms, p99 ${round(s.p99, 2)} ms, max ${round(s.max, 1)} ms (n=${s.n})`;

async function timedSeries(calls: number, one: (i: number) => Promise<unknown>): Promise<ReturnType<typeof summary>> {
  for (let i = 0; i < 20; i++) await one(i); // warm up
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    await one(i);
    times.push(performance.now() - started);
  }
  return summary(times);
}

export async function run(): Promise<{ rows: Row[] }> {
  log(`MCP bench on ${machineLine()}`);
  const dataDir = makeTempDir('mcp');
  try {
    const server = await startServe({ dataDir, localRunner: false });
    try {
      const headers = { 'x-api-key': server.apiKey };
      const channel = await expect<{ channel: { id: number } }>(201, server.url, 'POST', `${ORG}/channels`, { headers, json: { name: 'bench-mcp' } });
      const ticket = await expect<{ ticket: { slug: string } }>(201, server.url, 'POST', `${ORG}/tickets`, { headers, json: { type: 'task', title: 'Bench ticket', description: 'x'.repeat(2000) } });
      const env = droverEnv({ DROVER_API_URL: server.url, DROVER_ORG: 'default', DROVER_API_KEY: server.apiKey, DROVER_CHANNEL_ID: String(channel.channel.id) });

      const startups: number[] = [];
      for (let i = 0; i < 10; i++) {
        const started = performance.now();
        const probe = new Client({ name: 'bench-start', version: '1' });
        await probe.connect(new StdioClientTransport({ command: process.execPath, args: [DROVER, 'mcp'], env: env as Record<string, string> }));
        await probe.listTools();
        startups.push(performance.now() - started);
        await probe.close();
      }

      const client = new Client({ name: 'bench', version: '1' });
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [DROVER, 'mcp'], env: env as Record<string, string> }));
      const check = (answer: Awaited<ReturnType<Client['callTool']>>) => {
        if (answer.isError) throw new Error(`tool error: ${JSON.stringify(answer.content)}`);
      };
      const usage = new CpuWindow({ server: server.pid });
      const post = await timedSeries(CALLS, async (i) => check(await client.callTool({ name: 'channel_post', arguments: { content: `bench message ${i}` } })));
      const get = await timedSeries(CALLS, async () => check(await client.callTool({ name: 'ticket_get', arguments: { slug: ticket.ticket.slug } })));
      const cpu = usage.end();
      await client.close();

      const base = `${server.url}${ORG}`;
      const direct = {
        post: await timedSeries(CALLS, async (i) => {
          const response = await fetch(`${base}/channels/${channel.channel.id}/messages`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ content: `direct ${i}` }) });
          await response.text();
        }),
        get: await timedSeries(CALLS, async () => (await fetch(`${base}/tickets/${ticket.ticket.slug}`, { headers })).text()),
      };
      log(`channel_post: ${fmt(post)}; ticket_get: ${fmt(get)}`);
      const start = summary(startups);
      return {
        rows: [
          { name: '`channel_post` round trip (MCP client → drover mcp → API → answer)', value: fmt(post), target: `p50 < ${TARGET_MS} ms`, pass: post.p50 < TARGET_MS },
          { name: '`ticket_get` round trip', value: fmt(get), target: `p50 < ${TARGET_MS} ms`, pass: get.p50 < TARGET_MS },
          { name: 'the same calls straight over HTTP (POST message / GET ticket)', value: `${fmt(direct.post)} / ${fmt(direct.get)}` },
          { name: '`drover mcp` start: spawn → initialize → tools/list answered', value: `p50 ${round(start.p50, 0)} ms, max ${round(start.max, 0)} ms (n=${start.n})` },
          { name: 'CPU during the MCP series, % of one core', value: `server ${cpu.pct.server}%, other processes ${cpu.otherPct}% (drover mcp and this client included)` },
          { name: 'load average (1/5/15 min) start → end', value: `${loadAvgText(cpu.loadAvg.start)} → ${loadAvgText(cpu.loadAvg.end)}` },
        ],
      };
    } finally {
      await server.stop();
    }
  } finally {
    removeTempDir(dataDir);
  }
}

runIfMain(import.meta.url, 'MCP: tool call round trip through drover mcp', run);
