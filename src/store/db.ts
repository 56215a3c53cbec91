import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresAdapter, PostgresDialect, SqliteDialect, sql, type SqliteDatabase, type Transaction } from 'kysely';
import { Checkpointer } from './checkpointer.ts';
import { commitSign } from './commit-sign.ts';
import { UniqueViolation, withUniqueViolations } from './conflict.ts';
import { GroupCommit } from './group-commit.ts';
import { Statements } from './direct.ts';
import type { Database } from './schema.ts';

export type DatabaseKind = 'sqlite' | 'postgres';
/** A query runs on the database or inside a transaction; store functions take either. */
export type Executor = Kysely<Database> | Transaction<Database>;

export interface Store {
  /** The dialect: only src/store/ looks at it (store functions hide what differs). */
  readonly kind: DatabaseKind;
  readonly db: Kysely<Database>;
  /**
   * True when other server processes (replicas) may use the same database (PostgreSQL): what they
   * must all see travels through it (notifications, shared rate limits). False: one process (SQLite).
   */
  readonly sharedByReplicas: boolean;
  /** Where the data lives, for the start-up line: `SQLite in <dir>` or `PostgreSQL`. */
  readonly description: string;
  /** PostgreSQL only: the connection string and schema, for LISTEN connections. */
  readonly postgres?: { url: string; schema: string | null };
  /**
   * Runs `work` in a transaction (every query of it through `trx`). On SQLite, transactions that
   * arrive together share one commit (see GroupCommit); on PostgreSQL each is its own.
   */
  transaction<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
  /**
   * SQLite: a value that differs whenever the database may have changed since it was last read
   * (a statement that may write run through this process, committed or not, or a commit by any
   * other connection), read without a query through Kysely. Null on PostgreSQL, where other replicas write unseen: there
   * a value derived from the data must be read from the database itself.
   */
  changeToken(): string | null;
  ping(): Promise<void>;
  close(): Promise<void>;
}

// int8 (bigint) and numeric counts come back as strings by default; our ids and epoch-ms fit in a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export interface OpenStoreOptions {
  /** postgres:// URL; when absent the store is a SQLite file. */
  databaseUrl?: string | null;
  /** SQLite file path (default `<dataDir>/drover.sqlite`). */
  sqlitePath?: string;
  /** PostgreSQL schema to work in (tests give each suite its own). */
  schema?: string | null;
  poolSize?: number;
}

export function openStore(options: OpenStoreOptions): Store {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.schema ?? null, options.poolSize ?? 10);
  if (!options.sqlitePath) throw new Error('openStore needs a databaseUrl or a sqlitePath');
  return openSqlite(options.sqlitePath);
}

function openSqlite(file: string): Store {
  if (file !== ':memory:') {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    // Created owner-only before SQLite opens it: its WAL and shared-memory files take this mode.
    fs.closeSync(fs.openSync(file, 'a', 0o600));
  }
  const database = new SQLite(file);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  // Each group-commit caller's savepoint journals every page it changes (~20 for a ticket: ~80 KB);
  // past 64 KB SQLite spills that journal to a temporary file, which cost more than the create's
  // own writes. In memory it is freed at the savepoint's release (docs/decisions.md "Storage and performance").
  database.pragma('temp_store = memory');
  // Checkpoints run in a worker thread (see Checkpointer), not inside this connection's commits.
  database.pragma('wal_autocheckpoint = 0');
  // After a checkpoint the WAL file is reused from its start; this bounds what it keeps on disk.
  database.pragma(`journal_size_limit = ${64 * 1024 * 1024}`);
  const checkpointer = new Checkpointer(file);
  const statements = new Statements(database);
  const db = new Kysely<Database>({ dialect: withUniqueViolations(new SqliteDialect({ database: withStatementCache(statements) })) });
  const groupCommit = new GroupCommit(db, statements);
  // Read synchronously: the commit sign moves with every commit by another connection (another
  // process); this connection's own writes are counted as its statements are prepared (Statements.writes).
  const commits = commitSign(database, file);
  let token = '';
  let tokenCommits = -1;
  let tokenWrites = -1;
  return {
    kind: 'sqlite',
    db,
    sharedByReplicas: false,
    description: `SQLite in ${path.dirname(file)}`,
    transaction: (work) => groupCommit.run(work),
    changeToken() {
      const seen = commits.read();
      const writes = statements.writes();
      // The same string while nothing moved: the steady case allocates nothing.
      if (seen !== tokenCommits || writes !== tokenWrites) [token, tokenCommits, tokenWrites] = [`${seen}:${writes}`, seen, writes];
      return token;
    },
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await db.destroy();
      await checkpointer.close();
      // Only once this store's connections are closed (see commitSign).
      commits.close();
    },
  };
}

/** Kysely's SQLite driver over the connection, preparing each statement once (see Statements). */
function withStatementCache(statements: Statements): SqliteDatabase {
  return { close: () => statements.database.close(), prepare: (sql: string) => statements.prepare(sql) };
}

function openPostgres(url: string, schema: string | null, max: number): Store {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    options: schema ? `-c search_path=${schema}` : undefined,
  });
  // A client that loses its connection (failover, restart, pg_terminate_backend) must not crash the
  // process: the pool reports idle ones here, and checked-out ones (a query or transaction in
  // progress) emit 'error' on the client itself, where neither pg-pool nor Kysely listen. The query
  // in progress still fails on its own, and the broken client is discarded when it is released.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Database>({ dialect: withUniqueViolations(new PostgresDialect({ pool })) });
  return {
    kind: 'postgres',
    db,
    sharedByReplicas: true,
    description: 'PostgreSQL',
    transaction: (work) => db.transaction().execute(work),
    changeToken: () => null,
    postgres: { url, schema },
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await db.destroy();
    },
  };
}

/** The dialect of the database an executor (the store's or a transaction) runs on. */
export const dialectOf = (db: Executor): DatabaseKind => (db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite');

export { UniqueViolation };

/** True for the store's one conflict error: a write refused by a unique index or primary key. */
export const isUniqueViolation = (error: unknown): boolean => error instanceof UniqueViolation;
