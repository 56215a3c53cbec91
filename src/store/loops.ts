import { sql } from 'kysely';
import { dialectOf, type Executor } from './db.ts';
import type { LoopRow, LoopsTable } from './schema-loops.ts';

export async function insertLoop(db: Executor, loop: Omit<LoopsTable, 'id'>): Promise<LoopRow> {
  return db.insertInto('loops').values(loop).returningAll().executeTakeFirstOrThrow();
}

export async function findLoop(db: Executor, orgId: number, slug: string): Promise<LoopRow | undefined> {
  return db.selectFrom('loops').selectAll().where('org_id', '=', orgId).where('slug', '=', slug).executeTakeFirst();
}

export async function findLoopById(db: Executor, id: number): Promise<LoopRow | undefined> {
  return db.selectFrom('loops').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * The org's slugs among which `uniqueSlug(base, …)` must find a free one: `base` and its numbered
 * forms. A long base is cut to make room for the suffix (`aaa…a-2` keeps 61 characters of it), so
 * `base-%` would miss those; every candidate keeps the base's first 48 characters (a suffix of up
 * to 15 characters), less a trailing dash, and slugs hold no `%` or `_`. Extra matches are harmless.
 */
export async function slugsLike(db: Executor, orgId: number, base: string): Promise<string[]> {
  const stem = base.slice(0, 48).replace(/-+$/, '');
  const rows = await db.selectFrom('loops').select('slug').where('org_id', '=', orgId).where('slug', 'like', `${stem}%`).execute();
  return rows.map((r) => r.slug);
}

export async function listLoops(db: Executor, orgId: number, page: { limit: number; offset: number } | null): Promise<LoopRow[]> {
  let query = db.selectFrom('loops').selectAll().where('org_id', '=', orgId).orderBy('created_at', 'desc').orderBy('id', 'desc');
  if (page) query = query.limit(page.limit).offset(page.offset);
  return query.execute();
}

