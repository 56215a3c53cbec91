/**
 * GET /activity and the event-retention sweep at a million events (issue 25).
 *
 * In one process (the app through Fastify's inject, the database a real SQLite file): a million events are written straight to the log, 60 % of them older
 * than the retention. Then:
 * - GET /activity p50/p99: the first page (50), a filtered page (types + actor_type), and a page
 *   deep in the log (by cursor), each after a warm-up;
 * - the sweep: how long removing the old 600,000 takes, in its batches;
 * - write latency (POST /tickets, one event each) with no sweep running, during the sweep, and
 *   with no sweep again, interleaved in one run (baseline before and after).
 */
import crypto from 'node:crypto';
import path from 'node:path';
import { buildApp } from '../src/serve/build-app.ts';
import * as admin from '../src/domain/admin/service.ts';
import { SCOPES } from '../src/protocol/scopes.ts';
import { SecretBox } from '../src/domain/secrets.ts';
import { EventRetention } from '../src/events/retention.ts';
import { openStore } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { installSignalCleanup, makeTempDir, removeTempDir } from './harness.ts';
import { reportFigures, type Figure } from './summary.ts';

const BENCH = 'Activity log';
const figures: Figure[] = [];

const TOTAL = Number(process.env.BENCH_ACTIVITY_EVENTS ?? 1_000_000);
const OLD_SHARE = 0.6;
const RETENTION_MS = 30 * 86_400_000;

const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const ms = (n: number) => `${n.toFixed(2)} ms`;

async function main(): Promise<void> {
  installSignalCleanup();
  const dir = makeTempDir('activity');
  const store = openStore({ sqlitePath: path.join(dir, 'drover.sqlite') });
  await migrateToLatest(store);
  const app = await buildApp({ store, adminToken: 'bench-admin-token-0123456789', rateLimitPerMinute: 0, secrets: new SecretBox(crypto.randomBytes(32)) });
  const ctx = app.drover.ctx;
  const org = await admin.createOrg(ctx, { slug: 'bench', name: 'Bench' });
  const { key } = await admin.issueApiKey(ctx, store.db, org.id, { name: 'bench', scopes: SCOPES });

  const now = Date.now();
  const types = ['ticket.created', 'ticket.updated', 'pod.created', 'pod.updated', 'message.created', 'run.created'];
  const actors = [
    { type: 'user', id: 1, name: 'Alice' },
    { type: 'api_key', id: 2, name: 'ci' },
    { type: 'pod', id: 'p-x', name: 'p-x' },
    { type: 'system', id: null, name: 'system' },
  ];
  const started = performance.now();
  const BATCH = 2_000;
  for (let i = 0; i < TOTAL; i += BATCH) {
    const rows = [];
    for (let j = i; j < Math.min(TOTAL, i + BATCH); j++) {
      const old = j < TOTAL * OLD_SHARE;
      const actor = actors[j % actors.length];
      rows.push({
        org_id: org.id,
        type: types[j % types.length],
        channel_id: null,
        pod_key: null,
        loop_slug: null,
        ticket_slug: `BEN-${j}`,
        payload: JSON.stringify({ ticket: { slug: `BEN-${j}`, title: 'seeded event' } }),
        actor: JSON.stringify(actor),
        actor_type: actor.type,
        created_at: old ? now - RETENTION_MS - (TOTAL - j) : now - (TOTAL - j),
      });
    }
    await store.db.insertInto('events').values(rows).execute();
  }
  console.log(`seeded ${TOTAL} events in ${((performance.now() - started) / 1000).toFixed(1)} s (SQLite)`);

  const get = async (url: string) => {
    const t0 = performance.now();
    const res = await app.inject({ method: 'GET', url: `/api/v1/ext/orgs/bench${url}`, headers: { 'x-api-key': key } });
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
    return { ms: performance.now() - t0, body: res.json() as { next_cursor: string | null } };
  };
  const deep = (await store.db.selectFrom('events').select('id').where('org_id', '=', org.id).orderBy('id').limit(1).offset(Math.floor(TOTAL / 2)).executeTakeFirstOrThrow()).id;
  const queries = {
    'first page (50)': '/activity',
    'types=ticket.created&actor_type=user': '/activity?types=ticket.created&actor_type=user',
    'deep cursor (middle of the log)': `/activity?cursor=${deep}`,
  };
  for (const [name, url] of Object.entries(queries)) {
    for (let i = 0; i < 20; i++) await get(url);
    const times: number[] = [];
    for (let i = 0; i < 300; i++) times.push((await get(url)).ms);
    console.log(`GET /activity ${name}: p50 ${ms(pct(times, 50))}, p99 ${ms(pct(times, 99))}`);
    figures.push({ figure: `GET /activity ${name} (${TOTAL.toLocaleString('en-US')} events), p50 / p99`, measured: `${ms(pct(times, 50))} / ${ms(pct(times, 99))}` });
  }

  const write = async (i: number) => {
    const t0 = performance.now();
    const res = await app.inject({ method: 'POST', url: '/api/v1/ext/orgs/bench/tickets', headers: { 'x-api-key': key }, payload: { type: 'task', title: `w${i}` } });
    if (res.statusCode !== 201) throw new Error(`write: ${res.statusCode}`);
    return performance.now() - t0;
  };
  for (let i = 0; i < 50; i++) await write(i);
  const before: number[] = [];
  for (let i = 0; i < 300; i++) before.push(await write(i));
  const retention = new EventRetention(store, RETENTION_MS, Date.now, (error) => console.error(error));
  const during: number[] = [];
  const sweepStart = performance.now();
  let sweepMs = 0;
  let removed = 0;
  const sweep = retention.pruneOnce().then((n) => {
    removed = n;
    sweepMs = performance.now() - sweepStart;
  });
  let i = 0;
  while (sweepMs === 0) during.push(await write(i++));
  await sweep;
  const after: number[] = [];
  for (let k = 0; k < 300; k++) after.push(await write(k));
  console.log(`retention sweep: removed ${removed} events in ${(sweepMs / 1000).toFixed(2)} s`);
  console.log(`POST /tickets before the sweep: p50 ${ms(pct(before, 50))}, p99 ${ms(pct(before, 99))} (${before.length})`);
  console.log(`POST /tickets during the sweep: p50 ${ms(pct(during, 50))}, p99 ${ms(pct(during, 99))} (${during.length})`);
  console.log(`POST /tickets after the sweep:  p50 ${ms(pct(after, 50))}, p99 ${ms(pct(after, 99))} (${after.length})`);
  figures.push(
    { figure: `retention sweep of ${removed.toLocaleString('en-US')} events`, measured: `${(sweepMs / 1000).toFixed(2)} s` },
    { figure: 'POST /tickets p50 before / during / after the sweep', measured: [before, during, after].map((v) => ms(pct(v, 50))).join(' / ') },
  );
  reportFigures(BENCH, figures);
  await app.close();
  await store.close();
  removeTempDir(dir);
}

await main();
