import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { useCan, useEvents } from '../context.ts';
import { scopeReason } from '../scopes.ts';
import { ErrorBanner, Guarded, formatCost, later } from '../ui.tsx';
import { DeliveryPanel } from './delivery.tsx';
import { PodFacts } from './pod-facts.tsx';
import { PodOutput } from './pod-output.tsx';
import { ACTIVE, podFromEvent, type Pod, type Usage } from './pods-model.ts';
import { useNewest } from '../newest.ts';

/** What was used and what it cost; `budget`: the pod's own limit (`CONFIG max_cost_usd`), spend shown against it. */
export function UsageFacts({ usage, budget }: { usage: Usage | null | undefined; budget?: number | null }) {
  if (!usage) return null;
  const n = (v: number | null) => (v === null || v === undefined ? '—' : v.toLocaleString());
  return (
    <dl class="facts" aria-label="Usage">
      <dt>Cost</dt>
      <dd>{formatCost(usage.cost_usd)}</dd>
      {budget !== null && budget !== undefined && (
        <>
          <dt>Budget</dt>
          <dd data-testid="pod-budget">
            {formatCost(usage.cost_usd ?? 0)} of {formatCost(budget)} <meter min={0} max={budget} value={usage.cost_usd ?? 0} aria-label="Spend against the pod's budget" />
          </dd>
        </>
      )}
      <dt>Input tokens</dt>
      <dd>{n(usage.input_tokens)}</dd>
      <dt>Output tokens</dt>
      <dd>{n(usage.output_tokens)}</dd>
      <dt>Cache read / write</dt>
      <dd>
        {n(usage.cache_read_tokens)} / {n(usage.cache_write_tokens)}
      </dd>
      <dt>Turns</dt>
      <dd>{n(usage.turns)}</dd>
    </dl>
  );
}

export function PodPage({ podKey }: { podKey: string }) {
  const canWrite = useCan('pods:write');
  const [pod, setPod] = useState<Pod | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const newest = useNewest();
  const load = () => newest(api<{ pod: Pod }>('GET', `/pods/${encodeURIComponent(podKey)}`), (r) => setPod((current) => (current?.key === podKey ? later(current, r.pod) : r.pod)), setError);
  useEffect(() => void load(), [podKey]);
  useEvents(['pod.'], (event) => {
    if (event.type === 'reset') return void load();
    const changed = podFromEvent(event);
    if (changed?.key === podKey) setPod((p) => (p ? later(p, changed as Pod) : p));
  });
  const terminate = async () => {
    setBusy(true);
    try {
      await api('POST', `/pods/${encodeURIComponent(podKey)}/terminate`);
      await load();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const active = pod ? ACTIVE.includes(pod.status) : false;
  return (
    <section aria-labelledby="pod-title">
      <p>
        <a href="#/pods">← Pods</a>
      </p>
      <div class="view-head">
        <h1 id="pod-title">Pod {podKey}</h1>
        {pod && active && (
          <Guarded allowed={canWrite} reason={scopeReason('pods:write')} class="danger" busy={busy} onClick={terminate}>
            Terminate
          </Guarded>
        )}
      </div>
      <ErrorBanner error={error} />
      {pod && (
        <div class="grid2">
          <div class="panel">
            <PodFacts pod={pod} />
          </div>
          <div class="panel">
            <h2>Usage and cost</h2>
            <UsageFacts usage={pod.usage} budget={pod.max_cost_usd} />
          </div>
        </div>
      )}
      {pod && (
        <details class="panel">
          <summary>Prompt</summary>
          <pre class="terminal">{pod.prompt}</pre>
        </details>
      )}
      {pod?.delivery && <DeliveryPanel delivery={pod.delivery} />}
      <PodOutput podKey={podKey} />
      {pod && (
        <section class="panel" aria-labelledby="result">
          <h2 id="result">Result</h2>
          <p class="message content">{pod.result ?? (active ? 'Not finished yet.' : 'The agent gave no final message.')}</p>
        </section>
      )}
    </section>
  );
}
