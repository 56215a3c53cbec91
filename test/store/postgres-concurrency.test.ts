/**
 * Several replicas on one PostgreSQL schema: concurrent migrations, concurrent ticket numbering
 * (docs/api.md: `<PREFIX>-<N>`, N counted per (org, prefix) from 1, never reused), and two
 * servers bootstrapping one empty schema at the same moment (docs/api.md: one org `default`,
 * one key, printed once). Runs only when DATABASE_URL points at a PostgreSQL server.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import * as admin from '../../src/domain/admin/service.ts';
import type { DomainContext } from '../../src/domain/context.ts';
import { createTicket } from '../../src/domain/tickets/service.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import type { TestDatabase } from '../helpers/databases.ts';
import {
  createProcessTestDatabase,
  http as call,
  postgresDatabaseUrl,
  postgresSchema,
  startServerProcess,
  withClient,
  type ServerProcess,
} from '../helpers/server-process.ts';

const DATABASE_URL = process.env.DATABASE_URL;
const suite = DATABASE_URL ? describe : describe.skip;
const title = DATABASE_URL ? 'PostgreSQL: several replicas on one schema' : 'PostgreSQL: several replicas on one schema (skipped: DATABASE_URL is not set)';

/** The tables of each user schema of a database, `schema.table`. */
async function userTables(database: TestDatabase): Promise<string[]> {
  return withClient(postgresDatabaseUrl(database), async (client) => {
    const { rows } = await client.query<{ name: string }>(
      `select table_schema || '.' || table_name as name from information_schema.tables
        where table_schema not in ('pg_catalog', 'information_schema') order by 1`,
    );
    return rows.map((r) => r.name);
  });
}

async function scalar<T>(database: TestDatabase, query: string): Promise<T> {
  return withClient(postgresDatabaseUrl(database), async (client) => {
    await client.query(`set search_path = ${postgresSchema(database)}`);
    const { rows } = await client.query(query);
    return Object.values(rows[0] as Record<string, unknown>)[0] as T;
  });
}

function withStores<T>(database: TestDatabase, count: number, use: (stores: Store[]) => Promise<T>): Promise<T> {
  const stores = Array.from({ length: count }, () => database.open());
  return use(stores).finally(() => Promise.all(stores.map((s) => s.close())));
}

