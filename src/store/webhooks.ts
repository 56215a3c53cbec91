import { dialectOf, type Executor } from './db.ts';
import type { WebhookAttemptRow, WebhookAttemptsTable, WebhookDeliveriesTable, WebhookDeliveryRow } from './schema-loops.ts';

export type NewWebhookDelivery = Omit<WebhookDeliveriesTable, 'id'>;
export type WebhookAttemptUpdate = Pick<WebhookDeliveriesTable, 'status' | 'attempts' | 'next_attempt_at' | 'last_status_code' | 'last_error' | 'updated_at'>;

export async function insertDelivery(db: Executor, delivery: NewWebhookDelivery): Promise<WebhookDeliveryRow> {
  return db.insertInto('webhook_deliveries').values(delivery).returningAll().executeTakeFirstOrThrow();
}

export async function insertAttempt(db: Executor, attempt: Omit<WebhookAttemptsTable, 'id'>): Promise<void> {
  await db.insertInto('webhook_attempts').values(attempt).execute();
}

/**
 * Claims due deliveries for one sending pass; run it in a transaction. PostgreSQL skips rows
 * another replica holds (`for update skip locked`), and every claimed row is leased (its next
 * attempt pushed to `leaseUntil`) before the transaction commits, so no two replicas send one at
 * once and a crash mid-send retries after the lease. SQLite has one replica and one connection,
 * so the transaction alone serializes claims.
 */
export async function claimDueDeliveries(db: Executor, now: number, limit: number, leaseUntil: number): Promise<WebhookDeliveryRow[]> {
  const query = db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .orderBy('next_attempt_at')
    .orderBy('id')
    .limit(limit);
  const rows = await (dialectOf(db) === 'postgres' ? query.forUpdate().skipLocked() : query).execute();
  if (rows.length > 0) {
    await db
      .updateTable('webhook_deliveries')
      .set({ next_attempt_at: leaseUntil })
      .where('id', 'in', rows.map((r) => r.id))
      .execute();
  }
  return rows;
}

/**
 * Records the outcome of attempt `set.attempts` (delivered, failed for good, or pending again at
 * its next time). Guarded: only a row still pending after exactly the attempts the sender saw
 * when it claimed the row is changed, so a sender whose lease ran out cannot overwrite the
 * outcome of the one that took over. Returns whether the row changed.
 */
export async function recordAttempt(db: Executor, id: number, claimedAttempts: number, set: WebhookAttemptUpdate): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set(set)
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('attempts', '=', claimedAttempts)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function findDeliveryByEventId(db: Executor, eventId: string): Promise<WebhookDeliveryRow | undefined> {
  // The first delivery of the event (redeliveries share its id).
  return db.selectFrom('webhook_deliveries').selectAll().where('event_id', '=', eventId).orderBy('id').executeTakeFirst();
}

export async function listDeliveries(db: Executor, subjectType: string, subjectId: number): Promise<WebhookDeliveryRow[]> {
  return db.selectFrom('webhook_deliveries').selectAll().where('subject_type', '=', subjectType).where('subject_id', '=', subjectId).orderBy('id').execute();
}

/** A subject's deliveries (a run's event, then its redeliveries), newest first. */
export async function listDeliveriesPage(db: Executor, subjectType: string, subjectId: number, page: { limit: number; offset: number }): Promise<WebhookDeliveryRow[]> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('subject_type', '=', subjectType)
    .where('subject_id', '=', subjectId)
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

export async function countDeliveries(db: Executor, subjectType: string, subjectId: number): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('subject_type', '=', subjectType)
    .where('subject_id', '=', subjectId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The attempts of the given deliveries, newest first. */
export async function attemptsOf(db: Executor, deliveryIds: readonly number[]): Promise<WebhookAttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  return db.selectFrom('webhook_attempts').selectAll().where('delivery_id', 'in', deliveryIds).orderBy('id', 'desc').execute();
}

/** Whether a delivery of the subject is still waiting to be sent or retried. */
export async function hasPendingDelivery(db: Executor, subjectType: string, subjectId: number): Promise<boolean> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('subject_type', '=', subjectType)
    .where('subject_id', '=', subjectId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return row !== undefined;
}

/** The subject's first delivery: the event as it was recorded when the subject ended. */
export async function firstDelivery(db: Executor, subjectType: string, subjectId: number): Promise<WebhookDeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('subject_type', '=', subjectType).where('subject_id', '=', subjectId).orderBy('id').executeTakeFirst();
}
