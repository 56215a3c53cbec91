import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { useCan, useEvents } from '../context.ts';
import { resourceOf } from '../live.ts';
import { ErrorBanner, Status, formatTime } from '../ui.tsx';
import { podFromEvent, type Runner } from './pods-model.ts';
import { useNewest } from '../newest.ts';

function Load({ runner }: { runner: Runner }) {
  return (
    <span>
      <meter min={0} max={Math.max(1, runner.max_pods)} value={runner.pod_count} aria-label={`Load of ${runner.name}`} /> {runner.pod_count}/{runner.max_pods}
    </span>
  );
}

function Agents({ runner }: { runner: Runner }) {
  return (
    <ul class="legend">
      {runner.agents.map((a) => (
        <li>
          <span class="tag">
            {a.slug}
            {a.version ? ` ${a.version}` : ''}
          </span>
        </li>
      ))}
    </ul>
  );
}

function useRunnerEvents(apply: (runner: Runner) => void, reload: () => void) {
  useEvents(['runner.'], (event) => {
    if (event.type === 'reset') return reload();
    const runner = resourceOf<Runner>(event, 'runner');
    if (runner) apply(runner);
  });
}

export function RunnersView() {
  const [runners, setRunners] = useState<Runner[]>([]);
  const [error, setError] = useState<unknown>(null);
  const load = () => api<{ runners: Runner[] }>('GET', '/runners').then((r) => setRunners(r.runners), setError);
  useEffect(() => void load(), []);
  useRunnerEvents((runner) => setRunners((rs) => (rs.some((r) => r.id === runner.id) ? rs.map((r) => (r.id === runner.id ? { ...r, ...runner } : r)) : [...rs, runner])), load);
  return (
    <section aria-labelledby="runners-title">
      <h1 id="runners-title">Runners</h1>
      <ErrorBanner error={error} />
      <div class="table-wrap">
        <table aria-label="Runners">
          <thead>
            <tr>
              <th scope="col">Runner</th>
              <th scope="col">Status</th>
              <th scope="col">Load</th>
              <th scope="col">Sandbox</th>
              <th scope="col">Labels</th>
              <th scope="col" class="hide-narrow">Agents</th>
              <th scope="col" class="hide-narrow">Last heartbeat</th>
            </tr>
          </thead>
          <tbody>
            {runners.map((r) => (
              <tr data-runner={r.id}>
                <td>
                  <a href={`#/runners/${r.id}`}>{r.name}</a>
                </td>
                <td>
                  <Status value={r.status} />
                </td>
                <td>
                  <Load runner={r} />
                </td>
                <td>{r.sandbox ?? '—'}</td>
                <td data-testid="runner-labels">{r.labels.length ? r.labels.map((l) => <span class="tag label">{l}</span>) : '—'}</td>
                <td class="hide-narrow">
                  <Agents runner={r} />
                </td>
                <td class="hide-narrow">{formatTime(r.last_heartbeat_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {runners.length === 0 && (
        <p class="hint">
          No runner has registered yet. Pods need one: create a registration token (<code>npx drover admin runner-tokens create</code>), then start <code>drover runner</code> on a machine with the agents' CLIs (docs/runners.md), or run <code>drover serve</code> with its local runner.
        </p>
      )}
    </section>
  );
}

interface RunnerPod {
  key: string;
  status: string;
  agent_slug: string;
  prompt: string;
  created_at: string;
}

export function RunnerPage({ id }: { id: number }) {
  const canPods = useCan('pods:read');
  const [runner, setRunner] = useState<Runner | null>(null);
  const [pods, setPods] = useState<RunnerPod[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [newestRunner, newestPods] = [useNewest(), useNewest()];
  const load = () => {
    void newestRunner(api<{ runner: Runner }>('GET', `/runners/${id}`), (r) => setRunner(r.runner), setError);
    void newestPods(api<{ pods: RunnerPod[] }>('GET', `/runners/${id}/pods`), (r) => setPods(r.pods), setError);
  };
  useEffect(load, [id]);
  useRunnerEvents((r) => r.id === id && setRunner((cur) => (cur ? { ...cur, ...r } : r)), load);
  useEvents(['pod.'], (event) => {
    const pod = podFromEvent(event);
    if (!pod || (pod.runner_id !== undefined && pod.runner_id !== id)) return;
    setPods((ps) => (ps.some((p) => p.key === pod.key) ? ps.map((p) => (p.key === pod.key ? { ...p, ...pod } : p)) : pod.runner_id === id ? [{ prompt: '', agent_slug: '', status: '', created_at: '', ...pod } as RunnerPod, ...ps] : ps));
  });
  return (
    <section aria-labelledby="runner-title">
      <p>
        <a href="#/runners">← Runners</a>
      </p>
      <h1 id="runner-title">Runner {runner?.name ?? id}</h1>
      <ErrorBanner error={error} />
      {runner && (
        <div class="panel">
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <Status value={runner.status} />
            </dd>
            <dt>Load</dt>
            <dd>
              <Load runner={runner} />
            </dd>
            <dt>Sandbox</dt>
            <dd>{runner.sandbox ?? '—'}</dd>
            <dt>Agents</dt>
            <dd>
              <Agents runner={runner} />
            </dd>
            <dt>Version</dt>
            <dd>
              {runner.version} ({runner.os}/{runner.arch})
            </dd>
            <dt>Labels</dt>
            <dd>{runner.labels.join(', ') || '—'}</dd>
            <dt>Last heartbeat</dt>
            <dd>{formatTime(runner.last_heartbeat_at)}</dd>
          </dl>
        </div>
      )}
      <h2>Pods on this runner</h2>
      <div class="table-wrap">
        <table aria-label="Pods on this runner">
          <thead>
            <tr>
              <th scope="col">Pod</th>
              <th scope="col">Status</th>
              <th scope="col">Agent</th>
              <th scope="col" class="hide-narrow">Created</th>
            </tr>
          </thead>
          <tbody>
            {pods.map((p) => (
              <tr>
                <td>{canPods ? <a href={`#/pods/${encodeURIComponent(p.key)}`}>{p.key}</a> : p.key}</td>
                <td>
                  <Status value={p.status} />
                </td>
                <td>{p.agent_slug}</td>
                <td class="hide-narrow">{formatTime(p.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {pods.length === 0 && <p class="hint">No pod has run on this runner yet.</p>}
    </section>
  );
}
