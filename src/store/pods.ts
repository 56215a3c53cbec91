import { runNamed } from './compiled.ts';
import type { Executor } from './db.ts';
import { SLOT_POD_STATUSES } from './runners.ts';
import type { PodRow, PodStatus, PodsTable } from './schema-runners.ts';

/** A pod's results as runs show them (docs/agents.md). */
export type PodResultsRow = Pick<
  PodRow,
  'result' | 'session_id' | 'delivery' | 'usage_input_tokens' | 'usage_output_tokens' | 'usage_cache_read_tokens' | 'usage_cache_write_tokens' | 'usage_cost_usd' | 'usage_turns'
>;

export { SLOT_POD_STATUSES };

/** Whether `podKey` names a pod of the organization (the check behind `pod_key` on messages). */
export async function podBelongsToOrg(db: Executor, orgId: number, podKey: string): Promise<boolean> {
  const row = await db.selectFrom('pods').select('id').where('org_id', '=', orgId).where('key', '=', podKey).executeTakeFirst();
  return row !== undefined;
}

export async function insertPod(db: Executor, pod: Omit<PodsTable, 'id'>): Promise<PodRow> {
  return db.insertInto('pods').values(pod).returningAll().executeTakeFirstOrThrow();
}

export async function findPod(db: Executor, orgId: number, key: string): Promise<PodRow | undefined> {
  return db.selectFrom('pods').selectAll().where('org_id', '=', orgId).where('key', '=', key).executeTakeFirst();
}

export async function findPodByKey(db: Executor, key: string): Promise<PodRow | undefined> {
  return db.selectFrom('pods').selectAll().where('key', '=', key).executeTakeFirst();
}

/** Every request with a pod token (compiled once, store/compiled.ts). */
export async function findPodsByTokenPrefix(db: Executor, prefix: string): Promise<PodRow[]> {
  const { rows } = await runNamed(db, 'pods by token prefix', (v) => db.selectFrom('pods').selectAll().where('token_prefix', '=', v('prefix')), { prefix });
  return rows;
}

export interface PodFilter {
  status?: string;
  runnerId?: number;
  ticketSlug?: string;
  repositoryId?: number;
  agentSlug?: string;
  /** Epoch ms: pods created after it. */
  createdAfter?: number;
}

function filtered(db: Executor, orgId: number, filter: PodFilter) {
  let query = db.selectFrom('pods').where('org_id', '=', orgId);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status as PodStatus);
  if (filter.runnerId !== undefined) query = query.where('runner_id', '=', filter.runnerId);
  if (filter.ticketSlug !== undefined) query = query.where('ticket_slug', '=', filter.ticketSlug);
  if (filter.repositoryId !== undefined) query = query.where('repository_id', '=', filter.repositoryId);
  if (filter.agentSlug !== undefined) query = query.where('agent_slug', '=', filter.agentSlug);
  if (filter.createdAfter !== undefined) query = query.where('created_at', '>', filter.createdAfter);
  return query;
}

export async function listPods(db: Executor, orgId: number, filter: PodFilter, page: { limit: number; offset: number }): Promise<PodRow[]> {
  return filtered(db, orgId, filter).selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute();
}

