import type { LoopRunRow } from '../../store/schema-loops.ts';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** The run record of contract §3, as the API returns it and callbacks carry it. */
export function runRecord(run: LoopRunRow, loopSlug: string) {
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
    callback_status: run.callback_status,
    created_at: new Date(run.created_at).toISOString(),
    updated_at: new Date(run.updated_at).toISOString(),
  };
}

export type RunRecord = ReturnType<typeof runRecord>;
