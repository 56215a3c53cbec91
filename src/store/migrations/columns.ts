import type { CreateTableBuilder } from 'kysely';
import type { DatabaseKind } from '../db.ts';

/** An auto-increment integer primary key in the dialect's own idiom. */
export function idColumn<T extends string>(kind: DatabaseKind, table: CreateTableBuilder<T, never>) {
  return kind === 'postgres'
    ? table.addColumn('id', 'bigserial', (c) => c.primaryKey())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}
