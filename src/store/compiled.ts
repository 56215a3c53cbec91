import type { Compilable, CompiledQuery, QueryResult } from 'kysely';
import { dialectOf, type Executor } from './db.ts';
import { directStatements } from './direct.ts';

/**
 * Statements of the hot write paths (a ticket's creation, every event) built and compiled by
 * Kysely once per dialect, then run with each call's values. Building and compiling a query cost
 * more CPU than SQLite running it (a CPU profile of POST /tickets: README "Where a request's time
 * goes"). `build` must make the same SQL whatever the values (same columns, same row count: name
 * variants apart); `parameters` are the values in the order the SQL takes them (its text order).
 * In a transaction of SQLite's group commit the statement runs straight on the connection the
 * transaction holds (store/direct.ts).
 */
const compiled = new Map<string, CompiledQuery<unknown>>();

export async function runCompiled<R>(db: Executor, name: string, build: () => Compilable<R>, parameters: readonly unknown[]): Promise<QueryResult<R>> {
  const direct = directStatements(db);
  const key = direct ? `sqlite ${name}` : `${dialectOf(db)} ${name}`;
  let query = compiled.get(key) as CompiledQuery<R> | undefined;
  if (!query) {
    query = build().compile();
    compiled.set(key, query as CompiledQuery<unknown>);
  }
  if (query.parameters.length !== parameters.length) {
    throw new Error(`statement "${name}" takes ${query.parameters.length} values, not ${parameters.length}`);
  }
  return direct ? direct.run<R>(query.sql, parameters) : db.executeQuery<R>({ ...query, parameters });
}

/** A row of stand-in values for `build`: one per column, never undefined (Kysely drops those). */
export const placeholders = <const C extends string>(columns: readonly C[]): Record<C, never> =>
  Object.fromEntries(columns.map((column) => [column, 0])) as Record<C, never>;

/** What a named value of a `runNamed` statement stands in for at compile time. */
const STAND_IN = '\u0000drover value ';

/** How each parameter of a compiled statement is filled: from a named value, or a constant of the statement itself. */
type Slot = { key: string } | { constant: unknown };
const named = new Map<string, { query: CompiledQuery<unknown>; slots: Slot[] }>();

/**
 * Like `runCompiled`, for statements of the hot read paths whose values are easier named than
 * counted (filters, limits, offsets, lists): `build` receives `value(key)` (typed to fit anywhere) and uses it
 * wherever the statement takes a value; it runs once per dialect and `name` (so `name` must tell apart every
 * shape `build` can make: which filters, how many labels), with stand-ins that say which parameter
 * of the compiled SQL is which named value. Each call then fills them from `values`.
 */
export async function runNamed<R>(
  db: Executor,
  name: string,
  build: (value: (key: string) => never) => Compilable<R>,
  values: Readonly<Record<string, unknown>>,
): Promise<QueryResult<R>> {
  const cacheKey = `${dialectOf(db)} ${name}`;
  let entry = named.get(cacheKey);
  if (!entry) {
    const query = build((key: string) => `${STAND_IN}${key}` as never).compile();
    const slots = query.parameters.map((parameter): Slot =>
      typeof parameter === 'string' && parameter.startsWith(STAND_IN) ? { key: parameter.slice(STAND_IN.length) } : { constant: parameter },
    );
    entry = { query: query as CompiledQuery<unknown>, slots };
    named.set(cacheKey, entry);
  }
  const parameters = entry.slots.map((slot) => {
    if (!('key' in slot)) return slot.constant;
    const value = values[slot.key];
    if (value === undefined) throw new Error(`statement "${name}" needs the value "${slot.key}"`);
    return value;
  });
  return db.executeQuery<R>({ ...(entry.query as CompiledQuery<R>), parameters });
}
