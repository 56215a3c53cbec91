import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Migrated database templates, built once per run (test/helpers/db-template.ts).
    globalSetup: ['./test/global-setup.ts'],
    // The summary line first (CI tools read it), then the slowest files.
    reporters: ['default', './test/reporters/summary-line.ts', './test/reporters/slowest-files.ts'],
  },
});
