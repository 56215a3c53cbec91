import type { Executor } from './db.ts';
import type { LoopRunRow, LoopRunsTable, RunStatus } from './schema-loops.ts';

export const ACTIVE_RUN_STATUSES: readonly RunStatus[] = ['queued', 'pending', 'running'];

export async function insertRun(db: Executor, run: Omit<LoopRunsTable, 'id'>): Promise<LoopRunRow> {
  return db.insertInto('loop_runs').values(run).returningAll().executeTakeFirstOrThrow();
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

/** Moves a run only while it is in one of `from`; returns whether it moved. */
export async function transitionRun(
  db: Executor,
  id: number,
  from: readonly RunStatus[],
  set: Partial<Omit<LoopRunsTable, 'id' | 'loop_id' | 'org_id'>>,
): Promise<boolean> {
  const result = await db.updateTable('loop_runs').set(set).where('id', '=', id).where('status', 'in', from).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function updateRun(db: Executor, id: number, set: Partial<Omit<LoopRunsTable, 'id' | 'loop_id' | 'org_id'>>): Promise<void> {
  await db.updateTable('loop_runs').set(set).where('id', '=', id).execute();
}

/** Active runs past their deadline. */
export async function runsPastDeadline(db: Executor, now: number): Promise<LoopRunRow[]> {
  return db.selectFrom('loop_runs').selectAll().where('status', 'in', ['pending', 'running']).where('deadline_at', '<', now).execute();
}

/** Pending runs still waiting for a pod (no runner was free when they started). */
export async function runsWaitingForPod(db: Executor, limit: number): Promise<LoopRunRow[]> {
  return db.selectFrom('loop_runs').selectAll().where('status', '=', 'pending').where('pod_key', 'is', null).orderBy('id').limit(limit).execute();
}
