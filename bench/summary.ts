/**
 * The one summary of `npm run bench` (bench/all.ts): each bench reports its figures here, and
 * when BENCH_SUMMARY_FILE is set (bench/all.ts sets it) they are appended to that file as JSON
 * lines, one per figure, which bench/all.ts gathers into one table. Run alone, a bench reports
 * nothing here and prints its own output as before.
 */
import fs from 'node:fs';

export interface Figure {
  /** Which bench measured it (bench/all.ts fills it in when the bench does not). */
  bench?: string;
  figure: string;
  measured: string;
  /** The target, as text (`< 40 ms`); none for figures that are only informative. */
  target?: string;
  /** Whether the target was met; null or absent when there is no target. */
  pass?: boolean | null;
}

export function reportFigures(bench: string, figures: Figure[]): void {
  const file = process.env.BENCH_SUMMARY_FILE;
  if (!file) return;
  const lines = figures.map((f) => JSON.stringify({ bench, target: '', pass: null, ...f }) + '\n');
  fs.appendFileSync(file, lines.join(''));
}

export function readFigures(file: string): Figure[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Figure);
}

const cell = (s: string) => s.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** The Markdown table: bench, figure, target, measured, pass/fail. */
export function summaryTable(figures: Figure[]): string {
  const lines = ['| Bench | Figure | Target | Measured | Result |', '|---|---|---|---|---|'];
  for (const f of figures) {
    const result = f.pass === true ? 'PASS' : f.pass === false ? '**FAIL**' : '';
    lines.push(`| ${cell(f.bench ?? '')} | ${cell(f.figure)} | ${cell(f.target ?? '')} | ${cell(f.measured)} | ${result} |`);
  }
  return lines.join('\n');
}
