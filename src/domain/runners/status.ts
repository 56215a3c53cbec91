import { recordEvent } from '../../events/writer.ts';
import type { Executor } from '../../store/db.ts';
import * as runners from '../../store/runners.ts';
import type { RunnerRow, RunnersTable } from '../../store/schema-runners.ts';
import type { DomainContext } from '../context.ts';
import { runnerView } from './view.ts';

/**
 * A runner's status changes (connected, heartbeat, disconnected, silent, deleted), each with its
 * `runner.updated` event in the same transaction when the status did change.
 */
async function withStatusEvent(ctx: DomainContext, id: number, change: (trx: Executor) => Promise<boolean>): Promise<boolean> {
  return ctx.store.transaction(async (trx) => {
    const before = await runners.findRunnerById(trx, id);
    if (!before || !(await change(trx))) return false;
    const after = await runners.findRunnerById(trx, id);
    if (after && after.status !== before.status) await recordRunnerUpdated(ctx, trx, after);
    return true;
  });
}

export async function recordRunnerUpdated(ctx: DomainContext, trx: Executor, runner: RunnerRow): Promise<void> {
  const shown = (await runners.findRunner(trx, runner.org_id, runner.id)) ?? { ...runner, pod_count: 0 };
  await recordEvent(ctx, trx, runner.org_id, 'runner.updated', runnerView(shown));
}

export const runnerConnected = (
  ctx: DomainContext,
  id: number,
  values: Parameters<typeof runners.markConnected>[2],
  now: number,
): Promise<boolean> => withStatusEvent(ctx, id, (trx) => runners.markConnected(trx, id, values, now));

/**
 * Most heartbeats change only the time: one update, in a transaction of its own so that on SQLite
 * it shares a commit with the others arriving together (the runner simulator's 10,000 runners send
 * 1,000 a second). Only when that finds the status different (or the connection replaced) does
 * the full change run, with its reads and its `runner.updated` event.
 */
export async function runnerHeartbeat(ctx: DomainContext, id: number, connectionId: string, status: RunnersTable['status'], now: number): Promise<boolean> {
  if (await ctx.store.transaction((trx) => runners.recordSteadyHeartbeat(trx, id, connectionId, status, now))) return true;
  return withStatusEvent(ctx, id, (trx) => runners.recordHeartbeat(trx, id, connectionId, status, now));
}

export const runnerDisconnected = (ctx: DomainContext, id: number, connectionId: string, now: number): Promise<boolean> =>
  withStatusEvent(ctx, id, (trx) => runners.markDisconnected(trx, id, connectionId, now));

export const runnerDeleted = (ctx: DomainContext, id: number, now: number): Promise<boolean> =>
  withStatusEvent(ctx, id, (trx) => runners.markDeleted(trx, id, now));

/** Runners silent since before `silentBefore` go offline (keeping their connection id: see scheduler/liveness.ts). */
export async function silentRunnersOffline(ctx: DomainContext, silentBefore: number, now: number): Promise<void> {
  for (const id of await runners.silentRunnerIds(ctx.store.db, silentBefore)) {
    await withStatusEvent(ctx, id, (trx) => runners.markOfflineIfSilent(trx, id, silentBefore, now));
  }
}
