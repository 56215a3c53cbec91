import type { Executor } from '../../store/db.ts';
import * as runs from '../../store/loop-runs.ts';
import type { LoopRow, LoopRunRow } from '../../store/schema-loops.ts';
import type { DomainContext } from '../context.ts';
import { enqueueWebhook } from '../webhooks/outbox.ts';
import { recordRunEvent } from './events.ts';
import { runRecords } from './records.ts';

export const RUN_FINISHED_EVENT = 'loop.run.finished';
/** The subject type of a run's callback deliveries. */
export const RUN_SUBJECT = 'loop_run';

/**
 * A run ended (not skipped): queue its signed callback in the same transaction, so the
 * delivery is recorded exactly when the run's end is.
 */
export async function announceRunEnd(trx: Executor, ctx: DomainContext, loop: LoopRow, run: LoopRunRow): Promise<void> {
  if (!loop.callback_url || !ctx.secrets) return;
  await enqueueWebhook(trx, ctx, {
    orgId: loop.org_id,
    url: loop.callback_url,
    secret: ctx.secrets.decrypt(loop.callback_secret_encrypted),
    type: RUN_FINISHED_EVENT,
    data: { loop: { id: loop.id, slug: loop.slug, name: loop.name }, run: (await runRecords(trx, [run], loop.slug))[0] },
    subject: { type: RUN_SUBJECT, id: run.id },
  });
}

/**
 * The sender settled a delivery: the run's callback_status shows it, and a `run.updated` says so
 * (a run page showing the deliveries reads them again on it: nothing else announces the outcome).
 */
export async function callbackSettled(ctx: DomainContext, subject: { type: string; id: number }, status: 'delivered' | 'failed'): Promise<void> {
  if (subject.type !== RUN_SUBJECT) return;
  await ctx.store.transaction(async (trx) => {
    await runs.updateRun(trx, subject.id, { callback_status: status });
    await recordRunEvent(ctx, trx, 'run.updated', subject.id);
  });
}

/**
 * An attempt of a run's callback failed and waits for its retry: a `run.updated` says so (the run
 * itself is unchanged, `callback_status` still `pending`), so a run page reads the deliveries again
 * and shows the attempt now, not when its read of the delivery said the next one was due.
 */
export async function callbackRetrying(ctx: DomainContext, subject: { type: string; id: number }): Promise<void> {
  if (subject.type !== RUN_SUBJECT) return;
  await ctx.store.transaction((trx) => recordRunEvent(ctx, trx, 'run.updated', subject.id));
}
