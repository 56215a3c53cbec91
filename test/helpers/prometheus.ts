/**
 * A strict reader of the Prometheus text exposition format 0.0.4: every line is a `# HELP`, a
 * `# TYPE` or a sample of a declared metric, with valid names, escaped label values and a number.
 * Throws on the first line that is not.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  types: Map<string, string>;
  samples: Sample[];
  /** The value of `name` with exactly these labels (undefined when absent). */
  value(name: string, labels?: Record<string, string>): number | undefined;
}

const METRIC = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*';
const SAMPLE = new RegExp(`^(${METRIC})(?:\\{((?:${LABEL}="(?:[^"\\\\\\n]|\\\\[\\\\"n])*",?)*)\\})? (\\S+)(?: -?\\d+)?$`);
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** As Prometheus reads it (Go's ParseFloat): NaN and Inf in any case, e.g. prom-client's `Nan`. */
function parseValue(raw: string, line: string): number {
  const word = raw.toLowerCase();
  if (word === 'nan') return NaN;
  if (word === '+inf' || word === 'inf') return Infinity;
  if (word === '-inf') return -Infinity;
  const value = Number(raw);
  if (raw.trim() === '' || Number.isNaN(value)) throw new Error(`not a number in: ${line}`);
  return value;
}

export function parsePrometheusText(text: string): Exposition {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const type = new RegExp(`^# TYPE (${METRIC}) (\\S+)$`).exec(line);
      if (type) {
        if (!TYPES.has(type[2])) throw new Error(`unknown type in: ${line}`);
        if (types.has(type[1])) throw new Error(`second TYPE for ${type[1]}`);
        types.set(type[1], type[2]);
        continue;
      }
      if (new RegExp(`^# HELP ${METRIC} `).test(line) || !/^# (HELP|TYPE) /.test(line)) continue;
      throw new Error(`malformed comment: ${line}`);
    }
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`malformed sample: ${line}`);
    const [, name, labelText, rawValue] = match;
    const base = name.replace(/_(bucket|sum|count|total|created)$/, '');
    if (!types.has(name) && !types.has(base)) throw new Error(`sample of an undeclared metric: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (labelText ?? '').matchAll(new RegExp(`(${LABEL})="((?:[^"\\\\]|\\\\.)*)"`, 'g'))) {
      labels[key] = value.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    }
    samples.push({ name, labels, value: parseValue(rawValue, line) });
  }
  const same = (a: Record<string, string>, b: Record<string, string>) =>
    Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([k, v]) => a[k] === v);
  return {
    types,
    samples,
    value: (name, labels = {}) => samples.find((s) => s.name === name && same(s.labels, labels))?.value,
  };
}
