import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult } from 'kysely';

/**
 * A write refused by a unique index or a primary key: the one error the store throws for it,
 * whichever the database, so callers never look at a driver's error codes (docs/design.md "The
 * store hides the dialect"). The driver's error is its `cause`.
 */
export class UniqueViolation extends Error {
  constructor(cause: unknown) {
    super(`a row with the same unique key exists: ${(cause as Error | null)?.message ?? String(cause)}`, { cause });
    this.name = 'UniqueViolation';
  }
}

/** PostgreSQL's unique_violation, SQLite's unique and primary key constraints. */
const DRIVER_CODES = new Set(['23505', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY']);

/** Throws `error`, as `UniqueViolation` when it is the driver's unique violation. */
export const toConflict = (error: unknown): never => {
  throw DRIVER_CODES.has((error as { code?: string } | null)?.code ?? '') ? new UniqueViolation(error) : error;
};

/** Each connection's queries are wrapped once (drivers hand out the same connection objects again). */
const wrapped = new WeakSet<DatabaseConnection>();

/** A dialect whose queries throw `UniqueViolation` instead of the driver's unique-violation error. */
export function withUniqueViolations(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: (): Driver => {
      const driver = dialect.createDriver();
      return new Proxy(driver, {
        get(target, property, receiver) {
          if (property !== 'acquireConnection') {
            const value = Reflect.get(target, property, receiver) as unknown;
            return typeof value === 'function' ? value.bind(target) : value;
          }
          return async () => {
            const connection = await target.acquireConnection();
            if (!wrapped.has(connection)) {
              const execute: DatabaseConnection['executeQuery'] = connection.executeQuery.bind(connection);
              // SQLite's connection throws synchronously: the call is inside the async function.
              connection.executeQuery = async <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
                try {
                  return await execute<R>(query);
                } catch (error) {
                  return toConflict(error);
                }
              };
              wrapped.add(connection);
            }
            return connection;
          };
        },
      });
    },
  };
}
