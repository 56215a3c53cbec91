import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { RunsChart } from '../charts.tsx';
import { navigate, useCan, useEvents } from '../context.ts';
import { resourceOf } from '../live.ts';
import { scopeReason } from '../scopes.ts';
import { Dialog, ErrorBanner, Guarded, Status, formatCost, formatTime, parseJsonObject } from '../ui.tsx';
import { LoopForm } from './loop-form.tsx';
import { LoopBudget } from './usage.tsx';
import { runCounts, ACTIVE_RUNS, upsertRun, type Loop, type Run } from './loops-model.ts';
import { useNewest } from '../newest.ts';

function TriggerForm({ slug, allowed, onTriggered }: { slug: string; allowed: boolean; onTriggered: (run: Run) => void }) {
  const [variables, setVariables] = useState('{}');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const vars = parseJsonObject(variables, 'Variables');
      onTriggered((await api<{ run: Run }>('POST', `/loops/${encodeURIComponent(slug)}/trigger`, Object.keys(vars).length ? { variables: vars } : {})).run);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel stack" aria-labelledby="trigger-title" onSubmit={submit}>
      <h2 id="trigger-title">Trigger a run</h2>
      <label>
        Variables for this run (JSON object)
        <textarea rows={2} value={variables} onInput={(e) => setVariables(e.currentTarget.value)} disabled={!allowed} />
      </label>
      <ErrorBanner error={error} />
      <div>
        <Guarded type="submit" allowed={allowed} reason={scopeReason('loops:write')} busy={busy}>
          Trigger
        </Guarded>
      </div>
    </form>
  );
}

export function RunsTable({ runs, slug }: { runs: Run[]; slug: string }) {
  return (
    <div class="table-wrap">
      <table aria-label="Runs">
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Status</th>
            <th scope="col" class="hide-narrow">Trigger</th>
            <th scope="col" class="hide-narrow">Started</th>
            <th scope="col" class="hide-narrow">Duration</th>
            <th scope="col" class="hide-narrow">Callback</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <tr data-run={r.id}>
              <td>
                <a href={`#/loops/${encodeURIComponent(slug)}/runs/${r.id}`}>Run {r.id}</a>
                <div class="hint">#{r.run_number} of this loop</div>
              </td>
              <td>
                <Status value={r.status} />
              </td>
              <td class="hide-narrow">{r.trigger_type}</td>
              <td class="hide-narrow">{formatTime(r.started_at)}</td>
              <td class="hide-narrow">{r.duration_sec === null ? '—' : `${r.duration_sec.toFixed(1)} s`}</td>
              <td class="hide-narrow">
                <Status value={r.callback_status} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function LoopPage({ slug }: { slug: string }) {
  const canWrite = useCan('loops:write');
  const [loop, setLoop] = useState<Loop | null>(null);
  const [runs, setRuns] = useState<Run[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [editing, setEditing] = useState(false);
  const base = `/loops/${encodeURIComponent(slug)}`;
  const [newestLoop, newestRuns] = [useNewest(), useNewest()];
  const load = () => {
    void newestLoop(api<{ loop: Loop }>('GET', base), (r) => setLoop(r.loop), setError);
    void newestRuns(api<{ runs: Run[] }>('GET', `${base}/runs?limit=100`), (r) => setRuns(r.runs), setError);
  };
  useEffect(load, [slug]);
  useEvents(['loop.', 'run.'], (event) => {
    if (event.type === 'reset') return load();
    const changed = resourceOf<Loop>(event, 'loop');
    if (changed?.slug === slug) {
      if (event.type === 'loop.deleted') return navigate('/loops');
      setLoop((l) => (l ? { ...l, ...changed } : changed));
    }
    const run = resourceOf<Run>(event, 'run');
    if (run?.loop_slug === slug) {
      setRuns((rs) => upsertRun(rs, run));
      // A run that ended changes the loop's counts and cost: read them again.
      if (!ACTIVE_RUNS.includes(run.status)) api<{ loop: Loop }>('GET', base).then((r) => setLoop(r.loop), setError);
    }
  });
  const act = async (what: 'enable' | 'disable' | 'delete') => {
    if (what === 'delete' && !confirm(`Delete the loop ${slug} and its run history?`)) return;
    try {
      if (what === 'delete') {
        await api('DELETE', base);
        navigate('/loops');
      } else setLoop((await api<{ loop: Loop }>('POST', `${base}/${what}`)).loop);
    } catch (e) {
      setError(e);
    }
  };
  return (
    <section aria-labelledby="loop-title">
      <p>
        <a href="#/loops">← Loops</a>
      </p>
      <div class="view-head">
        <h1 id="loop-title">{loop?.name ?? slug}</h1>
        {loop && (
          <div class="row">
            <Guarded allowed={canWrite} reason={scopeReason('loops:write')} class="secondary" onClick={() => setEditing(true)}>
              Edit
            </Guarded>
            <Guarded allowed={canWrite} reason={scopeReason('loops:write')} class="secondary" onClick={() => act(loop.status === 'enabled' ? 'disable' : 'enable')}>
              {loop.status === 'enabled' ? 'Disable' : 'Enable'}
            </Guarded>
            <Guarded allowed={canWrite} reason={scopeReason('loops:write')} class="danger" onClick={() => act('delete')}>
              Delete
            </Guarded>
          </div>
        )}
      </div>
      <ErrorBanner error={error} />
      {loop && (
        <div class="grid2">
          <div class="panel">
            <dl class="facts">
              <dt>Status</dt>
              <dd data-testid="loop-status">
                <Status value={loop.status} />
              </dd>
              <dt>Agent</dt>
              <dd>{loop.custom_agent_slug ?? loop.agent_slug ?? 'default'}</dd>
              <dt>Schedule</dt>
              <dd>{loop.cron_expression ? `${loop.cron_expression} (${loop.cron_timezone})` : 'manual only'}</dd>
              <dt>Next run</dt>
              <dd>{formatTime(loop.next_run_at)}</dd>
              <dt>Policy</dt>
              <dd>
                {loop.concurrency_policy}, at most {loop.max_concurrent_runs} at once, {loop.timeout_minutes} min timeout
              </dd>
              <dt>Runs</dt>
              <dd>{runCounts(loop)}</dd>
              <dt>Cost</dt>
              <dd>
                {formatCost(loop.total_cost_usd)}
                <LoopBudget slug={slug} budget={loop.budget_usd_per_day} />
              </dd>
              <dt>Variables</dt>
              <dd>
                <code>{JSON.stringify(loop.prompt_variables)}</code>
              </dd>
            </dl>
          </div>
          <div class="panel">
            <h2>Runs over time</h2>
            <RunsChart runs={runs} title={`Runs of ${loop.name} over time`} />
          </div>
        </div>
      )}
      {loop && <TriggerForm slug={slug} allowed={canWrite} onTriggered={(run) => setRuns((rs) => upsertRun(rs, run))} />}
      <h2>Runs</h2>
      <RunsTable runs={runs} slug={slug} />
      {editing && loop && (
        <Dialog title={`Edit ${loop.name}`} onClose={() => setEditing(false)}>
          <LoopForm
            loop={loop}
            onSaved={(saved) => {
              setLoop(saved);
              setEditing(false);
            }}
          />
        </Dialog>
      )}
    </section>
  );
}
