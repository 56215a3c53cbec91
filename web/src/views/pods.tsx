import { useEffect, useState } from 'preact/hooks';
import { api, query } from '../api.ts';
import { DurationsChart } from '../charts.tsx';
import { navigate, useApp, useCan, useEvents } from '../context.ts';
import { resourceOf } from '../live.ts';
import { scopeReason } from '../scopes.ts';
import { ErrorBanner, Guarded, Status, formatTime, later } from '../ui.tsx';
import { nameOf, useNames } from '../names.ts';
import { POD_STATUSES } from '../../../src/protocol/enums.ts';
import { ACTIVE, podFromEvent, promptLine, type PodItem, type Runner } from './pods-model.ts';
import { useNewest } from '../newest.ts';

const PAGE = 50;

/** The agents the org's runners advertise (slugs), for the new-pod form. */
function agentsOf(runners: Runner[]): string[] {
  return [...new Set(runners.flatMap((r) => r.agents.map((a) => a.slug)))].sort();
}

function NewPodForm({ runners, onCreated }: { runners: Runner[]; onCreated: (key: string) => void }) {
  const agents = agentsOf(runners);
  const [agent, setAgent] = useState('');
  const [prompt, setPrompt] = useState('');
  const [runner, setRunner] = useState('');
  const [extra, setExtra] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const chosenAgent = agent || (agents.includes('shell') ? 'shell' : (agents[0] ?? ''));
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const layer = [promptLine(prompt), extra.trim()].filter(Boolean).join('\n');
      const created = await api<{ pod: { pod_key: string } }>('POST', '/pods', { agent_slug: chosenAgent, agentfile_layer: layer, ...(runner ? { runner_id: Number(runner) } : {}) });
      setPrompt('');
      onCreated(created.pod.pod_key);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel stack" aria-labelledby="new-pod" onSubmit={submit}>
      <h2 id="new-pod">New pod</h2>
      <div class="row">
        {agents.length === 0 && <p class="hint">No runner advertises an agent yet. Start a runner on a machine with the agent's CLI installed (docs/runners.md); it lists the agents it finds.</p>}
        <label>
          Agent
          {agents.length ? (
            <select name="agent" value={chosenAgent} onChange={(e) => setAgent(e.currentTarget.value)}>
              {agents.map((a) => (
                <option value={a}>{a}</option>
              ))}
            </select>
          ) : (
            <input name="agent" value={agent} required onInput={(e) => setAgent(e.currentTarget.value)} />
          )}
        </label>
        <label>
          Runner
          <select value={runner} onChange={(e) => setRunner(e.currentTarget.value)}>
            <option value="">Any runner</option>
            {runners.map((r) => (
              <option value={String(r.id)}>
                {r.name} ({r.status}, {r.pod_count}/{r.max_pods})
              </option>
            ))}
          </select>
        </label>
      </div>
      <label>
        Prompt
        <textarea rows={4} value={prompt} onInput={(e) => setPrompt(e.currentTarget.value)} />
      </label>
      <details>
        <summary>More agentfile lines</summary>
        <label>
          Agentfile lines (MODE, CONFIG, REPO, BRANCH, ENV, CREDENTIAL)
          <textarea rows={3} value={extra} onInput={(e) => setExtra(e.currentTarget.value)} />
        </label>
      </details>
      <ErrorBanner error={error} />
      <div>
        <button type="submit" disabled={busy || !chosenAgent}>
          Start pod
        </button>
      </div>
    </form>
  );
}

