import { sql } from 'kysely';
import type { Executor } from './db.ts';

/** PostgreSQL NOTIFY; delivered to listeners when the surrounding transaction commits. */
export async function notify(db: Executor, channel: string, payload: string): Promise<void> {
  await sql`select pg_notify(${channel}, ${payload})`.execute(db);
}
