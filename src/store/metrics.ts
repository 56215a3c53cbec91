import { sql } from 'kysely';
import type { Executor } from './db.ts';

/** Counts for `GET /metrics`, over every organization. */

/** Rows of `pods` or `runners` by status. */
export async function countByStatus(db: Executor, table: 'pods' | 'runners'): Promise<Map<string, number>> {
  const rows = await db.selectFrom(table).select(['status', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('status').execute();
  return new Map(rows.map((r) => [r.status as string, Number(r.n)]));
}

/** Pods waiting for a runner slot (status `queued`; none until pod queueing exists). */
export async function countQueuedPods(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('pods')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where(sql<boolean>`status = 'queued'`)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Webhook deliveries not yet delivered nor given up. */
export async function countPendingDeliveries(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
