import os from 'node:os';
import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/sequencer.ts';

/**
 * Test files run at once (docs/design.md "Tests: workers and order"): most files wait on processes
 * (servers, runners, sandboxes, git, browsers), so at least 3 even on 2 cores, where vitest's own
 * default (cores − 1) runs one file at a time; one per core above that, at most 8 (each worker's
 * apps and servers hold PostgreSQL connections: max_connections is 100 by default).
 * DROVER_TEST_WORKERS overrides it.
 */
const workers = Number(process.env.DROVER_TEST_WORKERS) || Math.min(8, Math.max(3, os.availableParallelism()));

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: workers,
    // The longest files first, from durations committed for a fresh clone (test/sequencer.ts).
    sequence: { sequencer: LongestFirstSequencer },
    // Migrated database templates, built once per run (test/helpers/db-template.ts).
    globalSetup: ['./test/global-setup.ts'],
    // The summary line first (CI tools read it), then the slowest files.
    reporters: ['default', './test/reporters/summary-line.ts', './test/reporters/slowest-files.ts'],
  },
});
