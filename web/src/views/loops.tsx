import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { RunsChart } from '../charts.tsx';
import { navigate, useCan, useEvents } from '../context.ts';
import { resourceOf } from '../live.ts';
import { scopeReason } from '../scopes.ts';
import { Dialog, ErrorBanner, Guarded, Status, formatCost, formatTime } from '../ui.tsx';
import { LoopForm } from './loop-form.tsx';
import { ACTIVE_RUNS, runCounts, upsertRun, type Loop, type Run } from './loops-model.ts';

const CHARTED = 20;

export function LoopsView() {
  const canWrite = useCan('loops:write');
  const [loops, setLoops] = useState<Loop[]>([]);
  const [runs, setRuns] = useState<Record<string, Run[]>>({});
  const [error, setError] = useState<unknown>(null);
  const [creating, setCreating] = useState(false);
  const load = async () => {
    try {
      const { loops: all } = await api<{ loops: Loop[] }>('GET', '/loops');
      setLoops(all);
      const pages = await Promise.all(all.slice(0, CHARTED).map((l) => api<{ runs: Run[] }>('GET', `/loops/${encodeURIComponent(l.slug)}/runs?limit=100`).then((r) => [l.slug, r.runs] as const)));
      setRuns(Object.fromEntries(pages));
    } catch (e) {
      setError(e);
    }
  };
  useEffect(() => void load(), []);
  useEvents(['loop.', 'run.'], (event) => {
    if (event.type === 'reset') return void load();
    const loop = resourceOf<Loop>(event, 'loop');
    if (loop) {
      setLoops((ls) => (event.type === 'loop.deleted' ? ls.filter((l) => l.slug !== loop.slug) : ls.some((l) => l.id === loop.id) ? ls.map((l) => (l.id === loop.id ? { ...l, ...loop } : l)) : [loop, ...ls]));
    }
    const run = resourceOf<Run>(event, 'run');
    if (run) {
      setRuns((all) => ({ ...all, [run.loop_slug]: upsertRun(all[run.loop_slug] ?? [], run) }));
      // A run that ended changes its loop's counts and cost: read them again.
      if (!ACTIVE_RUNS.includes(run.status)) {
        api<{ loop: Loop }>('GET', `/loops/${encodeURIComponent(run.loop_slug)}`).then((r) => setLoops((ls) => ls.map((l) => (l.id === r.loop.id ? r.loop : l))), setError);
      }
    }
  });
  return (
    <section aria-labelledby="loops-title">
      <div class="view-head">
        <h1 id="loops-title">Loops</h1>
        <Guarded allowed={canWrite} reason={scopeReason('loops:write')} onClick={() => setCreating(true)}>
          New loop
        </Guarded>
      </div>
      <ErrorBanner error={error} />
      <div class="table-wrap">
        <table aria-label="Loops">
          <thead>
            <tr>
              <th scope="col">Loop</th>
              <th scope="col">Status</th>
              <th scope="col" class="hide-narrow">Schedule</th>
              <th scope="col" class="hide-narrow">Runs</th>
              <th scope="col" class="hide-narrow">Cost</th>
              <th scope="col">Recent runs</th>
            </tr>
          </thead>
          <tbody>
            {loops.map((l) => (
              <tr data-loop={l.slug}>
                <td>
                  <a href={`#/loops/${encodeURIComponent(l.slug)}`}>{l.name}</a>
                  <div class="hint">{l.slug}</div>
                </td>
                <td>
                  <Status value={l.status} />
                  {l.active_run_count > 0 && <div class="hint">{l.active_run_count} active</div>}
                </td>
                <td class="hide-narrow">
                  {l.cron_expression ? `${l.cron_expression} (${l.cron_timezone})` : 'manual'}
                  {l.next_run_at && <div class="hint">next {formatTime(l.next_run_at)}</div>}
                </td>
                <td class="hide-narrow" data-testid="run-counts">
                  {runCounts(l)}
                </td>
                <td class="hide-narrow">{formatCost(l.total_cost_usd)}</td>
                <td>{runs[l.slug] ? <RunsChart runs={runs[l.slug]} title={`Runs of ${l.name} over time`} width={160} height={36} /> : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {loops.length === 0 && <p class="hint">No loops yet. A loop runs an agent on a schedule or on demand: <strong>New loop</strong> makes one (docs/api.md "Loops and runs").</p>}
      {creating && (
        <Dialog title="New loop" onClose={() => setCreating(false)}>
          <LoopForm
            loop={null}
            onSaved={(loop) => {
              setCreating(false);
              navigate(`/loops/${encodeURIComponent(loop.slug)}`);
            }}
          />
        </Dialog>
      )}
    </section>
  );
}
