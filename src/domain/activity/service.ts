import { invalid } from '../../errors.ts';
import { parseActor, type Actor } from '../../events/actor.ts';
import { EVENT_TYPES } from '../../protocol/event-types.ts';
import { activityPage } from '../../store/activity.ts';
import type { DomainContext } from '../context.ts';

export interface ActivityQuery {
  from?: string;
  to?: string;
  types: ReadonlySet<string>;
  actorType?: string;
  cursor?: string;
  limit: number;
}

export interface ActivityEntry {
  id: number;
  type: string;
  created_at: string;
  actor: Actor | null;
  data: unknown;
}

function time(raw: string | undefined, field: string): number | undefined {
  if (raw === undefined) return undefined;
  const ms = Date.parse(raw);
  if (Number.isNaN(ms)) throw invalid(field, 'must be an ISO 8601 date-time');
  return ms;
}

/**
 * GET /activity (docs/api.md "Actors and activity"): the event log as JSON pages, newest first.
 * The cursor is the id of the last event of the previous page: stable while new events arrive.
 */
export async function readActivity(ctx: DomainContext, orgId: number, query: ActivityQuery): Promise<{ events: ActivityEntry[]; next_cursor: string | null }> {
  const from = time(query.from, 'from');
  const to = time(query.to, 'to');
  if (from !== undefined && to !== undefined && to <= from) throw invalid('to', 'must be after from');
  const beforeId = query.cursor === undefined ? undefined : Number(query.cursor);
  const types = query.types.size === EVENT_TYPES.length ? undefined : [...query.types];
  const rows = await activityPage(ctx.store.db, orgId, { from, to, types, actorType: query.actorType, beforeId }, query.limit + 1);
  const page = rows.slice(0, query.limit);
  return {
    events: page.map((row) => ({
      id: Number(row.id),
      type: row.type,
      created_at: new Date(Number(row.created_at)).toISOString(),
      actor: parseActor(row.actor),
      data: JSON.parse(row.payload) as unknown,
    })),
    next_cursor: rows.length > query.limit ? String(page[page.length - 1].id) : null,
  };
}
