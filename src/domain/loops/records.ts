import type { Executor } from '../../store/db.ts';
import { podResultsByKeys, type PodResultsRow } from '../../store/pods.ts';
import type { LoopRunRow } from '../../store/schema-loops.ts';
import { podResultsView } from '../pods/results.ts';
import { parseActor } from '../../events/actor.ts';
import { parseDelivery } from '../deliveries/model.ts';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/**
 * The run record (docs/api.md "Loops and runs"), as the API returns it and callbacks carry it, with its pod's
 * results (docs/agents.md): read from the pod, so what the agent reported after its run ended (a
 * cancelled run's pod reporting its usage later) shows too.
 */
export function runRecord(run: LoopRunRow, loopSlug: string, pod: PodResultsRow | undefined) {
  return {
    id: run.id,
    loop_id: run.loop_id,
    loop_slug: loopSlug,
    run_number: run.run_number,
    status: run.status,
    trigger_type: run.trigger_type,
    variables: JSON.parse(run.variables) as Record<string, unknown>,
    resolved_prompt: run.resolved_prompt,
    pod_key: run.pod_key,
    runner_id: run.runner_id,
    scheduled_at: iso(run.scheduled_at),
    started_at: iso(run.started_at),
    finished_at: iso(run.finished_at),
    duration_sec: run.started_at !== null && run.finished_at !== null ? Math.round((run.finished_at - run.started_at) / 100) / 10 : null,
    error_message: run.error_message,
    ...podResultsView(run.pod_key === null ? undefined : pod),
    // What its pod did with the work (docs/agents.md "Getting the work back"); a persistent loop's run delivers what it added.
    delivery: run.pod_key === null || !pod ? null : parseDelivery(pod.delivery),
    callback_status: run.callback_status,
    triggered_by: parseActor(run.triggered_by),
    created_at: new Date(run.created_at).toISOString(),
    updated_at: new Date(run.updated_at).toISOString(),
  };
}

export type RunRecord = ReturnType<typeof runRecord>;

/** Run records of one loop's runs, their pods' results read in one query. */
export async function runRecords(db: Executor, runs: readonly LoopRunRow[], loopSlug: string): Promise<RunRecord[]> {
  const pods = await podResultsByKeys(db, runs.flatMap((run) => (run.pod_key === null ? [] : [run.pod_key])));
  return runs.map((run) => runRecord(run, loopSlug, run.pod_key === null ? undefined : pods.get(run.pod_key)));
}
