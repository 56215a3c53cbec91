import type { Compilable, CompiledQuery, QueryResult } from 'kysely';
import { dialectOf, type Executor } from './db.ts';

/**
 * Statements of the hot write paths (a ticket's creation, every event) built and compiled by
 * Kysely once per dialect, then run with each call's values. Building and compiling a query cost
 * more CPU than SQLite running it (a CPU profile of POST /tickets: README "Where a request's time
 * goes"). `build` must make the same SQL whatever the values (same columns, same row count: name
 * variants apart); `parameters` are the values in the order the SQL takes them (its text order).
 */
const compiled = new Map<string, CompiledQuery<unknown>>();

export async function runCompiled<R>(db: Executor, name: string, build: () => Compilable<R>, parameters: readonly unknown[]): Promise<QueryResult<R>> {
  const key = `${dialectOf(db)} ${name}`;
  let query = compiled.get(key) as CompiledQuery<R> | undefined;
  if (!query) {
    query = build().compile();
    compiled.set(key, query as CompiledQuery<unknown>);
  }
  if (query.parameters.length !== parameters.length) {
    throw new Error(`statement "${name}" takes ${query.parameters.length} values, not ${parameters.length}`);
  }
  return db.executeQuery<R>({ ...query, parameters });
}

/** A row of stand-in values for `build`: one per column, never undefined (Kysely drops those). */
export const placeholders = <const C extends string>(columns: readonly C[]): Record<C, never> =>
  Object.fromEntries(columns.map((column) => [column, 0])) as Record<C, never>;
