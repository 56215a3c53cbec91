import { sql } from 'kysely';
import { dialectOf, type Executor } from './db.ts';
import type { RunnerRow, RunnersTable } from './schema-runners.ts';

/** Pods that hold a slot of their runner (a `queued` pod has no runner yet, so holds none). */
export const SLOT_POD_STATUSES = ['initializing', 'running', 'orphaned'] as const;

export type RunnerWithCount = RunnerRow & { pod_count: number };

function withPodCount(db: Executor) {
  return db
    .selectFrom('runners')
    .selectAll('runners')
    .select((eb) =>
      eb
        .selectFrom('pods')
        .select(eb.fn.countAll<number>().as('n'))
        .whereRef('pods.runner_id', '=', 'runners.id')
        .where('pods.status', 'in', SLOT_POD_STATUSES)
        .as('pod_count'),
    )
    .where('runners.deleted_at', 'is', null);
}

export async function insertRunner(db: Executor, runner: Omit<RunnersTable, 'id' | 'deleted_at' | 'credential_rotated_at' | 'isolation'>): Promise<RunnerRow> {
  return db.insertInto('runners').values({ ...runner, deleted_at: null, credential_rotated_at: null }).returningAll().executeTakeFirstOrThrow();
}

export async function findRunnerByCredential(db: Executor, credentialHash: string): Promise<RunnerRow | undefined> {
  return db.selectFrom('runners').selectAll().where('credential_hash', '=', credentialHash).where('deleted_at', 'is', null).executeTakeFirst();
}

export async function findRunner(db: Executor, orgId: number, id: number): Promise<RunnerWithCount | undefined> {
  const row = await withPodCount(db).where('runners.org_id', '=', orgId).where('runners.id', '=', id).executeTakeFirst();
  return row && { ...row, pod_count: Number(row.pod_count) };
}

export async function findRunnerById(db: Executor, id: number): Promise<RunnerRow | undefined> {
  return db.selectFrom('runners').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listRunners(db: Executor, orgId: number): Promise<RunnerWithCount[]> {
  const rows = await withPodCount(db).where('runners.org_id', '=', orgId).orderBy('runners.created_at', 'desc').orderBy('runners.id', 'desc').execute();
  return rows.map((r) => ({ ...r, pod_count: Number(r.pod_count) }));
}

/** Locks the org's runners while a pod is placed, so concurrent creates cannot overfill one. */
export async function lockRunners(db: Executor, orgId: number): Promise<void> {
  // SQLite runs one write transaction at a time, so only PostgreSQL needs the row locks.
  if (dialectOf(db) === 'postgres') await sql`select id from runners where org_id = ${orgId} for update`.execute(db);
}

export async function markConnected(
  db: Executor,
  id: number,
  values: Pick<RunnersTable, 'version' | 'os' | 'arch' | 'labels' | 'agents' | 'sandbox' | 'isolation' | 'max_pods' | 'status' | 'connection_id'>,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('runners')
    .set({ ...values, last_heartbeat_at: now, updated_at: now })
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Records a heartbeat on the runner's current connection; false when that is no longer this one (or the runner was deleted). */
export async function recordHeartbeat(db: Executor, id: number, connectionId: string, status: RunnersTable['status'], now: number): Promise<boolean> {
  const result = await db
    .updateTable('runners')
    .set({ last_heartbeat_at: now, status, updated_at: now })
    .where('id', '=', id)
    .where('connection_id', '=', connectionId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * A heartbeat that changes nothing but the time: true when the runner's current connection is
 * `connectionId` and its status is `status` already (one indexed update, no reads).
 */
export async function recordSteadyHeartbeat(db: Executor, id: number, connectionId: string, status: RunnersTable['status'], now: number): Promise<boolean> {
  const result = await db
    .updateTable('runners')
    .set({ last_heartbeat_at: now, updated_at: now })
    .where('id', '=', id)
    .where('connection_id', '=', connectionId)
    .where('status', '=', status)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Deletes a runner for good, keeping its row (its pods name it): it leaves every list, and its
 * credential is replaced by a value no credential hashes to (hashes are hex). False when there
 * was no such runner (or it was deleted already).
 */
export async function markDeleted(db: Executor, id: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('runners')
    .set({ deleted_at: now, credential_hash: `deleted-${id}`, status: 'offline', connection_id: null, updated_at: now })
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The runner confirmed a new credential: from now on only that one is accepted. */
export async function replaceCredential(db: Executor, id: number, credentialHash: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('runners')
    .set({ credential_hash: credentialHash, credential_rotated_at: now, updated_at: now })
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Marks a runner offline when the socket that closed is still its current one. */
export async function markDisconnected(db: Executor, id: number, connectionId: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('runners')
    .set({ status: 'offline', connection_id: null, updated_at: now })
    .where('id', '=', id)
    .where('connection_id', '=', connectionId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Runners not offline whose last heartbeat is older than `silentBefore`. */
export async function silentRunnerIds(db: Executor, silentBefore: number): Promise<number[]> {
  const rows = await db.selectFrom('runners').select('id').where('status', '!=', 'offline').where('last_heartbeat_at', '<', silentBefore).execute();
  return rows.map((r) => Number(r.id));
}

/** Marks one runner offline if it is still silent since before `silentBefore`; its connection id stays. */
export async function markOfflineIfSilent(db: Executor, id: number, silentBefore: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('runners')
    .set({ status: 'offline', updated_at: now })
    .where('id', '=', id)
    .where('status', '!=', 'offline')
    .where('last_heartbeat_at', '<', silentBefore)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Runners silent for longer than `silenceMs` become offline. */
export async function expireSilentRunners(db: Executor, now: number, silenceMs: number): Promise<number> {
  const result = await db
    .updateTable('runners')
    .set({ status: 'offline', connection_id: null, updated_at: now })
    .where('status', '!=', 'offline')
    .where('last_heartbeat_at', '<', now - silenceMs)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
