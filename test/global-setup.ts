import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildSqliteTemplate, recordPostgresTemplate } from './helpers/db-template.ts';

/**
 * Once per `vitest run`: migrated database templates that test/helpers/databases.ts copies for
 * every migrated test database (see test/helpers/db-template.ts). Removed when the run ends.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  // DROVER_TEST_NO_TEMPLATE=1: every test database is migrated on its own (to compare, or to rule the templates out).
  if (process.env.DROVER_TEST_NO_TEMPLATE === '1') {
    project.provide('databaseTemplates', null);
    return () => {};
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-template-'));
  try {
    const sqliteFile = await buildSqliteTemplate(dir);
    const url = process.env.DATABASE_URL;
    const postgresScript = url ? await recordPostgresTemplate(url) : null;
    project.provide('databaseTemplates', { sqliteFile, postgresScript });
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return () => fs.rmSync(dir, { recursive: true, force: true });
}
