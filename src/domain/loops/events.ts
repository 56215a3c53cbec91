import { recordEvent } from '../../events/writer.ts';
import type { Executor } from '../../store/db.ts';
import * as loopRuns from '../../store/loop-runs.ts';
import * as loops from '../../store/loops.ts';
import type { LoopRow, LoopsTable } from '../../store/schema-loops.ts';
import type { DomainContext } from '../context.ts';
import { runRecords } from './records.ts';
import { loopView } from './view.ts';

/** `loop.*` with the loop as stored now (and its run statistics), in `trx`. */
export async function recordLoopEvent(ctx: DomainContext, trx: Executor, type: 'loop.created' | 'loop.updated' | 'loop.deleted', loop: LoopRow): Promise<void> {
  const stats = (await loops.loopStats(trx, [loop.id])).get(loop.id);
  await recordEvent(ctx, trx, loop.org_id, type, loopView(loop, stats), { loop_slug: loop.slug });
}

/** Changes a loop and records its `loop.updated` in one transaction. */
export async function updateLoopWithEvent(ctx: DomainContext, loopId: number, set: Partial<Omit<LoopsTable, 'id' | 'org_id'>>): Promise<LoopRow> {
  return ctx.store.transaction(async (trx) => {
    const updated = await loops.updateLoop(trx, loopId, set);
    await recordLoopEvent(ctx, trx, 'loop.updated', updated);
    return updated;
  });
}

/** `run.created` or `run.updated` with the run record as stored now, in `trx`. */
export async function recordRunEvent(ctx: DomainContext, trx: Executor, type: 'run.created' | 'run.updated', runId: number): Promise<void> {
  const run = await loopRuns.findRunById(trx, runId);
  if (!run) return;
  const loop = await loops.findLoopById(trx, run.loop_id);
  if (!loop) return;
  const [record] = await runRecords(trx, [run], loop.slug);
  await recordEvent(ctx, trx, run.org_id, type, record, { loop_slug: loop.slug, pod_key: run.pod_key });
}