export async function countLoops(db: Executor, orgId: number): Promise<number> {
  const row = await db.selectFrom('loops').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', orgId).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function updateLoop(db: Executor, id: number, set: Partial<Omit<LoopsTable, 'id' | 'org_id'>>): Promise<LoopRow> {
  return db.updateTable('loops').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/**
 * Takes the next run number. The row update also locks the loop until commit on PostgreSQL,
 * so the policy decisions of concurrent triggers of one loop happen one after another.
 */
export async function takeRunNumber(db: Executor, loopId: number): Promise<LoopRow | undefined> {
  return db
    .updateTable('loops')
    .set({ run_counter: sql`run_counter + 1` })
    .where('id', '=', loopId)
    .returningAll()
    .executeTakeFirst();
}

/** Reads the loop row and locks it until commit (PostgreSQL; SQLite transactions are serialised anyway). */
export async function lockLoop(db: Executor, loopId: number): Promise<LoopRow | undefined> {
  const query = db.selectFrom('loops').selectAll().where('id', '=', loopId);
  return (dialectOf(db) === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
}

export async function deleteLoop(db: Executor, id: number): Promise<void> {
  await db.deleteFrom('loop_runs').where('loop_id', '=', id).execute();
  await db.deleteFrom('loops').where('id', '=', id).execute();
}

/**
 * Enabled cron loops whose slot is due, claimed for this transaction: with PostgreSQL, replicas
 * skip rows another replica holds, so each due loop is handled by exactly one of them.
 */
export async function claimDueLoops(db: Executor, now: number, limit: number): Promise<LoopRow[]> {
  return claimLoops(db, limit, (query) => query.where('next_run_at', '<=', now));
}

/** Where a pass over loops due soon stands: the last loop it claimed, in (next_run_at, id) order. */
export interface DueCursor {
  nextRunAt: number;
  id: number;
}

/**
 * Loops whose next slot is in (now, until], claimed as `claimDueLoops` claims them, after `from`:
 * the loops a pass leaves due (their runs not prepared ahead) are not claimed again in that pass.
 */
export async function claimLoopsDueSoon(db: Executor, now: number, until: number, from: DueCursor | null, limit: number): Promise<LoopRow[]> {
  return claimLoops(db, limit, (query) => {
    const window = query.where('next_run_at', '>', now).where('next_run_at', '<=', until);
    if (!from) return window;
    return window.where((eb) => eb.or([eb('next_run_at', '>', from.nextRunAt), eb.and([eb('next_run_at', '=', from.nextRunAt), eb('id', '>', from.id)])]));
  });
}

type LoopQuery = ReturnType<typeof enabledLoops>;
const enabledLoops = (db: Executor) => db.selectFrom('loops').selectAll().where('status', '=', 'enabled');

/** Enabled loops chosen by `where`, oldest next slot first, locked for the caller's transaction. */
async function claimLoops(db: Executor, limit: number, where: (query: LoopQuery) => LoopQuery): Promise<LoopRow[]> {
  const query = where(enabledLoops(db)).orderBy('next_run_at').orderBy('id').limit(limit);
  // FOR NO KEY UPDATE: strong enough against other claims and triggers (which update the row), but
  // not in conflict with the key-share locks that inserting a run (its foreign key) takes.
  return dialectOf(db) === 'postgres' ? query.forNoKeyUpdate().skipLocked().execute() : query.execute();
}

export async function findLoopsByIds(db: Executor, ids: readonly number[]): Promise<LoopRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('loops').selectAll().where('id', 'in', ids).execute();
}

/** The agent session the loop's next run continues (session_persistence). */
export async function setLastSession(db: Executor, id: number, sessionId: string): Promise<void> {
  await db.updateTable('loops').set({ last_session_id: sessionId }).where('id', '=', id).execute();
}

/** Where a loop's persistent sandbox lives now. */
export async function setSandboxRunner(db: Executor, id: number, runnerId: number): Promise<void> {
  await db.updateTable('loops').set({ sandbox_runner_id: runnerId }).where('id', '=', id).execute();
}

/** Moves a loop's next slot (no row returned: the cron pass sets it for every due loop). */
export async function setNextRunAt(db: Executor, id: number, at: number | null): Promise<void> {
  await db.updateTable('loops').set({ next_run_at: at }).where('id', '=', id).execute();
}

/**
 * Moves an enabled loop's next slot back to `slot` if it has moved past it (a prepared run of that
 * slot was withdrawn: the slot may fire again). A loop disabled or deleted meanwhile is left alone.
 */
export async function bringSlotBack(db: Executor, id: number, slot: number): Promise<void> {
  await db.updateTable('loops').set({ next_run_at: slot }).where('id', '=', id).where('status', '=', 'enabled').where('next_run_at', '>', slot).execute();
}

/** The earliest slot of any enabled loop (the scheduler sets a timer for it). */
export async function earliestNextRunAt(db: Executor): Promise<number | null> {
  const row = await db
    .selectFrom('loops')
    .select('next_run_at')
    .where('status', '=', 'enabled')
    .where('next_run_at', 'is not', null)
    .orderBy('next_run_at')
    .limit(1)
    .executeTakeFirst();
  return row?.next_run_at ?? null;
}

export interface LoopStats {
  total_runs: number;
  successful_runs: number;
  failed_runs: number;
  cancelled_runs: number;
  active_run_count: number;
  last_run_at: number | null;
  /** The sum of the costs the runs' agents reported; null when none reported one. */
  total_cost_usd: number | null;
  /** What the runs' pods created since `dayStart` (the loop's day, UTC) spent. */
  spent_usd_today: number;
}

/** The start (epoch ms) of the UTC day holding `at`: loops' daily budgets count from it. */
export const utcDayStart = (at: number): number => Math.floor(at / 86_400_000) * 86_400_000;

/** Stats computed from the runs themselves, so they can never disagree with them. */
export async function loopStats(db: Executor, loopIds: number[], dayStart = utcDayStart(Date.now())): Promise<Map<number, LoopStats>> {
  const stats = new Map<number, LoopStats>();
  if (loopIds.length === 0) return stats;
  const rows = await db
    .selectFrom('loop_runs')
    .select([
      'loop_id',
      (eb) => eb.fn.countAll<number>().as('total'),
      (eb) => eb.fn.sum<number>(eb.case().when('status', '=', 'completed').then(1).else(0).end()).as('ok'),
      (eb) => eb.fn.sum<number>(eb.case().when('status', 'in', ['failed', 'timeout']).then(1).else(0).end()).as('bad'),
      (eb) => eb.fn.sum<number>(eb.case().when('status', '=', 'cancelled').then(1).else(0).end()).as('cancelled'),
      (eb) => eb.fn.sum<number>(eb.case().when('status', 'in', ['queued', 'pending', 'running']).then(1).else(0).end()).as('active'),
      (eb) => eb.fn.max<number>('started_at').as('last'),
    ])
    .where('loop_id', 'in', loopIds)
    .groupBy('loop_id')
    .execute();
  for (const r of rows) {
    stats.set(r.loop_id, {
      total_runs: Number(r.total),
      successful_runs: Number(r.ok ?? 0),
      failed_runs: Number(r.bad ?? 0),
      cancelled_runs: Number(r.cancelled ?? 0),
      active_run_count: Number(r.active ?? 0),
      last_run_at: r.last === null ? null : Number(r.last),
      total_cost_usd: null,
      spent_usd_today: 0,
    });
  }
  const costs = await db
    .selectFrom('loop_runs')
    .innerJoin('pods', 'pods.key', 'loop_runs.pod_key')
    .select([
      'loop_runs.loop_id',
      (eb) => eb.fn.sum<number>('pods.usage_cost_usd').as('cost'),
      (eb) => eb.fn.sum<number>(eb.case().when('pods.created_at', '>=', dayStart).then(eb.ref('pods.usage_cost_usd')).else(0).end()).as('today'),
    ])
    .where('loop_runs.loop_id', 'in', loopIds)
    .where('pods.usage_cost_usd', 'is not', null)
    .groupBy('loop_runs.loop_id')
    .execute();
  for (const c of costs) {
    const entry = stats.get(c.loop_id);
    // Sums of binary fractions are kept to the nano-dollar, like the runner's own sums.
    if (entry && c.cost !== null) entry.total_cost_usd = Math.round(Number(c.cost) * 1e9) / 1e9;
    if (entry && c.today !== null) entry.spent_usd_today = Math.round(Number(c.today) * 1e9) / 1e9;
  }
  return stats;
}
