import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openStore, type DatabaseKind, type Store } from '../../src/store/db.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { inject } from 'vitest';
import { replayPostgresTemplate, type DatabaseTemplates } from './db-template.ts';

/** Every suite runs on SQLite, and on PostgreSQL too when DATABASE_URL is set (as in CI). */
export const DATABASES: DatabaseKind[] = process.env.DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

export interface TestDatabase {
  kind: DatabaseKind;
  /** How to open another store on the same data (a second replica, a restarted server). */
  open(): Store;
  /** Environment that points a child `drover` process at the same data. */
  env: Record<string, string>;
  dataDir: string;
  cleanup(): Promise<void>;
}

/** A fresh, empty database of the given kind: its own SQLite file, or its own PostgreSQL schema. */
export async function createTestDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  return newDatabase(kind, null);
}

/** A fresh database, migrated from `templates` when given (see test/helpers/db-template.ts). */
async function newDatabase(kind: DatabaseKind, templates: DatabaseTemplates | null): Promise<TestDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-test-'));
  if (kind === 'sqlite') {
    const sqlitePath = path.join(dataDir, 'drover.sqlite');
    if (templates) fs.copyFileSync(templates.sqliteFile, sqlitePath);
    return {
      kind,
      dataDir,
      open: () => openStore({ sqlitePath }),
      env: { DROVER_DATA_DIR: dataDir },
      async cleanup() {
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const url = process.env.DATABASE_URL!;
  const schema = `t_${crypto.randomBytes(6).toString('hex')}`;
  if (templates?.postgresScript) {
    await replayPostgresTemplate(url, schema, templates.postgresScript);
  } else {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
  }
  const schemaUrl = new URL(url);
  schemaUrl.searchParams.set('options', `-c search_path=${schema}`);
  return {
    kind,
    dataDir,
    open: () => openStore({ databaseUrl: url, schema }),
    env: { DROVER_DATA_DIR: dataDir, DATABASE_URL: schemaUrl.toString() },
    async cleanup() {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The run's migrated templates, when there are any for `kind` (test/global-setup.ts). */
function templatesFor(kind: DatabaseKind): DatabaseTemplates | null {
  const templates = inject('databaseTemplates') ?? null;
  return templates && (kind === 'sqlite' || templates.postgresScript !== null) ? templates : null;
}

/**
 * A fresh database already migrated (a copy of the run's template) with no store open on it, for a
 * child `drover serve` to start on; an unmigrated one when the run has no templates. The server's
 * own migrator then finds nothing to do.
 */
export async function createMigratedTestDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  return newDatabase(kind, templatesFor(kind));
}

/**
 * A migrated store on a fresh database, with its cleanup: a copy of the run's migrated template
 * (test/global-setup.ts), or migrated here when the run has none.
 */
export async function createTestStore(kind: DatabaseKind): Promise<{ store: Store; database: TestDatabase; cleanup(): Promise<void> }> {
  const usable = templatesFor(kind);
  const database = await newDatabase(kind, usable);
  const store = database.open();
  if (!usable) await migrateToLatest(store);
  return {
    store,
    database,
    async cleanup() {
      await store.close();
      await database.cleanup();
    },
  };
}
