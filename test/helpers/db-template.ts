/**
 * Migrated templates of a test database, built once per `vitest run` (test/global-setup.ts) so a
 * test that needs a migrated database copies one instead of running every migration again:
 *
 * - SQLite: a migrated file, copied into the test's own data directory.
 * - PostgreSQL: the statements the migrator ran on a scratch schema, recorded once and replayed in
 *   the test's own schema in one round trip. Migrating a fresh schema costs far more: Kysely's
 *   migrator lists the tables of every schema of the database (hundreds while suites run), takes a
 *   database-wide advisory lock (so parallel workers and concurrent CI runs wait for each other)
 *   and commits each migration on its own.
 *
 * Each test still gets its own file or schema (test/helpers/databases.ts), and cleans it up.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { Kysely, Migrator, PostgresDialect, sql, type CompiledQuery } from 'kysely';
import { openStore, type Store } from '../../src/store/db.ts';
import { migrateToLatest, migrationsFor } from '../../src/store/migrate.ts';

/** What the global setup hands every test worker. */
export interface DatabaseTemplates {
  /** A migrated SQLite file (read-only to tests: they copy it). */
  sqliteFile: string;
  /** PostgreSQL (when DATABASE_URL is set): the migrations as one script, `SCHEMA_MARK` for the schema. */
  postgresScript: string | null;
}

declare module 'vitest' {
  export interface ProvidedContext {
    databaseTemplates: DatabaseTemplates | null;
  }
}

/** Stands for the (quoted) schema name in the recorded PostgreSQL script. */
export const SCHEMA_MARK = '__drover_schema__';

/** Migrates a SQLite file in `dir` once; its WAL is folded into it, so the one file is the whole database. */
export async function buildSqliteTemplate(dir: string): Promise<string> {
  const file = path.join(dir, 'template.sqlite');
  const store = openStore({ sqlitePath: file });
  try {
    await migrateToLatest(store);
    await sql`pragma wal_checkpoint(truncate)`.execute(store.db);
  } finally {
    await store.close();
  }
  const wal = `${file}-wal`;
  if (fs.existsSync(wal) && fs.statSync(wal).size > 0) throw new Error(`the template's WAL was not checkpointed: ${wal}`);
  return file;
}

/** Statements of the migrator's bookkeeping that a replay must not run (or need not: reads). */
const NOT_REPLAYED = /^\s*(begin|commit|rollback|select)\b/i;

/**
 * Runs every migration on a scratch schema of `url`'s database, recording each statement, and
 * returns them as one script for `replayPostgresTemplate`. The scratch schema is dropped.
 */
export async function recordPostgresTemplate(url: string): Promise<string> {
  const schema = `tpl_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`create schema ${schema}`);
    const statements: CompiledQuery[] = [];
    const pool = new pg.Pool({ connectionString: url, max: 1, options: `-c search_path=${schema}` });
    const db = new Kysely<unknown>({
      dialect: new PostgresDialect({ pool }),
      log: (event) => {
        if (event.level === 'query') statements.push(event.query);
      },
    });
    try {
      const migrations = migrationsFor({ kind: 'postgres' } as Store);
      const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, migrationTableSchema: schema });
      const { error } = await migrator.migrateToLatest();
      if (error) throw error;
    } finally {
      await db.destroy();
    }
    return statements
      .filter((s) => !NOT_REPLAYED.test(s.sql))
      .map((s) => `${withLiterals(s, admin).replaceAll(`"${schema}"`, `"${SCHEMA_MARK}"`)};`)
      .join('\n');
  } finally {
    await admin.query(`drop schema if exists ${schema} cascade`);
    await admin.end();
  }
}

/** The statement with its parameters written in as literals (a multi-statement script takes none). */
function withLiterals(statement: CompiledQuery, client: pg.Client): string {
  if (statement.parameters.length === 0) return statement.sql;
  return statement.sql.replace(/\$(\d+)/g, (_, n: string) => {
    const value = statement.parameters[Number(n) - 1];
    if (value === null || value === undefined) return 'null';
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    if (typeof value === 'string') return client.escapeLiteral(value);
    if (value instanceof Date) return client.escapeLiteral(value.toISOString());
    throw new Error(`cannot write a ${typeof value} parameter of a migration statement as a literal: ${statement.sql}`);
  });
}

/** Creates `schema` and replays the recorded migrations in it, all in one round trip and one transaction. */
export async function replayPostgresTemplate(url: string, schema: string, script: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`create schema ${schema}; set search_path = ${schema};\n${script.replaceAll(SCHEMA_MARK, schema)}`);
  } finally {
    await client.end();
  }
}
