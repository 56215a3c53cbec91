/**
 * The readable forms of API answers: tables for lists, `key: value` records for one resource.
 * `--json` bypasses all of this and prints the API's JSON as it came.
 */
import type { Answer } from '../../client/index.ts';
import type { CommandContext } from './framework.ts';
import { escapeJsonControls, stripTerminalControls } from './terminal.ts';

export interface Column<T> {
  header: string;
  value(row: T): unknown;
  /** Cut to this many characters (titles, prompts). */
  max?: number;
}

/** One line of text for a value: null and undefined as `-`, lists comma-joined, objects as JSON. */
export function cell(value: unknown, max = 80): string {
  let text: string;
  if (value === null || value === undefined || value === '') text = '-';
  else if (Array.isArray(value)) text = value.length === 0 ? '-' : value.map((v) => cell(v)).join(',');
  else if (typeof value === 'object') text = JSON.stringify(value);
  else text = String(value);
  text = text.replace(/\s+/g, ' ');
  return [...text].length > max ? `${[...text].slice(0, max - 1).join('')}…` : text;
}

/** An aligned table with a header line; `empty` when there are no rows. */
export function table<T>(rows: T[], columns: Column<T>[], empty: string): string {
  if (rows.length === 0) return `${empty}\n`;
  const cells = rows.map((row) => columns.map((c) => cell(c.value(row), c.max)));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => [...r[i]].length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (i === values.length - 1 ? v : v + ' '.repeat(widths[i] - [...v].length)))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map(line)].join('\n') + '\n';
}

/** `key: value` lines for one object, keys aligned; `hide` replaces values that should not be shown. */
export function record(object: Record<string, unknown>, hide: Record<string, string> = {}): string {
  const keys = Object.keys(object);
  const width = Math.max(...keys.map((k) => k.length));
  return (
    keys
      .map((key) => {
        const value = object[key];
        if (key in hide && value !== null && value !== undefined) return `${key.padEnd(width)}  ${hide[key]}`;
        // Text of several lines (a description, a prompt) goes below its key, indented.
        if (typeof value === 'string' && value.includes('\n')) return `${key}\n${indent(value)}`;
        return `${key.padEnd(width)}  ${cell(value, 10_000)}`;
      })
      .join('\n') + '\n'
  );
}

const indent = (text: string) =>
  text
    .replace(/\n+$/, '')
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');

/**
 * `--json`: the body as sent; otherwise what `render` makes of the data. Answers carry text that
 * agents wrote (a pod's result, messages, titles), so terminal control sequences are taken out
 * of the readable form, and C1 controls escaped in the JSON, unless `--raw` (docs/cli.md).
 */
export function show<T>(ctx: CommandContext, answer: Answer<T>, render: (data: T) => string): void {
  if (ctx.json) ctx.out.write(`${ctx.raw ? answer.raw : escapeJsonControls(answer.raw)}\n`);
  else ctx.out.write(ctx.raw ? render(answer.data) : stripTerminalControls(render(answer.data)));
}

/** One line of a stream (messages, events): as `show` treats an answer. */
export function streamLine(ctx: CommandContext, item: unknown, readable: () => string): void {
  if (ctx.json) ctx.out.write(`${ctx.raw ? JSON.stringify(item) : escapeJsonControls(JSON.stringify(item))}\n`);
  else ctx.out.write(ctx.raw ? readable() : stripTerminalControls(readable()));
}

/** A footer for a page of a longer list. */
export function pageNote(shown: number, total: number, offset: number, what: string): string {
  if (total <= shown && offset === 0) return '';
  return `(${what} ${shown === 0 ? 'none' : `${offset + 1}–${offset + shown}`} of ${total}; see --limit and --offset)\n`;
}

/** Local time, minutes precision: `2026-11-24 10:00`. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '-';
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
