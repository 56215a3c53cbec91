/**
 * Channel message reads do not slow down as a channel grows: p50/p99 of the store's page read
 * (`listMessages`, 50 messages) on a channel of 100 messages and on one of 1,000,000, for the newest
 * page and for older pages (`before` a cursor deep in the channel's older half, rotating).
 *
 * SQLite in a temp dir, seeded through Kysely in one transaction with multi-row inserts of 500.
 * The small channel's messages are interleaved with the big one's, so its ids are spread over the
 * whole table, as in a busy deployment.
 *
 * Run alone: `npx tsx bench/channels.ts`. Environment:
 *   BENCH_CHANNEL_MESSAGES=1000000   messages in the big channel
 *   BENCH_CHANNEL_ITERATIONS=2000    measured reads per row (after 200 discarded warm-up reads)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as admin from '../src/domain/admin/service.ts';
import { createChannel } from '../src/domain/channels/service.ts';
import type { DomainContext } from '../src/domain/context.ts';
import { insertMessages, listMessages, type MessagePage } from '../src/store/channel-messages.ts';
import { openStore, type Store } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import type { NewChannelMessage } from '../src/store/schema.ts';
import { reportFigures } from './summary.ts';

export interface ChannelBenchRow {
  channel: string;
  messages: number;
  read: 'newest page' | 'older page';
  limit: number;
  iterations: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
}

export interface ChannelBenchResult {
  rows: ChannelBenchRow[];
  seedSeconds: number;
  databaseMb: number;
}

const PAGE = 50;
const WARMUP = 200;
const WORDS = ['build', 'failed', 'on', 'main', 'retrying', 'the', 'agent', 'pushed', 'a', 'fix', 'for', 'ticket', 'review', 'please', 'done'];

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const round = (ms: number): number => Math.round(ms * 1000) / 1000;

/** Seeds both channels in one transaction; returns the ids of each channel's messages in order. */
async function seed(store: Store, orgId: number, big: number, small: number, bigCount: number, smallCount: number) {
  const bigIds: number[] = [];
  const smallIds: number[] = [];
  const every = Math.max(1, Math.floor(bigCount / smallCount));
  const start = Date.now() - bigCount * 1000;
  await store.db.transaction().execute(async (trx) => {
    let pending: NewChannelMessage[] = [];
    let nextId = 1;
    const flush = async () => {
      await insertMessages(trx, pending, 500);
      pending = [];
    };
    const push = async (channelId: number, i: number, ids: number[]) => {
      const words = 6 + (i % 20);
      let content = '';
      for (let w = 0; w < words; w++) content += (w ? ' ' : '') + WORDS[(i * 7 + w * 3) % WORDS.length];
      pending.push({ org_id: orgId, channel_id: channelId, content, sender_type: i % 3 === 0 ? 'agent' : 'api', pod_key: null, created_at: start + nextId });
      ids.push(nextId++);
      if (pending.length === 50_000) await flush();
    };
    for (let i = 0; i < bigCount; i++) {
      await push(big, i, bigIds);
      if (i % every === every - 1 && smallIds.length < smallCount) await push(small, i, smallIds);
    }
    while (smallIds.length < smallCount) await push(small, smallIds.length, smallIds);
    await flush();
  });
  return { bigIds, smallIds };
}

async function time(read: () => Promise<unknown>, iterations: number) {
  for (let i = 0; i < WARMUP; i++) await read();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    await read();
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  return { p50Ms: round(percentile(samples, 50)), p99Ms: round(percentile(samples, 99)), meanMs: round(samples.reduce((s, x) => s + x, 0) / samples.length) };
}

export async function benchChannelMessages(
  options: { messages?: number; iterations?: number; log?: (line: string) => void } = {},
): Promise<ChannelBenchResult> {
  const bigCount = options.messages ?? envNumber('BENCH_CHANNEL_MESSAGES', 1_000_000);
  const iterations = options.iterations ?? envNumber('BENCH_CHANNEL_ITERATIONS', 2000);
  const log = options.log ?? ((line: string) => process.stdout.write(line + '\n'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-bench-channels-'));
  const file = path.join(dir, 'drover.sqlite');
  const store = openStore({ sqlitePath: file });
  try {
    await migrateToLatest(store);
    const ctx: DomainContext = { store, now: Date.now };
    const org = await admin.createOrg(ctx, { slug: 'bench', name: 'Bench' });
    const big = await createChannel(ctx, org.id, { name: 'big' });
    const small = await createChannel(ctx, org.id, { name: 'small' });

    log(`seeding ${bigCount.toLocaleString('en-US')} + 100 messages …`);
    const t0 = performance.now();
    const { bigIds, smallIds } = await seed(store, org.id, big.id, small.id, bigCount, 100);
    const seedSeconds = Math.round((performance.now() - t0) / 100) / 10;
    // Checkpoints run in the background, so most of the data may still be in the WAL file.
    const fileBytes = (name: string) => (fs.existsSync(name) ? fs.statSync(name).size : 0);
    const databaseMb = Math.round((fileBytes(file) + fileBytes(`${file}-wal`)) / 1024 / 1024);
    log(`seeded in ${seedSeconds} s (${databaseMb} MB database + WAL)`);

    const rows: ChannelBenchRow[] = [];
    for (const [name, channelId, ids] of [
      ['100 messages', small.id, smallIds],
      [`${bigCount.toLocaleString('en-US')} messages`, big.id, bigIds],
    ] as const) {
      // Older pages: `before` cursors spread over the channel's older half (for 1M: 500k+ newer messages above).
      const cursors = Array.from({ length: 64 }, (_, i) => ids[Math.max(PAGE, Math.floor(((i + 0.5) / 64) * (ids.length / 2)))]);
      let turn = 0;
      const reads: [ChannelBenchRow['read'], () => MessagePage][] = [
        ['newest page', () => ({ limit: PAGE })],
        ['older page', () => ({ limit: PAGE, before: cursors[turn++ % cursors.length] })],
      ];
      for (const [read, page] of reads) {
        const stats = await time(async () => {
          const got = await listMessages(store.db, channelId, page());
          if (got.length === 0) throw new Error(`empty page reading ${name}`);
        }, iterations);
        rows.push({ channel: name, messages: ids.length, read, limit: PAGE, iterations, ...stats });
      }
    }

    log('');
    log('channel               read          p50 ms   p99 ms   mean ms');
    for (const r of rows) {
      log(`${r.channel.padEnd(22)}${r.read.padEnd(14)}${r.p50Ms.toFixed(3).padStart(7)}  ${r.p99Ms.toFixed(3).padStart(7)}  ${r.meanMs.toFixed(3).padStart(8)}`);
    }
    return { rows, seedSeconds, databaseMb };
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const result = await benchChannelMessages();
  reportFigures(
    'Channel reads (SQLite)',
    result.rows.map((r) => ({ figure: `${r.channel}, ${r.read}, p50 / p99`, measured: `${r.p50Ms} / ${r.p99Ms} ms` })),
  );
}
