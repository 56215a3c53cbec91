/**
 * CPU per ticket of `createTicket` in-process (no HTTP), the way the API calls it: as a user's
 * actor (so the actor scope's AsyncLocalStorage is active), `BATCH` creates at a time (the POST
 * bench's connections, which share group commits), on a fresh SQLite file with `SEED` tickets.
 *
 *   npx tsx bench/create-cpu.ts [BASELINE_ROOT]
 *
 * With BASELINE_ROOT (a checkout of another commit whose node_modules resolve), its sources are
 * measured in the same run, in turn with this tree's (base, this, base, this, …, after a warm-up
 * of each), and the ratio is printed. Environment: CREATE_ROUNDS=8 rounds of CREATE_TICKETS=5000
 * tickets each, BATCH=50, SEED=2000, CREATE_PROF=1 writes a CPU profile of this tree's rounds.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Session } from 'node:inspector/promises';
import { pathToFileURL } from 'node:url';
import { ROOT } from './proc.ts';

const ROUNDS = Number(process.env.CREATE_ROUNDS ?? 8);
const PER_ROUND = Number(process.env.CREATE_TICKETS ?? 5000);
const BATCH = Number(process.env.BATCH ?? 50);
const SEED = Number(process.env.SEED ?? 2000);

interface Subject {
  name: string;
  run(count: number): Promise<void>;
  close(): Promise<void>;
}

const body = {
  type: 'task',
  title: 'Ticket created by the load test',
  description: 'Created by npm run bench to measure POST /tickets throughput.',
  priority: 'high',
  labels: ['bench', 'load'],
} as const;

async function subject(name: string, root: string): Promise<Subject> {
  const load = (file: string) => import(pathToFileURL(path.join(root, file)).href);
  const { openStore } = await load('src/store/db.ts');
  const { migrateToLatest } = await load('src/store/migrate.ts');
  const admin = await load('src/domain/admin/service.ts');
  const service = await load('src/domain/tickets/service.ts');
  // What the route calls: createTicketWithJson where it exists.
  const createTicket = service.createTicketWithJson ?? service.createTicket;
  const { actingAs } = await load('src/events/actor.ts');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `drover-bench-create-${name}-`));
  const store = openStore({ sqlitePath: path.join(dir, 'drover.sqlite') });
  await migrateToLatest(store);
  const ctx = { store, now: () => Date.now(), eventsWritten: () => {} };
  const org = await admin.createOrg(ctx, { slug: 'default', name: 'Default' });
  const actor = { type: 'user', id: 1, name: 'Bench User' };
  const batch = (n: number) => actingAs(actor, () => Promise.all(Array.from({ length: n }, () => createTicket(ctx, org, { ...body, labels: [...body.labels] }))));
  const run = async (count: number) => {
    for (let done = 0; done < count; done += BATCH) await batch(Math.min(BATCH, count - done));
  };
  await run(SEED);
  return {
    name,
    run,
    async close() {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function cpuMicros(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

async function measure(s: Subject, count: number): Promise<number> {
  const before = cpuMicros();
  await s.run(count);
  return (cpuMicros() - before) / count;
}

async function main() {
  const baseRoot = process.argv[2];
  const subjects = [await subject('this', ROOT)];
  if (baseRoot) subjects.unshift(await subject('base', path.resolve(baseRoot)));
  for (const s of subjects) await s.run(PER_ROUND); // warm-up
  const session = process.env.CREATE_PROF === '1' ? new Session() : null;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
  }
  const figures = new Map<string, number[]>(subjects.map((s) => [s.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of subjects) {
      const profiling = session && s.name === 'this';
      if (profiling) await session.post('Profiler.start');
      const us = await measure(s, PER_ROUND);
      if (profiling) {
        const { profile } = await session.post('Profiler.stop');
        const file = path.join(ROOT, 'bench/results/profiles', `create-${round}.cpuprofile`);
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, JSON.stringify(profile));
      }
      figures.get(s.name)!.push(us);
      process.stdout.write(`round ${round + 1} ${s.name}: ${us.toFixed(1)} µs CPU per ticket\n`);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const [name, xs] of figures) process.stdout.write(`${name}: median ${median(xs).toFixed(1)} µs per ticket (${xs.map((x) => x.toFixed(0)).join(', ')})\n`);
  if (baseRoot) process.stdout.write(`this / base: ${(median(figures.get('this')!) / median(figures.get('base')!)).toFixed(2)}\n`);
  process.stdout.write(`load average ${os.loadavg().map((l) => l.toFixed(2)).join(' / ')}\n`);
  for (const s of subjects) await s.close();
}

await main();
