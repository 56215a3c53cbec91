import { dialectOf, type Executor } from './db.ts';
import type { ChannelRow, ChannelUpdate, NewChannel } from './schema.ts';

export interface ChannelFilter {
  repositoryId?: number;
  /** Canonical (upper-case) ticket slug. */
  ticketSlug?: string;
  includeArchived: boolean;
}

/** A channel without its document, which may be up to a megabyte and is never listed. */
export type ChannelListRow = Omit<ChannelRow, 'document'>;

const LIST_COLUMNS = [
  'id',
  'org_id',
  'name',
  'name_key',
  'description',
  'repository_id',
  'ticket_slug',
  'archived',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof ChannelListRow)[];

export async function insertChannel(trx: Executor, channel: NewChannel): Promise<ChannelRow> {
  return trx.insertInto('channels').values(channel).returningAll().executeTakeFirstOrThrow();
}

/**
 * One channel of the org. `forUpdate` (PostgreSQL only; SQLite writers are serialised anyway)
 * locks the row until the transaction ends, so messages of a channel commit in id order.
 */
export async function findChannel(
  db: Executor,
  orgId: number,
  id: number,
  options: { forUpdate?: boolean } = {},
): Promise<ChannelRow | undefined> {
  let query = db.selectFrom('channels').selectAll().where('org_id', '=', orgId).where('id', '=', id);
  if (options.forUpdate && dialectOf(db) === 'postgres') query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function updateChannel(trx: Executor, id: number, patch: ChannelUpdate): Promise<ChannelRow> {
  return trx.updateTable('channels').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

function filtered(db: Executor, orgId: number, filter: ChannelFilter) {
  let query = db.selectFrom('channels').where('org_id', '=', orgId);
  if (!filter.includeArchived) query = query.where('archived', '=', 0);
  if (filter.repositoryId !== undefined) query = query.where('repository_id', '=', filter.repositoryId);
  if (filter.ticketSlug !== undefined) query = query.where('ticket_slug', '=', filter.ticketSlug);
  return query;
}

export async function listChannels(
  db: Executor,
  orgId: number,
  filter: ChannelFilter,
  page: { limit: number; offset: number },
): Promise<ChannelListRow[]> {
  return filtered(db, orgId, filter)
    .select(LIST_COLUMNS)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

export async function countChannels(db: Executor, orgId: number, filter: ChannelFilter): Promise<number> {
  const row = await filtered(db, orgId, filter)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
