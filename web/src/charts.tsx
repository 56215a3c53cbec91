/** Small SVG charts, drawn here (no chart library): runs over time by status, and pod durations. */

export const STATUS_COLOURS: Record<string, string> = {
  completed: '#15803d',
  failed: '#b91c1c',
  timeout: '#c2410c',
  cancelled: '#6b7280',
  skipped: '#a3a3a3',
  running: '#1d4ed8',
  pending: '#60a5fa',
  queued: '#d97706',
  terminated: '#6b7280',
  orphaned: '#7c2d12',
  initializing: '#93c5fd',
};

export interface RunPoint {
  status: string;
  created_at: string;
}

/** Runs per time bucket, stacked by status: `buckets` equal slices from the first run to now. */
export function RunsChart({ runs, title, buckets = 14, width = 280, height = 64 }: { runs: RunPoint[]; title: string; buckets?: number; width?: number; height?: number }) {
  if (runs.length === 0) return <p class="hint">No runs yet.</p>;
  const times = runs.map((r) => Date.parse(r.created_at));
  const end = Math.max(Date.now(), ...times) + 1;
  const start = Math.min(...times);
  const span = Math.max(end - start, 60_000);
  const slots: Array<Record<string, number>> = Array.from({ length: buckets }, () => ({}));
  runs.forEach((run, i) => {
    const slot = Math.min(buckets - 1, Math.floor(((times[i] - start) / span) * buckets));
    slots[slot][run.status] = (slots[slot][run.status] ?? 0) + 1;
  });
  const max = Math.max(1, ...slots.map((s) => Object.values(s).reduce((a, b) => a + b, 0)));
  const barWidth = width / buckets;
  const statuses = [...new Set(runs.map((r) => r.status))];
  const summary = statuses.map((s) => `${runs.filter((r) => r.status === s).length} ${s}`).join(', ');
  return (
    <figure class="chart-figure">
      <svg class="chart" viewBox={`0 0 ${width} ${height}`} width={width} height={height} role="img" aria-label={`${title}: ${summary}, from ${new Date(start).toLocaleString()} to now`}>
        {slots.map((slot, i) => {
          let y = height;
          return Object.entries(slot).map(([status, count]) => {
            const h = (count / max) * (height - 4);
            y -= h;
            return (
              <rect x={i * barWidth + 1} y={y} width={barWidth - 2} height={h} fill={STATUS_COLOURS[status] ?? '#6b7280'}>
                <title>{`${count} ${status}`}</title>
              </rect>
            );
          });
        })}
        <line x1="0" y1={height - 0.5} x2={width} y2={height - 0.5} stroke="#9ca3af" />
      </svg>
      <ul class="legend" aria-hidden="true">
        {statuses.map((s) => (
          <li>
            <span class="swatch" style={{ background: STATUS_COLOURS[s] ?? '#6b7280' }} />
            {s}
          </li>
        ))}
      </ul>
    </figure>
  );
}

export interface DurationPoint {
  label: string;
  ms: number;
  status: string;
}

/** One horizontal bar per pod: how long it ran (or has been running), coloured by status. */
export function DurationsChart({ items, title }: { items: DurationPoint[]; title: string }) {
  if (items.length === 0) return <p class="hint">No finished pods yet.</p>;
  const width = 320;
  const row = 16;
  const height = items.length * row;
  const max = Math.max(1, ...items.map((i) => i.ms));
  const fmt = (ms: number) => (ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 60_000).toFixed(1)} min`);
  return (
    <svg class="chart" viewBox={`0 0 ${width} ${height}`} width={width} height={height} role="img" aria-label={`${title}: longest ${fmt(max)}`}>
      {items.map((item, i) => (
        <g>
          <text x="0" y={i * row + 12} font-size="10" fill="#374151">
            {item.label}
          </text>
          <rect x="90" y={i * row + 3} width={Math.max(1, ((width - 150) * item.ms) / max)} height={row - 6} fill={STATUS_COLOURS[item.status] ?? '#6b7280'}>
            <title>{`${item.label}: ${fmt(item.ms)} (${item.status})`}</title>
          </rect>
          <text x={92 + ((width - 150) * item.ms) / max} y={i * row + 12} font-size="10" fill="#374151">
            {fmt(item.ms)}
          </text>
        </g>
      ))}
    </svg>
  );
}