export function PodsView() {
  const { scopes } = useApp();
  const canWrite = useCan('pods:write');
  const names = useNames();
  const [pods, setPods] = useState<PodItem[]>([]);
  const [total, setTotal] = useState(0);
  const [status, setStatus] = useState('');
  const [runners, setRunners] = useState<Runner[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [showForm, setShowForm] = useState(false);
  const newest = useNewest();
  const load = (s = status) =>
    newest(api<{ pods: PodItem[]; total: number }>('GET', `/pods${query({ status: s, limit: PAGE })}`), (page) => {
      setPods(page.pods);
      setTotal(page.total);
    }, setError);
  useEffect(() => {
    void load();
    if (scopes.has('runners:read')) api<{ runners: Runner[] }>('GET', '/runners').then((r) => setRunners(r.runners), setError);
  }, []);
  useEvents(['pod.'], (event) => {
    if (event.type === 'reset') return void load();
    const pod = podFromEvent(event);
    if (!pod) return;
    setPods((current) => {
      const index = current.findIndex((p) => p.key === pod.key);
      if (index >= 0) {
        const next = [...current];
        next[index] = later(next[index], pod as PodItem);
        return status && next[index].status !== status ? next.filter((_, i) => i !== index) : next;
      }
      if (status && pod.status !== status) return current;
      setTotal((t) => t + 1);
      return [{ status: 'queued', agent_slug: '', runner_id: null, prompt: '', result: null, usage: {} as PodItem['usage'], queue_position: null, created_at: new Date().toISOString(), updated_at: new Date().toISOString(), ...pod } as PodItem, ...current].slice(0, PAGE);
    });
  });
  useEvents(['runner.'], (event) => {
    const runner = resourceOf<Runner>(event, 'runner');
    if (runner) setRunners((rs) => (rs.some((r) => r.id === runner.id) ? rs.map((r) => (r.id === runner.id ? { ...r, ...runner } : r)) : [...rs, runner]));
  });
  const durations = pods
    .filter((p) => !ACTIVE.includes(p.status))
    .slice(0, 15)
    .map((p) => ({ label: p.key.slice(0, 14), ms: Date.parse(p.updated_at) - Date.parse(p.created_at), status: p.status }));
  return (
    <section aria-labelledby="pods-title">
      <div class="view-head">
        <h1 id="pods-title">Pods</h1>
        <Guarded allowed={canWrite} reason={scopeReason('pods:write')} onClick={() => setShowForm(!showForm)}>
          {showForm ? 'Hide the form' : 'New pod'}
        </Guarded>
      </div>
      {showForm && canWrite && <NewPodForm runners={runners} onCreated={(key) => navigate(`/pods/${encodeURIComponent(key)}`)} />}
      <div class="filters">
        <label>
          Status
          <select
            value={status}
            onChange={(e) => {
              setStatus(e.currentTarget.value);
              void load(e.currentTarget.value);
            }}
          >
            <option value="">All</option>
            {POD_STATUSES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
      </div>
      <ErrorBanner error={error} />
      <div class="table-wrap">
        <table aria-label="Pods">
          <thead>
            <tr>
              <th scope="col">Pod</th>
              <th scope="col">Status</th>
              <th scope="col">Agent</th>
              <th scope="col" class="hide-narrow">Prompt</th>
              <th scope="col" class="hide-narrow">Runner</th>
              <th scope="col" class="hide-narrow">Created</th>
            </tr>
          </thead>
          <tbody>
            {pods.map((pod) => (
              <tr data-pod={pod.key}>
                <td>
                  <a href={`#/pods/${encodeURIComponent(pod.key)}`}>{pod.key}</a>
                </td>
                <td>
                  <Status value={pod.status} />
                  {pod.queue_position ? ` #${pod.queue_position}` : ''}
                </td>
                <td>{pod.agent_slug}</td>
                <td class="prompt hide-narrow">{pod.prompt}</td>
                <td class="hide-narrow">{pod.runner_id === null ? '—' : <a href={`#/runners/${pod.runner_id}`}>{nameOf(names.runners, pod.runner_id)}</a>}</td>
                <td class="hide-narrow">{formatTime(pod.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p class="hint">
        {pods.length ? `${pods.length} of ${total} shown, newest first.` : status ? `No ${status} pods.` : 'No pods yet. New pod starts an agent on a runner; a loop or a ticket\'s "Run an agent" starts them too.'}
      </p>
      <section class="panel" aria-labelledby="durations">
        <h2 id="durations">Pod durations</h2>
        <p class="hint">Creation to end, for the latest finished pods above.</p>
        <DurationsChart items={durations} title="Pod durations" />
      </section>
    </section>
  );
}
