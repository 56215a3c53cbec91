import { conflict } from '../../errors.ts';
import * as runs from '../../store/loop-runs.ts';
import type { WebhookAttemptRow, WebhookDeliveryRow } from '../../store/schema-loops.ts';
import * as deliveries from '../../store/webhooks.ts';
import type { DomainContext } from '../context.ts';
import { WebhookSender } from '../webhooks/outbox.ts';
import { RUN_SUBJECT } from './callbacks.ts';
import { getRun } from './service.ts';

export interface DeliveryWithAttempts {
  delivery: WebhookDeliveryRow;
  attempts: WebhookAttemptRow[];
}

/** GET /loops/:slug/runs/:run_id/deliveries: the run's callback deliveries with their attempts, newest first. */
export async function listRunDeliveries(ctx: DomainContext, orgId: number, slug: string, runId: number, page: { limit: number; offset: number }) {
  const { run } = await getRun(ctx, orgId, slug, runId);
  const db = ctx.store.db;
  const [rows, total] = await Promise.all([deliveries.listDeliveriesPage(db, RUN_SUBJECT, run.id, page), deliveries.countDeliveries(db, RUN_SUBJECT, run.id)]);
  const attempts = await deliveries.attemptsOf(db, rows.map((d) => d.id));
  const items: DeliveryWithAttempts[] = rows.map((delivery) => ({ delivery, attempts: attempts.filter((a) => a.delivery_id === delivery.id) }));
  return { items, total };
}

/**
 * POST /loops/:slug/runs/:run_id/redeliver: a new delivery of the run's event (the same body and
 * `webhook-id`) to the loop's callback_url as it is now, signed with its secret, with the whole
 * retry schedule. 409 when there is no event (the run has not ended, was skipped, or its loop had
 * no callback_url then), when the loop has no callback_url now, or while a delivery is pending.
 */
export async function redeliverRun(ctx: DomainContext, orgId: number, slug: string, runId: number): Promise<DeliveryWithAttempts> {
  const { loop, run } = await getRun(ctx, orgId, slug, runId);
  const delivery = await ctx.store.transaction(async (trx) => {
    await runs.lockRun(trx, run.id);
    const first = await deliveries.firstDelivery(trx, RUN_SUBJECT, run.id);
    if (!first) {
      throw conflict('NO_WEBHOOK_EVENT', `run ${run.id} has no callback event to redeliver (it has not ended, was skipped, or its loop had no callback_url when it ended)`);
    }
    if (!loop.callback_url) throw conflict('NO_WEBHOOK_EVENT', `loop "${loop.slug}" has no callback_url now; set one to redeliver`);
    if (await deliveries.hasPendingDelivery(trx, RUN_SUBJECT, run.id)) {
      throw conflict('DELIVERY_PENDING', `a delivery of run ${run.id}'s event is still pending; redeliver once it has been delivered or has failed`);
    }
    const now = ctx.now();
    const inserted = await deliveries.insertDelivery(trx, {
      org_id: first.org_id,
      event_id: first.event_id,
      url: loop.callback_url,
      // The loop's secret is kept encrypted with the same key as deliveries' copies.
      secret_encrypted: loop.callback_secret_encrypted,
      payload: first.payload,
      status: 'pending',
      attempts: 0,
      next_attempt_at: now,
      last_status_code: null,
      last_error: null,
      subject_type: RUN_SUBJECT,
      subject_id: run.id,
      created_at: now,
      updated_at: now,
    });
    await runs.updateRun(trx, run.id, { callback_status: 'pending' });
    return inserted;
  });
  WebhookSender.nudge();
  return { delivery, attempts: [] };
}
