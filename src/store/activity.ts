import type { Executor } from './db.ts';
import type { EventRow } from './schema.ts';

export interface ActivityFilter {
  /** Epoch ms, inclusive. */
  from?: number;
  /** Epoch ms, exclusive. */
  to?: number;
  /** Undefined: every type. */
  types?: readonly string[];
  actorType?: string;
  /** Events older than this id (the previous page's last). */
  beforeId?: number;
}

/**
 * A page of the organization's event log, newest first. It walks `events_org_id` (org_id, id)
 * backwards and stops after `limit` matches, so a page costs about as many rows as it returns
 * when the filters are broad, and no more than the range it scans when they are narrow.
 */
export async function activityPage(db: Executor, orgId: number, filter: ActivityFilter, limit: number): Promise<EventRow[]> {
  let query = db.selectFrom('events').selectAll().where('org_id', '=', orgId);
  if (filter.beforeId !== undefined) query = query.where('id', '<', filter.beforeId);
  if (filter.from !== undefined) query = query.where('created_at', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('created_at', '<', filter.to);
  if (filter.types !== undefined) query = query.where('type', 'in', filter.types);
  if (filter.actorType !== undefined) query = query.where('actor_type', '=', filter.actorType);
  return query.orderBy('id', 'desc').limit(limit).execute();
}
