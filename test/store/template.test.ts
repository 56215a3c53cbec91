/**
 * Migrated test databases are copies of a template built once per run (test/helpers/db-template.ts):
 * a copy must be exactly what running every migration gives, and each copy its own database.
 */
import { sql } from 'kysely';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import type { DatabaseKind, Store } from '../../src/store/db.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { createTestDatabase, createTestStore, DATABASES } from '../helpers/databases.ts';

/** Everything migrations define, in a comparable form (names of the own schema written as `S`). */
async function shape(store: Store, kind: DatabaseKind): Promise<unknown> {
  const rows = async (query: ReturnType<typeof sql>) => (await query.execute(store.db)).rows;
  const migrations = await rows(sql`select name from kysely_migration order by name`);
  if (kind === 'sqlite') {
    return { migrations, master: await rows(sql`select type, name, tbl_name, sql from sqlite_master where name not like 'sqlite_%' order by type, name`) };
  }
  const schema = ((await rows(sql`select current_schema() as s`))[0] as { s: string }).s;
  const own = (value: unknown) => JSON.parse(JSON.stringify(value).replaceAll(schema, 'S'));
  return own({
    migrations,
    columns: await rows(sql`select table_name, column_name, data_type, is_nullable, column_default, is_identity
      from information_schema.columns where table_schema = current_schema() order by table_name, column_name`),
    indexes: await rows(sql`select tablename, indexname, indexdef from pg_indexes where schemaname = current_schema() order by tablename, indexname`),
    constraints: await rows(sql`select conrelid::regclass::text as tbl, conname, pg_get_constraintdef(oid) as def
      from pg_constraint where connamespace = current_schema()::regnamespace order by 1, 2`),
    sequences: await rows(sql`select sequence_name, data_type, start_value, increment from information_schema.sequences
      where sequence_schema = current_schema() order by 1`),
    triggers: await rows(sql`select c.relname, t.tgname from pg_trigger t join pg_class c on c.oid = t.tgrelid
      where c.relnamespace = current_schema()::regnamespace and not t.tgisinternal order by 1, 2`),
    functions: await rows(sql`select proname from pg_proc where pronamespace = current_schema()::regnamespace order by 1`),
  });
}

describe.each(DATABASES)('migrated test databases from the template on %s', (kind) => {
  it('are the run-wide template, not migrated one by one', () => {
    const templates = inject('databaseTemplates');
    expect(templates).not.toBeNull();
    if (kind === 'postgres') expect(templates!.postgresScript).toMatch(/create table/i);
  });

  it('have exactly the tables, columns, indexes and constraints that running every migration gives', async () => {
    const copy = await createTestStore(kind);
    onTestFinished(() => copy.cleanup());
    const database = await createTestDatabase(kind);
    const migrated = database.open();
    onTestFinished(async () => {
      await migrated.close();
      await database.cleanup();
    });
    await migrateToLatest(migrated);
    const expected = await shape(migrated, kind);
    expect((expected as { migrations: unknown[] }).migrations.length).toBeGreaterThan(10);
    expect(await shape(copy.store, kind)).toEqual(expected);
    // Migrating a copy again finds nothing to do and changes nothing.
    await migrateToLatest(copy.store);
    expect(await shape(copy.store, kind)).toEqual(expected);
  });

  it('are separate databases, with their own id sequences', async () => {
    const [a, b] = [await createTestStore(kind), await createTestStore(kind)];
    onTestFinished(() => a.cleanup());
    onTestFinished(() => b.cleanup());
    expect(a.database.dataDir).not.toBe(b.database.dataDir);
    const now = Date.now();
    const inserted = await a.store.db.insertInto('orgs').values({ slug: 'only-a', name: 'A', ticket_prefix: 'AAA', created_at: now }).returning('id').executeTakeFirstOrThrow();
    expect(await b.store.db.selectFrom('orgs').select('slug').execute()).toEqual([]);
    const other = await b.store.db.insertInto('orgs').values({ slug: 'only-b', name: 'B', ticket_prefix: 'BBB', created_at: now }).returning('id').executeTakeFirstOrThrow();
    expect(other.id).toBe(inserted.id);
  });
});
