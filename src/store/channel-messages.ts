import { sql, type CompiledQuery } from 'kysely';
import { dialectOf, type Executor } from './db.ts';
import type { ChannelMessageRow, NewChannelMessage } from './schema.ts';

/**
 * One page of a channel's messages, by message-id cursors (keyset pagination).
 * `before`: only messages older than it; `after`: only messages newer than it.
 */
export interface MessagePage {
  limit: number;
  before?: number;
  after?: number;
}

/**
 * The page query, compiled (exported so tests can EXPLAIN it): a range scan of the
 * (channel_id, id) index that stops after `limit` rows. No OFFSET and no count, so a page of a
 * channel with a million messages costs what a page of one with a hundred does.
 *
 * The index is forced, not left to the planner: with statistics, both planners may prefer
 * walking the primary key (id) and filtering on channel_id, which is cheap while a channel's
 * messages are spread evenly over the table and a full scan when they are not (an old busy channel
 * behind a newer one). SQLite is told so (INDEXED BY). PostgreSQL has no hints, so it gets the
 * row-value form of keyset pagination, ordered by (channel_id, id): only that index yields that
 * order, and both cursors become index bounds. (SQLite cannot bound a descending scan by a row
 * value, hence two forms; test/store/channels.test.ts checks both plans.)
 *
 * With `after` the page is anchored there (the oldest messages newer than it, so polling and paging
 * forward never skip one); otherwise at `before` or at the newest message.
 */
export function messagePageQuery(db: Executor, channelId: number, page: MessagePage): CompiledQuery<ChannelMessageRow> {
  const forward = page.after !== undefined;
  const lower = page.after ?? 0;
  const upper = page.before ?? Number.MAX_SAFE_INTEGER;
  if (dialectOf(db) === 'sqlite') {
    return sql<ChannelMessageRow>`select * from channel_messages indexed by channel_messages_page
      where channel_id = ${channelId} and id > ${lower} and id < ${upper}
      order by id ${forward ? sql`asc` : sql`desc`} limit ${page.limit}`.compile(db);
  }
  const direction = forward ? 'asc' : 'desc';
  return db
    .selectFrom('channel_messages')
    .selectAll()
    .where((eb) =>
      eb.and([
        eb(eb.refTuple('channel_id', 'id'), '>', eb.tuple(channelId, lower)),
        eb(eb.refTuple('channel_id', 'id'), '<', eb.tuple(channelId, upper)),
      ]),
    )
    .orderBy('channel_id', direction)
    .orderBy('id', direction)
    .limit(page.limit)
    .compile();
}

/** A page of messages, most recent first. */
export async function listMessages(db: Executor, channelId: number, page: MessagePage): Promise<ChannelMessageRow[]> {
  const { rows } = await db.executeQuery(messagePageQuery(db, channelId, page));
  return page.after !== undefined ? [...rows].reverse() : [...rows];
}

export async function insertMessage(trx: Executor, message: NewChannelMessage): Promise<ChannelMessageRow> {
  return trx.insertInto('channel_messages').values(message).returningAll().executeTakeFirstOrThrow();
}

/**
 * Many messages in multi-row inserts of `batchSize` (imports, benchmarks, test fixtures).
 * Run it inside a transaction: on SQLite that is what makes a million rows take seconds, not minutes.
 */
export async function insertMessages(trx: Executor, messages: readonly NewChannelMessage[], batchSize = 500): Promise<void> {
  for (let i = 0; i < messages.length; i += batchSize) {
    await trx.insertInto('channel_messages').values(messages.slice(i, i + batchSize)).execute();
  }
}
