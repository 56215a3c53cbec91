import type SQLite from 'better-sqlite3';
import type { QueryResult } from 'kysely';
import { toConflict } from './conflict.ts';

const CACHE_SIZE = 500;

/**
 * The prepared statements of the one SQLite connection, by SQL text (at most CACHE_SIZE, the oldest
 * dropped first). Kysely prepares every statement anew for each query; preparing costs as much as
 * running a simple indexed query. Every user of the connection is serialised (Kysely's mutex, or a
 * synchronous call), so a statement is never used twice at once.
 *
 * Every run of a statement, through Kysely or directly, prepares it here first, so counting the
 * preparations of statements that may write counts this connection's writes (`writes`, for
 * Store.changeToken, without a statement of its own on every cached read; a rolled-back write
 * counts too, which only costs a cache refill).
 */
export class Statements {
  private readonly cache = new Map<string, SQLite.Statement>();
  private writeCount = 0;

  constructor(readonly database: SQLite.Database) {}

  prepare(sql: string): SQLite.Statement {
    let statement = this.cache.get(sql);
    if (!statement) {
      statement = this.database.prepare(sql);
      if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(sql, statement);
    }
    if (!statement.readonly) this.writeCount++;
    return statement;
  }

  /** How many statements that may write this connection has run (see the class comment). */
  writes(): number {
    return this.writeCount;
  }

  /** Runs one statement synchronously, with Kysely's result shape; the store's conflict error for a unique violation. */
  run<R>(sql: string, parameters: readonly unknown[]): QueryResult<R> {
    try {
      const statement = this.prepare(sql);
      if (statement.reader) return { rows: statement.all(parameters) as R[] };
      const { changes, lastInsertRowid } = statement.run(parameters);
      return { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
    } catch (error) {
      return toConflict(error);
    }
  }
}

/**
 * The transactions of SQLite's group commit, which hold the one connection for as long as they are
 * open: the statements of their hot paths run straight on it (synchronously, better-sqlite3's way)
 * instead of through Kysely's executor, whose promises (a dozen per query, each also paying for the
 * actor scope's async hooks) cost more CPU than SQLite running the statement (docs/decisions.md
 * "Storage and performance", creating tickets).
 */
const holders = new WeakMap<object, Statements>();

/** `executor` holds the connection of `statements` until `release`. */
export function holdConnection(executor: object, statements: Statements): void {
  holders.set(executor, statements);
}

export function releaseConnection(executor: object): void {
  holders.delete(executor);
}

/** The statements to run directly for `executor`: undefined unless it is a transaction holding the SQLite connection. */
export const directStatements = (executor: object): Statements | undefined => holders.get(executor);
