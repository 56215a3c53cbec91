import { sql } from 'kysely';
import { ACTIVE_RUN_STATUSES } from '../protocol/enums.ts';
import { dialectOf, type Executor } from './db.ts';
import type { LoopRunRow, LoopRunsTable, RunStatus } from './schema-loops.ts';


export async function insertRun(db: Executor, run: Omit<LoopRunsTable, 'id' | 'start_claimed_until'>): Promise<LoopRunRow> {
  return db.insertInto('loop_runs').values(run).returningAll().executeTakeFirstOrThrow();
}

export async function findRunsByIds(db: Executor, ids: readonly number[]): Promise<LoopRunRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('loop_runs').selectAll().where('id', 'in', ids).orderBy('id').execute();
}

export async function findRun(db: Executor, loopId: number, id: number): Promise<LoopRunRow | undefined> {
  return db.selectFrom('loop_runs').selectAll().where('loop_id', '=', loopId).where('id', '=', id).executeTakeFirst();
}

export async function findRunById(db: Executor, id: number): Promise<LoopRunRow | undefined> {
  return db.selectFrom('loop_runs').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findRunByPod(db: Executor, podKey: string): Promise<LoopRunRow | undefined> {
  return db.selectFrom('loop_runs').selectAll().where('pod_key', '=', podKey).executeTakeFirst();
}

export async function listRuns(db: Executor, loopId: number, status: string | undefined, page: { limit: number; offset: number }) {
  let query = db.selectFrom('loop_runs').selectAll().where('loop_id', '=', loopId);
  if (status !== undefined) query = query.where('status', '=', status as RunStatus);
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute();
}

export async function countRuns(db: Executor, loopId: number, status: string | undefined): Promise<number> {
  let query = db.selectFrom('loop_runs').select((eb) => eb.fn.countAll<number>().as('n')).where('loop_id', '=', loopId);
  if (status !== undefined) query = query.where('status', '=', status as RunStatus);
  return Number((await query.executeTakeFirstOrThrow()).n);
}

/** Active runs of a loop, oldest first. */
export async function activeRuns(db: Executor, loopId: number, statuses: readonly RunStatus[] = ACTIVE_RUN_STATUSES): Promise<LoopRunRow[]> {
  return db.selectFrom('loop_runs').selectAll().where('loop_id', '=', loopId).where('status', 'in', statuses).orderBy('id').execute();
}

/** Updates a run only while it is in one of `from`: the run as updated, or undefined (a state machine step). */
export async function transitionRun(
  db: Executor,
  id: number,
  from: readonly RunStatus[],
  set: Partial<Omit<LoopRunsTable, 'id' | 'loop_id' | 'org_id'>>,
): Promise<LoopRunRow | undefined> {
  return db.updateTable('loop_runs').set(set).where('id', '=', id).where('status', 'in', from).returningAll().executeTakeFirst();
}

export async function updateRun(db: Executor, id: number, set: Partial<Omit<LoopRunsTable, 'id' | 'loop_id' | 'org_id'>>): Promise<void> {
  await db.updateTable('loop_runs').set(set).where('id', '=', id).execute();
}

/** Active runs past their deadline. */
export async function runsPastDeadline(db: Executor, now: number): Promise<LoopRunRow[]> {
  return db.selectFrom('loop_runs').selectAll().where('status', 'in', ['pending', 'running']).where('deadline_at', '<', now).execute();
}

/**
 * Pending runs still waiting for a pod (no runner was free when they started), untouched since
 * `idleBefore` and with no start in flight (no live lease): a run that was just created, promoted
 * or claimed is left to that start.
 */
export async function runsWaitingForPod(db: Executor, limit: number, idleBefore: number, now: number): Promise<LoopRunRow[]> {
  return db
    .selectFrom('loop_runs')
    .selectAll()
    .where('status', '=', 'pending')
    .where('pod_key', 'is', null)
    .where('updated_at', '<', idleBefore)
    .where((eb) => eb.or([eb('start_claimed_until', 'is', null), eb('start_claimed_until', '<', now)]))
    .orderBy('id')
    .limit(limit)
    .execute();
}

/**
 * Claims a pending run without a pod for one start attempt, until `leaseUntil`: a compare-and-set
 * on `updated_at` as it was read, and only without another starter's live lease, so of several
 * starters (replicas' sweepers, the request that created the run) only one launches a pod, however
 * long that launch takes.
 */
export async function claimStart(db: Executor, id: number, seenUpdatedAt: number, now: number, leaseUntil: number): Promise<boolean> {
  const result = await db
    .updateTable('loop_runs')
    .set({ updated_at: Math.max(now, seenUpdatedAt + 1), start_claimed_until: leaseUntil })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('pod_key', 'is', null)
    .where('updated_at', '=', seenUpdatedAt)
    .where((eb) => eb.or([eb('start_claimed_until', 'is', null), eb('start_claimed_until', '<', now)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Gives an active run its pod (and with `running`, moves it to `running`), unless the run has
 * ended or another pod has it already; returns whether the run has this pod now. `runnerId` is
 * null while the pod is queued for a runner.
 */
export async function attachPod(db: Executor, id: number, podKey: string, runnerId: number | null, now: number, running: boolean): Promise<boolean> {
  const result = await db
    .updateTable('loop_runs')
    .set({ pod_key: podKey, runner_id: runnerId, updated_at: now, start_claimed_until: null, ...(running ? { status: 'running' as const } : {}) })
    .where('id', '=', id)
    .where('status', 'in', ['pending', 'running'])
    .where((eb) => eb.or([eb('pod_key', 'is', null), eb('pod_key', '=', podKey)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Whether the loop already has a run for this cron slot. */
export async function hasRunForSlot(db: Executor, loopId: number, scheduledAt: number): Promise<boolean> {
  const row = await db.selectFrom('loop_runs').select('id').where('loop_id', '=', loopId).where('scheduled_at', '=', scheduledAt).executeTakeFirst();
  return row !== undefined;
}

/** Locks a run's row until commit (PostgreSQL), so two requests about it decide one after the other. */
export async function lockRun(db: Executor, id: number): Promise<void> {
  // SQLite runs one write transaction at a time.
  if (dialectOf(db) === 'postgres') await sql`select id from loop_runs where id = ${id} for update`.execute(db);
}
