/** The usage view (docs/dashboard.md "Views"): what agents cost, per day, agent, loop, person. */
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api.ts';
import { useNewest } from '../newest.ts';
import { nameOf, useNames, type Names } from '../names.ts';
import { ErrorBanner, formatCost } from '../ui.tsx';
import { GROUPS, daysAgo, readUsage, type Group, type UsageReport, type UsageRow } from './usage-model.ts';

const tokens = (n: number | null | undefined) => (n ?? 0).toLocaleString();

function label(group: Group, row: UsageRow, names: Names): string {
  if (row.key === null || row.key === undefined || row.key === '') return group === 'user' ? 'no person (API keys, schedules)' : 'none';
  const id = Number(row.key);
  if (group === 'user' && Number.isInteger(id)) return nameOf(names.users, id);
  if (group === 'repository' && Number.isInteger(id)) return nameOf(names.repositories, id);
  return String(row.key);
}

export function UsageView() {
  const names = useNames();
  const [group, setGroup] = useState<Group>('day');
  const [from, setFrom] = useState(daysAgo(30));
  const [to, setTo] = useState(daysAgo(0));
  const [report, setReport] = useState<UsageReport | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [missing, setMissing] = useState(false);
  const newest = useNewest();
  useEffect(() => {
    setError(null);
    void newest(readUsage(group, from, to), setReport, (e) => (e instanceof ApiError && e.status === 404 ? setMissing(true) : setError(e)));
  }, [group, from, to]);
  const max = Math.max(0, ...(report?.groups ?? []).map((g) => g.cost_usd ?? 0));
  return (
    <section aria-labelledby="usage-title">
      <h1 id="usage-title">Usage</h1>
      <div class="filters">
        <label>
          Group by
          <select value={group} onChange={(e) => setGroup(e.currentTarget.value as Group)}>
            {GROUPS.map((g) => (
              <option value={g.value}>{g.label}</option>
            ))}
          </select>
        </label>
        <label>
          From
          <input type="date" value={from} onChange={(e) => setFrom(e.currentTarget.value)} />
        </label>
        <label>
          To
          <input type="date" value={to} onChange={(e) => setTo(e.currentTarget.value)} />
        </label>
      </div>
      <ErrorBanner error={error} />
      {missing && <p class="hint">This server does not report usage yet (no GET /usage). Each pod's page shows its own cost.</p>}
      {report && (
        <>
          <p data-testid="usage-total">
            Total: <strong>{formatCost(report.total.cost_usd)}</strong> over {report.total.pods} pods, {tokens(report.total.input_tokens)} input and {tokens(report.total.output_tokens)} output tokens.
          </p>
          {report.groups.length === 0 ? (
            <p class="hint">No pod used a model in this period.</p>
          ) : (
            <div class="table-wrap">
              <table aria-label={`Usage by ${GROUPS.find((g) => g.value === group)?.label.toLowerCase()}`}>
                <thead>
                  <tr>
                    <th scope="col">{GROUPS.find((g) => g.value === group)?.label}</th>
                    <th scope="col">Cost</th>
                    <th scope="col">Pods</th>
                    <th scope="col" class="hide-narrow">Input</th>
                    <th scope="col" class="hide-narrow">Output</th>
                    <th scope="col" class="hide-narrow">Cache read / write</th>
                  </tr>
                </thead>
                <tbody>
                  {report.groups.map((row) => (
                    <tr data-usage-key={String(row.key)}>
                      <td class="wrap">{label(group, row, names)}</td>
                      <td>
                        <span class="bar" style={{ width: `${max ? Math.max(2, (row.cost_usd / max) * 6) : 0}rem` }} aria-hidden="true" /> {formatCost(row.cost_usd)}
                      </td>
                      <td>{row.pods}</td>
                      <td class="hide-narrow">{tokens(row.input_tokens)}</td>
                      <td class="hide-narrow">{tokens(row.output_tokens)}</td>
                      <td class="hide-narrow">
                        {tokens(row.cache_read_tokens)} / {tokens(row.cache_write_tokens)}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </section>
  );
}

/** A loop's spend today against its daily budget, when the loop has one and the server reports usage. */
export function LoopBudget({ slug, budget }: { slug: string; budget: number | null | undefined }) {
  const [spent, setSpent] = useState<number | null>(null);
  const newest = useNewest();
  useEffect(() => {
    const today = daysAgo(0);
    void newest(readUsage('loop', today, today), (r) => setSpent(r.groups.find((g) => String(g.key) === slug)?.cost_usd ?? 0), () => setSpent(null));
  }, [slug]);
  if (spent === null && (budget === null || budget === undefined)) return null;
  return (
    <p data-testid="loop-budget">
      Spent today: {formatCost(spent ?? null)}
      {budget !== null && budget !== undefined ? (
        <>
          {' '}
          of {formatCost(budget)} <meter min={0} max={budget} value={spent ?? 0} aria-label="Spend against the daily budget" />
        </>
      ) : (
        ' (no daily budget)'
      )}
    </p>
  );
}
