/**
 * The readable form of `drover admin` answers, like the client commands': a table for a list, a
 * `key: value` record for one resource, the sentence of a message; `--json` prints the API's JSON.
 * The error body becomes the client commands' error lines (message, code, status, request_id).
 */
import { record, table, type Column } from './client/output.ts';

type Row = Record<string, unknown>;

const isRow = (value: unknown): value is Row => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Columns of a list: every field any row has, in first-seen order; long texts cut. */
function columnsOf(rows: Row[]): Column<Row>[] {
  const names: string[] = [];
  for (const row of rows) for (const name of Object.keys(row)) if (!names.includes(name)) names.push(name);
  return names.map((name) => ({ header: name.toUpperCase(), value: (row: Row) => row[name], max: 40 }));
}

/** The readable text of a successful answer's JSON. */
export function readableAnswer(body: unknown): string {
  if (!isRow(body)) return `${JSON.stringify(body, null, 2)}\n`;
  const parts: string[] = [];
  const scalars: Row = {};
  for (const [name, value] of Object.entries(body)) {
    if (Array.isArray(value) && value.every(isRow)) parts.push(table(value, columnsOf(value), `No ${name.replaceAll('_', ' ')}.`));
    else if (isRow(value)) parts.push(record(value));
    else scalars[name] = value;
  }
  // A message alone is its sentence; other top-level values (a key shown once) come first, as a record.
  const keys = Object.keys(scalars);
  if (keys.length === 1 && keys[0] === 'message') parts.unshift(`${String(scalars.message)}\n`);
  else if (keys.length > 0) parts.unshift(record(scalars));
  return parts.join('\n');
}

/** The error lines of a refused request, as the client commands write them. */
export function readableError(status: number, body: unknown): string {
  if (!isRow(body) || typeof body.error !== 'string') return `drover admin: HTTP ${status}\n`;
  const lines = [`drover admin: ${body.error}`, `  code: ${String(body.code)}`, `  status: ${status}`, `  request_id: ${String(body.request_id ?? '(none)')}`];
  for (const detail of Array.isArray(body.details) ? body.details : []) if (isRow(detail)) lines.push(`  ${String(detail.field)}: ${String(detail.message)}`);
  return `${lines.join('\n')}\n`;
}

/** What `drover admin` prints of an answer: its JSON indented with --json, else the readable form. */
export function adminOutput(status: number, text: string, json: boolean): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `${text}\n`;
  }
  if (json) return `${JSON.stringify(body, null, 2)}\n`;
  return status < 400 ? readableAnswer(body) : readableError(status, body);
}