export async function countPods(db: Executor, orgId: number, filter: PodFilter): Promise<number> {
  const row = await filtered(db, orgId, filter).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The pods a runner should be running (desired `run`, still active). */
export async function desiredPodsOfRunner(db: Executor, runnerId: number): Promise<PodRow[]> {
  return db
    .selectFrom('pods')
    .selectAll()
    .where('runner_id', '=', runnerId)
    .where('desired_state', '=', 'run')
    .where('status', 'in', SLOT_POD_STATUSES)
    .orderBy('id')
    .execute();
}

/** The active pods placed on a runner, whatever their desired state. */
export async function activePodsOfRunner(db: Executor, runnerId: number): Promise<PodRow[]> {
  return db.selectFrom('pods').selectAll().where('runner_id', '=', runnerId).where('status', 'in', SLOT_POD_STATUSES).orderBy('id').execute();
}

/** Raises a pod's refused-connection count to `refused` (reports may arrive out of order); only the pod's runner reports it. */
export async function updateNetworkRefused(db: Executor, key: string, runnerId: number, refused: number): Promise<void> {
  await db.updateTable('pods').set({ network_refused: refused }).where('key', '=', key).where('runner_id', '=', runnerId).where('network_refused', '<', refused).execute();
}

/** Updates a pod only while it is in one of `from`; returns whether it changed (a state machine step). */
export async function transitionPod(
  db: Executor,
  podId: number,
  from: readonly PodStatus[],
  set: Partial<Omit<PodsTable, 'id' | 'key' | 'org_id'>>,
): Promise<boolean> {
  const result = await db.updateTable('pods').set(set).where('id', '=', podId).where('status', 'in', from).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** `transitionPod` that returns the pod as updated (its runner may have changed since it was read), or undefined. */
export async function transitionPodRow(
  db: Executor,
  podId: number,
  from: readonly PodStatus[],
  set: Partial<Omit<PodsTable, 'id' | 'key' | 'org_id'>>,
): Promise<PodRow | undefined> {
  return db.updateTable('pods').set(set).where('id', '=', podId).where('status', 'in', from).returningAll().executeTakeFirst();
}

/** `transitionPod` for a pod named by its key and runner (a runner's report): the pod as updated, or undefined. */
export async function transitionRunnerPod(
  db: Executor,
  key: string,
  runnerId: number,
  from: readonly PodStatus[],
  set: Partial<Omit<PodsTable, 'id' | 'key' | 'org_id'>>,
): Promise<PodRow | undefined> {
  return db.updateTable('pods').set(set).where('key', '=', key).where('runner_id', '=', runnerId).where('status', 'in', from).returningAll().executeTakeFirst();
}

export async function updatePod(db: Executor, podId: number, set: Partial<Omit<PodsTable, 'id' | 'key' | 'org_id'>>): Promise<void> {
  await db.updateTable('pods').set(set).where('id', '=', podId).execute();
}

/** Active pods on runners silent since before `silentSince`: candidates to be orphaned. */
export async function podsOnSilentRunners(db: Executor, silentSince: number, statuses: readonly PodStatus[]): Promise<PodRow[]> {
  return db
    .selectFrom('pods')
    .innerJoin('runners', 'runners.id', 'pods.runner_id')
    .selectAll('pods')
    .where('pods.status', 'in', statuses)
    .where('runners.status', '=', 'offline')
    .where((eb) => eb.or([eb('runners.last_heartbeat_at', '<', silentSince), eb('runners.last_heartbeat_at', 'is', null)]))
    .execute();
}

/** Running pods past their deadline (a backstop for the runner's own timer). */
export async function podsPastDeadline(db: Executor, now: number): Promise<PodRow[]> {
  return db.selectFrom('pods').selectAll().where('status', '=', 'running').where('deadline_at', '<', now).execute();
}

/** The results of the pods with these keys (a loop's runs show their pod's), by key. */
export async function podResultsByKeys(db: Executor, keys: readonly string[]): Promise<Map<string, PodResultsRow>> {
  const found = new Map<string, PodResultsRow>();
  if (keys.length === 0) return found;
  const rows = await db
    .selectFrom('pods')
    .select(['key', 'result', 'session_id', 'delivery', 'usage_input_tokens', 'usage_output_tokens', 'usage_cache_read_tokens', 'usage_cache_write_tokens', 'usage_cost_usd', 'usage_turns'])
    .where('key', 'in', [...new Set(keys)])
    .execute();
  for (const { key, ...row } of rows) found.set(key, row);
  return found;
}

/** The still-active pods a pod spawned (docs/mcp.md). */
export async function activeChildPods(db: Executor, parentKey: string): Promise<PodRow[]> {
  return db.selectFrom('pods').selectAll().where('parent_pod_key', '=', parentKey).where('status', 'in', SLOT_POD_STATUSES).orderBy('id').execute();
}

/** How many still-active pods a pod spawned. */
export async function countActiveChildPods(db: Executor, parentKey: string): Promise<number> {
  const row = await db
    .selectFrom('pods')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('parent_pod_key', '=', parentKey)
    .where('status', 'in', SLOT_POD_STATUSES)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Of the pods `ids`, those whose status is one of `statuses`. */
export async function podIdsInStatus(db: Executor, ids: readonly number[], statuses: readonly PodStatus[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('pods').select('id').where('id', 'in', ids).where('status', 'in', statuses).execute();
  return rows.map((row) => Number(row.id));
}
