import type { DatabaseKind, Executor } from './db.ts';
import type { WebhookDeliveriesTable, WebhookDeliveryRow } from './schema-loops.ts';

export async function insertDelivery(db: Executor, delivery: Omit<WebhookDeliveriesTable, 'id'>): Promise<void> {
  await db.insertInto('webhook_deliveries').values(delivery).execute();
}

/**
 * Claims due deliveries for one sending pass: PostgreSQL skips rows another replica holds, and
 * every claimed row is leased (its next attempt pushed to `leaseUntil`) before the transaction
 * commits, so a crash mid-send retries after the lease and no two replicas send one at once.
 */
export async function claimDueDeliveries(db: Executor, kind: DatabaseKind, now: number, limit: number, leaseUntil: number): Promise<WebhookDeliveryRow[]> {
  const query = db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .orderBy('next_attempt_at')
    .limit(limit);
  const rows = await (kind === 'postgres' ? query.forUpdate().skipLocked() : query).execute();
  if (rows.length > 0) {
    await db
      .updateTable('webhook_deliveries')
      .set({ next_attempt_at: leaseUntil })
      .where('id', 'in', rows.map((r) => r.id))
      .execute();
  }
  return rows;
}

export async function recordAttempt(
  db: Executor,
  id: number,
  set: Pick<WebhookDeliveriesTable, 'status' | 'attempts' | 'next_attempt_at' | 'last_status_code' | 'last_error' | 'updated_at'>,
): Promise<void> {
  await db.updateTable('webhook_deliveries').set(set).where('id', '=', id).execute();
}

export async function listDeliveries(db: Executor, subjectType: string, subjectId: number): Promise<WebhookDeliveryRow[]> {
  return db.selectFrom('webhook_deliveries').selectAll().where('subject_type', '=', subjectType).where('subject_id', '=', subjectId).orderBy('id').execute();
}
