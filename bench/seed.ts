/**
 * Seeds tickets straight into a data directory's SQLite file through the store and domain layers
 * (the same `createTicket` the API calls), while no server has the file open.
 * The data is deterministic (seeded PRNG) and mixed: every type, status and priority, 0–4 labels,
 * assignees, two repositories with their own prefix, sub-tickets, descriptions of varying length,
 * and creation times spread over the past weeks.
 */
import path from 'node:path';
import * as admin from '../src/domain/admin/service.ts';
import type { DomainContext } from '../src/domain/context.ts';
import { TICKET_PRIORITIES, TICKET_STATUSES, TICKET_TYPES } from '../src/protocol/enums.ts';
import { createTicket, type CreateTicketInput } from '../src/domain/tickets/service.ts';
import { openStore } from '../src/store/db.ts';

const LABELS = [
  'frontend', 'backend', 'api', 'db', 'infra', 'security', 'perf', 'ux', 'docs', 'tests',
  'regression', 'customer', 'tech-debt', 'flaky', 'p0', 'needs-design', 'good-first-issue', 'ci',
];
const WORDS = [
  'agent', 'pod', 'loop', 'runner', 'channel', 'webhook', 'token', 'cache', 'queue', 'retry', 'timeout',
  'board', 'ticket', 'label', 'schema', 'migration', 'index', 'login', 'export', 'import', 'sync', 'crash',
  'slow', 'missing', 'broken', 'add', 'remove', 'rename', 'refactor', 'improve', 'support', 'handle',
];

/** mulberry32: small, fast, deterministic. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(rnd: () => number, items: readonly T[]): T => items[Math.floor(rnd() * items.length)];

/** Skewed like a real tracker: most tickets are done or in the backlog. */
const STATUS_WEIGHTS: Record<(typeof TICKET_STATUSES)[number], number> = { backlog: 30, todo: 15, in_progress: 10, in_review: 5, done: 40 };
const PRIORITY_WEIGHTS: Record<(typeof TICKET_PRIORITIES)[number], number> = { low: 25, medium: 45, high: 22, urgent: 8 };

function weighted<K extends string>(rnd: () => number, weights: Record<K, number>): K {
  const entries = Object.entries(weights) as [K, number][];
  const total = entries.reduce((sum, [, w]) => sum + w, 0);
  let r = rnd() * total;
  for (const [key, w] of entries) {
    r -= w;
    if (r < 0) return key;
  }
  return entries[entries.length - 1][0];
}

function sentence(rnd: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(pick(rnd, WORDS));
  const text = out.join(' ');
  return text[0].toUpperCase() + text.slice(1);
}

export interface SeedResult {
  /** Slugs of every ticket created, in creation order. */
  slugs: string[];
  seconds: number;
}

/**
 * Adds `count` tickets to org `default` of the SQLite database in `dataDir`
 * (which the server has already migrated and bootstrapped).
 */
export async function seedTickets(dataDir: string, count: number, options: { seed?: number; onProgress?: (done: number) => void } = {}): Promise<SeedResult> {
  const started = performance.now();
  const store = openStore({ sqlitePath: path.join(dataDir, 'drover.sqlite') });
  const rnd = prng(options.seed ?? 42);
  // Creation times: one ticket every ~30 s of simulated time, ending a minute ago.
  let clock = Date.now() - 60_000 - count * 30_000;
  const ctx: DomainContext = { store, now: () => (clock += 1 + Math.floor(rnd() * 59_000)) };
  try {
    const org = await admin.requireOrg(store.db, 'default');
    const users: number[] = [];
    for (let i = 1; i <= 12; i++) {
      const email = `bench-user-${i}-${Math.floor(rnd() * 1e9)}@example.com`;
      users.push((await admin.createUser(ctx, 'default', { name: `Bench User ${i}`, email })).id);
    }
    const repositories: number[] = [];
    for (const [name, prefix] of [
      ['web', 'WEB'],
      ['api', 'API'],
    ]) {
      const row = await store.db
        .insertInto('repositories')
        .values({
          org_id: org.id,
          name: `${name}-${Math.floor(rnd() * 1e9)}`,
          full_name: `default/${name}`,
          provider: 'github',
          url: `https://github.com/default/${name}`,
          default_branch: 'main',
          ticket_prefix: prefix,
          api_base_url: null,
          token_encrypted: null,
          created_at: ctx.now(),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      repositories.push(row.id);
    }

    const slugs: string[] = [];
    for (let i = 0; i < count; i++) {
      const labelCount = Math.floor(rnd() * 5); // 0–4
      const labels: string[] = [];
      for (let l = 0; l < labelCount; l++) labels.push(pick(rnd, LABELS));
      const input: CreateTicketInput = {
        type: pick(rnd, TICKET_TYPES),
        title: sentence(rnd, 3 + Math.floor(rnd() * 8)),
        priority: weighted(rnd, PRIORITY_WEIGHTS),
        status: weighted(rnd, STATUS_WEIGHTS),
        labels,
      };
      const d = rnd();
      if (d < 0.6) input.description = sentence(rnd, 10 + Math.floor(rnd() * (d < 0.1 ? 400 : 60)));
      if (rnd() < 0.7) input.assignee_id = pick(rnd, users);
      if (rnd() < 0.3) input.repository_id = pick(rnd, repositories);
      if (slugs.length > 0 && rnd() < 0.1) input.parent_slug = slugs[Math.floor(rnd() * slugs.length)];
      const ticket = await createTicket(ctx, org, input);
      slugs.push(ticket.slug);
      if (options.onProgress && (i + 1) % 10_000 === 0) options.onProgress(i + 1);
    }
    return { slugs, seconds: (performance.now() - started) / 1000 };
  } finally {
    await store.close();
  }
}