suite(title, () => {
  it('DATABASE_URL=…?options=-c%20search_path%3D<schema> (and the +-encoded form) selects that schema', async () => {
    const database = await createProcessTestDatabase('postgres');
    onTestFinished(() => database.cleanup());
    const schema = postgresSchema(database);
    const plain = postgresDatabaseUrl(database);
    const forms = [
      database.env.DATABASE_URL, // what createTestDatabase writes: options=-c+search_path%3D…
      `${plain}?options=-c%20search_path%3D${schema}`,
    ];
    expect(forms[0]).toContain('options=');
    for (const url of forms) {
      const store = openStore({ databaseUrl: url });
      try {
        const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(store.db);
        expect(rows[0].schema).toBe(schema);
      } finally {
        await store.close();
      }
    }
  });

  it('three migrateToLatest at once on three stores: all succeed, one set of tables and migration rows', async () => {
    const database = await createProcessTestDatabase('postgres');
    onTestFinished(() => database.cleanup());
    const schema = postgresSchema(database);

    const results = await withStores(database, 3, (stores) => Promise.allSettled(stores.map((store) => migrateToLatest(store))));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);

    const tables = await userTables(database);
    expect(tables.length).toBeGreaterThan(5);
    expect(tables.every((t) => t.startsWith(`${schema}.`))).toBe(true); // nothing in public
    expect(tables).toEqual(expect.arrayContaining(['orgs', 'api_keys', 'tickets', 'ticket_sequences', 'ticket_counts', 'kysely_migration'].map((t) => `${schema}.${t}`)));

    const names = await withClient(postgresDatabaseUrl(database), async (client) => {
      const { rows } = await client.query<{ name: string }>(`select name from ${schema}.kysely_migration order by name`);
      return rows.map((r) => r.name);
    });
    expect(names.length).toBeGreaterThan(0);
    expect(new Set(names).size).toBe(names.length);
    expect(names[0]).toBe('0001_foundation');
    expect(await scalar<number>(database, 'select count(*)::int from kysely_migration_lock')).toBe(1);

    // A fourth replica starting later finds nothing to do.
    await withStores(database, 1, ([store]) => migrateToLatest(store));
    expect(await scalar<number>(database, 'select count(*)::int from kysely_migration')).toBe(names.length);
    expect(await userTables(database)).toEqual(tables);
  });

  // Regression: migrate.ts once built Kysely's Migrator without `migrationTableSchema`; Kysely then
  // looked for `kysely_migration(_lock)` in *every* schema of the database, took another schema's
  // for ours and failed with `relation "kysely_migration_lock" does not exist` (PostgreSQL suites
  // failed whenever two overlapped). migrateToLatest now passes current_schema().
  it('migrating a fresh schema while another schema of the same database is already migrated', async () => {
    const database = await createProcessTestDatabase('postgres');
    onTestFinished(() => database.cleanup());
    await withStores(database, 1, ([store]) => migrateToLatest(store));
    const other = `t_${crypto.randomBytes(6).toString('hex')}`;
    await withClient(postgresDatabaseUrl(database), (client) => client.query(`create schema ${other}`));
    const store = openStore({ databaseUrl: postgresDatabaseUrl(database), schema: other });
    try {
      await migrateToLatest(store);
      const tables = await userTables(database);
      const schema = postgresSchema(database);
      for (const table of ['kysely_migration', 'kysely_migration_lock', 'orgs', 'tickets']) {
        expect(tables).toContain(`${schema}.${table}`);
        expect(tables).toContain(`${other}.${table}`);
      }
    } finally {
      await store.close();
    }
  });

  it('200 tickets created at once through createTicket on 3 stores (3 replicas): numbers exactly 1..200', async () => {
    const database = await createProcessTestDatabase('postgres');
    onTestFinished(() => database.cleanup());
    await withStores(database, 3, async (stores) => {
      await migrateToLatest(stores[0]);
      const contexts: DomainContext[] = stores.map((store) => ({ store, now: Date.now }));
      const org = await admin.createOrg(contexts[0], { slug: 'race', name: 'Race', ticket_prefix: 'RACE' });

      const results = await Promise.allSettled(
        Array.from({ length: 200 }, (_, i) => createTicket(contexts[i % 3], org, { type: 'task', title: `ticket ${i}`, labels: [`l${i % 7}`] })),
      );
      const errors = results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
      expect(errors).toEqual([]);
      const slugs = results.map((r) => (r as PromiseFulfilledResult<{ slug: string }>).value.slug);
      expect(new Set(slugs).size).toBe(200);
      const numbers = slugs.map((s) => Number(/^RACE-(\d+)$/.exec(s)![1])).sort((a, b) => a - b);
      expect(numbers).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));

      const db = stores[1].db;
      const counts = await db.selectFrom('ticket_counts').select(['status', 'n']).where('org_id', '=', org.id).execute();
      expect(counts.reduce((sum, c) => sum + Number(c.n), 0)).toBe(200);
      expect(counts.map((c) => [c.status, Number(c.n)])).toEqual([['backlog', 200]]);
      const sequence = await db.selectFrom('ticket_sequences').select('last_number').where('org_id', '=', org.id).executeTakeFirstOrThrow();
      expect(Number(sequence.last_number)).toBe(200);
      const labelled = await db.selectFrom('ticket_labels').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', org.id).executeTakeFirstOrThrow();
      expect(Number(labelled.n)).toBe(200);
    });
  });

  describe.each([
    { state: 'an empty schema', premigrate: false },
    { state: 'a migrated schema without organizations', premigrate: true },
  ])('two servers starting at the same moment on $state', ({ premigrate }) => {
    const adminToken = `replica-admin-token-${crypto.randomBytes(8).toString('hex')}`;
    let database: TestDatabase;
    let servers: ServerProcess[] = [];
    let dataDirs: string[] = [];

    beforeAll(async () => {
      database = await createProcessTestDatabase('postgres');
      if (premigrate) await withStores(database, 1, ([store]) => migrateToLatest(store));
      // Replicas on different hosts: one database, a data directory each, a shared admin token.
      dataDirs = [0, 1].map((i) => fs.mkdtempSync(path.join(os.tmpdir(), `drover-replica-${i}-`)));
      const env = { DATABASE_URL: database.env.DATABASE_URL, DROVER_ADMIN_TOKEN: adminToken };
      const started = await Promise.allSettled(dataDirs.map((dataDir) => startServerProcess({ dataDir, env })));
      servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
      const failed = started.flatMap((s) => (s.status === 'rejected' ? [String(s.reason)] : []));
      if (failed.length) throw new Error(failed.join('\n\n'));
    });
    afterAll(async () => {
      await Promise.all(servers.map((s) => s.stop().catch(() => s.kill9())));
      for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
      await database?.cleanup();
    });

    it('both come up; exactly one org "default" and one key exist, printed and written by exactly one', async () => {
      expect(servers).toHaveLength(2);
      for (const server of servers) expect((await call(server.url, 'GET', '/readyz')).status).toBe(200);

      const printed = servers.map((s) => /API key with every scope.*: (drv_[A-Za-z0-9]+)$/m.exec(s.stdout)?.[1] ?? null);
      expect(printed.filter(Boolean)).toHaveLength(1);
      const files = dataDirs.filter((dir) => fs.existsSync(path.join(dir, 'bootstrap-api-key')));
      expect(files).toHaveLength(1);
      const key = printed.find(Boolean)!;
      expect(fs.readFileSync(path.join(files[0], 'bootstrap-api-key'), 'utf8').trim()).toBe(key);
      expect(dataDirs.indexOf(files[0])).toBe(printed.indexOf(key));

      expect(await scalar<number>(database, 'select count(*)::int from orgs')).toBe(1);
      expect(await scalar<string>(database, 'select slug from orgs')).toBe('default');
      expect(await scalar<number>(database, 'select count(*)::int from api_keys')).toBe(1);
      expect(await scalar<number>(database, 'select count(*)::int from kysely_migration_lock')).toBe(1);
      // Everything went into the schema named by DATABASE_URL.
      expect((await userTables(database)).every((t) => t.startsWith(`${postgresSchema(database)}.`))).toBe(true);

      // The key works on both replicas; the shared admin token too; no admin-token file anywhere.
      for (const server of servers) {
        expect((await call(server.url, 'GET', '/api/v1/ext/orgs/default/tickets', { key })).status).toBe(200);
        const orgs = await call(server.url, 'GET', '/api/v1/admin/orgs', { bearer: adminToken });
        expect((orgs.body as { orgs: Array<{ slug: string }> }).orgs.map((o) => o.slug)).toEqual(['default']);
      }
      for (const dir of dataDirs) expect(fs.existsSync(path.join(dir, 'admin-token'))).toBe(false);
    });

    if (premigrate) return; // numbering across replicas: checked once, in the empty-schema variant
    it('tickets created at once over HTTP on both replicas: numbers exactly 1..N', async () => {
      const key = fs.readFileSync(path.join(dataDirs.find((dir) => fs.existsSync(path.join(dir, 'bootstrap-api-key')))!, 'bootstrap-api-key'), 'utf8').trim();
      const total = 80;
      const responses = await Promise.all(
        Array.from({ length: total }, (_, i) =>
          call(servers[i % 2].url, 'POST', '/api/v1/ext/orgs/default/tickets', { key, body: { type: 'bug', title: `http ${i}` } }),
        ),
      );
      expect(responses.map((r) => r.status)).toEqual(Array(total).fill(201));
      const slugs = responses.map((r) => (r.body as { ticket: { slug: string } }).ticket.slug);
      const numbers = slugs.map((s) => Number(/-(\d+)$/.exec(s)![1])).sort((a, b) => a - b);
      expect(numbers).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      for (const server of servers) {
        const list = await call(server.url, 'GET', '/api/v1/ext/orgs/default/tickets?limit=1', { key });
        expect((list.body as { total: number }).total).toBe(total);
      }
    });
  });
});
