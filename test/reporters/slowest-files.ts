import type { Reporter, TestModule } from 'vitest/node';

/** How many files the list shows. */
export const SLOWEST_COUNT = 25;

export interface FileTime {
  file: string;
  /** Import (collect) plus setup files plus every test and hook of the file, in ms. */
  totalMs: number;
  /** Tests and hooks only, in ms. */
  testsMs: number;
}

/** The `count` slowest files, slowest first, each as one line: `  123.4 s  path (tests 120.1 s)`. */
export function slowestLines(times: readonly FileTime[], count = SLOWEST_COUNT): string[] {
  const seconds = (ms: number) => (ms / 1000).toFixed(1);
  const slowest = [...times].sort((a, b) => b.totalMs - a.totalMs || a.file.localeCompare(b.file)).slice(0, count);
  const width = Math.max(0, ...slowest.map((t) => seconds(t.totalMs).length));
  return slowest.map((t) => `  ${seconds(t.totalMs).padStart(width)} s  ${t.file} (tests ${seconds(t.testsMs)} s)`);
}

/**
 * Ends the run, after the summary line, with the slowest test files and their durations (one line
 * each), so CI output shows where the time goes.
 */
export default class SlowestFilesReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const times = testModules.map((module): FileTime => {
      const d = module.diagnostic();
      return { file: module.relativeModuleId, totalMs: d.collectDuration + d.setupDuration + d.duration, testsMs: d.duration };
    });
    if (times.length === 0) return;
    const lines = slowestLines(times);
    process.stdout.write(`slowest test files (${lines.length} of ${times.length}):\n${lines.join('\n')}\n`);
  }
}
