import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../api.ts';
import { useCan, useEvents } from '../context.ts';
import { resourceOf } from '../live.ts';
import { scopeReason } from '../scopes.ts';
import { PodOutput } from './pod-output.tsx';
import { ErrorBanner, Guarded, Status, formatTime, later } from '../ui.tsx';
import { DeliveryPanel } from './delivery.tsx';
import { RunDeliveries, type CallbackDelivery } from './run-deliveries.tsx';
import { UsageFacts } from './pod.tsx';
import { ACTIVE_RUNS, type Run } from './loops-model.ts';
import { useNewest } from '../newest.ts';

export function RunPage({ slug, runId }: { slug: string; runId: number }) {
  const canWrite = useCan('loops:write');
  const canPods = useCan('pods:read');
  const [run, setRun] = useState<Run | null>(null);
  const [deliveries, setDeliveries] = useState<CallbackDelivery[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const base = `/loops/${encodeURIComponent(slug)}/runs/${runId}`;
  // Moving between runs by URL overlaps reads: only the newest one's answer is shown (../newest.ts).
  const newestRun = useNewest();
  const newestDeliveries = useNewest();
  const loadDeliveries = () =>
    newestDeliveries(
      api<{ deliveries: CallbackDelivery[] }>('GET', `${base}/deliveries`),
      (r) => setDeliveries(r.deliveries),
      (e) => setDeliveries(e instanceof ApiError && e.status === 404 ? [] : null),
    );
  const load = () => {
    void newestRun(api<{ run: Run }>('GET', base), (r) => setRun((current) => later(current, r.run)), setError);
    void loadDeliveries();
  };
  useEffect(load, [slug, runId]);
  // Each attempt comes as run.updated (a failed one waiting for its retry, the outcome); a retry
  // is also due at a known time, so the deliveries are read again then, should an event be missed.
  useEffect(() => {
    const due = (deliveries ?? []).filter((d) => d.status === 'pending' && d.next_attempt_at).map((d) => Date.parse(d.next_attempt_at!));
    if (due.length === 0) return;
    const timer = setTimeout(() => void loadDeliveries(), Math.max(1000, Math.min(...due) - Date.now() + 1000));
    return () => clearTimeout(timer);
  }, [deliveries]);
  useEvents(['run.'], (event) => {
    if (event.type === 'reset') return load();
    const changed = resourceOf<Run>(event, 'run');
    if (changed?.id === runId) {
      setRun((r) => later(r, changed));
      if (changed.callback_status !== 'none') void loadDeliveries();
    }
  });
  const cancel = async () => {
    try {
      setRun((await api<{ run: Run }>('POST', `${base}/cancel`)).run);
    } catch (e) {
      setError(e);
    }
  };
  return (
    <section aria-labelledby="run-title">
      <p>
        <a href={`#/loops/${encodeURIComponent(slug)}`}>← {slug}</a>
      </p>
      <div class="view-head">
        <h1 id="run-title">
          Run {runId} of {slug}
          {run && <span class="hint"> (#{run.run_number} of this loop)</span>}
        </h1>
        {run && ACTIVE_RUNS.includes(run.status) && (
          <Guarded allowed={canWrite} reason={scopeReason('loops:write')} class="danger" onClick={cancel}>
            Cancel run
          </Guarded>
        )}
      </div>
      <ErrorBanner error={error} />
      {run && (
        <div class="grid2">
          <div class="panel">
            <dl class="facts">
              <dt>Status</dt>
              <dd data-testid="run-status">
                <Status value={run.status} />
              </dd>
              <dt>Trigger</dt>
              <dd data-testid="run-trigger">
                {run.trigger_type}
                {run.triggered_by ? ` by ${run.triggered_by.name}` : ''}
              </dd>
              <dt>Pod</dt>
              <dd>{run.pod_key ? canPods ? <a href={`#/pods/${encodeURIComponent(run.pod_key)}`}>{run.pod_key}</a> : run.pod_key : '—'}</dd>
              <dt>Started</dt>
              <dd>{formatTime(run.started_at)}</dd>
              <dt>Finished</dt>
              <dd>{formatTime(run.finished_at)}</dd>
              <dt>Variables</dt>
              <dd>
                <code>{JSON.stringify(run.variables)}</code>
              </dd>
              <dt>Callback</dt>
              <dd data-testid="callback-status">
                <Status value={run.callback_status} />
              </dd>
              {run.error_message && (
                <>
                  <dt>Error</dt>
                  <dd>{run.error_message}</dd>
                </>
              )}
            </dl>
          </div>
          <div class="panel">
            <h2>Usage and cost</h2>
            <UsageFacts usage={run.usage} />
          </div>
        </div>
      )}
      {run?.resolved_prompt && (
        <details class="panel">
          <summary>Prompt</summary>
          <pre class="terminal">{run.resolved_prompt}</pre>
        </details>
      )}
      {run?.pod_key && canPods ? <PodOutput podKey={run.pod_key} /> : <p class="hint">{run?.pod_key ? scopeReason('pods:read') : 'No pod yet.'}</p>}
      {run?.result && (
        <section class="panel">
          <h2>Result</h2>
          <p class="message content">{run.result}</p>
        </section>
      )}
      {run?.delivery && <DeliveryPanel delivery={run.delivery} />}
      {deliveries && <RunDeliveries base={base} deliveries={deliveries} canWrite={canWrite} hasCallback={!!run && run.callback_status !== 'none'} onChanged={() => void loadDeliveries()} onError={setError} />}
    </section>
  );
}
