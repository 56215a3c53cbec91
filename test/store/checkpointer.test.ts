/**
 * SQLite WAL checkpoints off the request path (src/store/checkpointer.ts, src/store/checkpoint-worker.mjs,
 * and their use in `openStore`): the main connection never checkpoints by itself
 * (`wal_autocheckpoint = 0`); a worker thread copies committed pages into the database file
 * (PASSIVE, every 200 ms); after closing the store the WAL is empty or gone and every row is in
 * the database file (also in a process that exits right after close()); and the idle worker never
 * keeps a process alive.
 *
 * "In the database file" is checked on a copy of that file alone, without its -wal: SQLite reads
 * the copy as it is, so a row found there was checkpointed, not merely committed to the WAL.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/db.ts';
import { waitFor } from '../helpers/runner-process.ts';
import { REPO_ROOT } from '../helpers/server-process.ts';

const ROWS = 2_000;

/** Rows of `items` in the database file itself, ignoring its WAL; null when the table is not there yet. */
function rowsInDatabaseFile(file: string, scratch: string): number | null {
  const copy = path.join(scratch, `copy-${process.hrtime.bigint()}.sqlite`);
  fs.copyFileSync(file, copy);
  const db = new SQLite(copy, { fileMustExist: true });
  try {
    const table = db.prepare("select 1 from sqlite_master where type = 'table' and name = 'items'").get();
    if (!table) return null;
    return (db.prepare('select count(*) as n from items').get() as { n: number }).n;
  } finally {
    db.close();
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(copy + suffix, { force: true });
  }
}

const walSize = (file: string): number | null => (fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : null);

async function writeRows(store: Store, count: number, from = 0): Promise<void> {
  await store.transaction(async (trx) => {
    for (let i = from; i < from + count; i++) await sql`insert into items (n, payload) values (${i}, ${'x'.repeat(200)})`.execute(trx);
  });
}

describe('SQLite checkpoints in a worker thread', () => {
  let dir: string;
  let file: string;
  let scratch: string;
  let store: Store | null;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-checkpoint-'));
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-checkpoint-copies-'));
    file = path.join(dir, 'drover.sqlite');
    store = null;
  });
  afterEach(async () => {
    await store?.close();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('the main connection has automatic checkpoints off (wal_autocheckpoint = 0) and is in WAL mode', async () => {
    store = openStore({ sqlitePath: file });
    expect((await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(store.db)).rows).toEqual([{ wal_autocheckpoint: 0 }]);
    expect((await sql<{ journal_mode: string }>`pragma journal_mode`.execute(store.db)).rows).toEqual([{ journal_mode: 'wal' }]);
  });

  it('the probe is meaningful: rows committed by a connection that never checkpoints are in the WAL, not in the database file', () => {
    const plain = new SQLite(file);
    try {
      plain.pragma('journal_mode = WAL');
      plain.pragma('wal_autocheckpoint = 0');
      plain.exec('create table items (n integer primary key, payload text)');
      plain.prepare('insert into items (n, payload) values (1, ?)').run('x');
      expect((plain.prepare('select count(*) as n from items').get() as { n: number }).n).toBe(1);
      expect(rowsInDatabaseFile(file, scratch)).toBeNull();
      expect(walSize(file)).toBeGreaterThan(0);
    } finally {
      plain.close();
    }
  });

  it('committed rows reach the database file while the store stays open (the worker checkpoints them)', async () => {
    store = openStore({ sqlitePath: file });
    await sql`create table items (n integer primary key, payload text)`.execute(store.db);
    await writeRows(store, ROWS);
    expect(walSize(file)).toBeGreaterThan(0);

    await waitFor(() => rowsInDatabaseFile(file, scratch) === ROWS, { what: `${ROWS} rows in the database file` });
    // A PASSIVE checkpoint copies pages and leaves the WAL in place (only closing truncates it).
    expect(walSize(file)).toBeGreaterThan(0);

    // And again for later writes: the worker keeps running, the main connection keeps not checkpointing.
    await writeRows(store, ROWS, ROWS);
    await waitFor(() => rowsInDatabaseFile(file, scratch) === 2 * ROWS, { what: `${2 * ROWS} rows in the database file` });
    expect((await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(store.db)).rows).toEqual([{ wal_autocheckpoint: 0 }]);
  });

  it('close() truncates or removes the WAL and leaves every committed row in the database file', async () => {
    store = openStore({ sqlitePath: file });
    await sql`create table items (n integer primary key, payload text)`.execute(store.db);
    await writeRows(store, ROWS);
    expect(walSize(file)).toBeGreaterThan(0);
    const closing = store;
    store = null;
    await closing.close();

    const wal = walSize(file);
    expect(wal === null || wal === 0, `WAL is ${wal} bytes after close`).toBe(true);
    expect(rowsInDatabaseFile(file, scratch)).toBe(ROWS);
  });

  it('a store can be opened and closed again on the same file, several times in a row, also at once without any query', async () => {
    for (let round = 0; round < 3; round++) {
      const s = openStore({ sqlitePath: file });
      if (round === 0) await sql`create table items (n integer primary key, payload text)`.execute(s.db);
      await writeRows(s, 10, round * 10);
      await s.close();
      const wal = walSize(file);
      expect(wal === null || wal === 0).toBe(true);
      // Opened and closed before its checkpoint worker has even started.
      await openStore({ sqlitePath: file }).close();
    }
    expect(rowsInDatabaseFile(file, scratch)).toBe(30);
  });
});

describe('the checkpoint worker and the process lifetime', () => {
  let dir: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-checkpoint-process-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Runs a small ES module through the tsx loader (it imports the TypeScript sources) in a child
   * process that must end by itself; it is killed after `timeoutMs` (then `signal` is SIGKILL).
   */
  async function runScript(source: string, timeoutMs = 30_000): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
    const script = path.join(dir, 'script.mjs');
    fs.writeFileSync(script, source);
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: dir },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    try {
      const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (c, s) => resolve([c, s])));
      return { code, signal, stderr };
    } finally {
      clearTimeout(timer);
    }
  }

  const openStoreUrl = new URL('../../src/store/db.ts', import.meta.url).href;
  type Ending = 'close' | 'close-then-exit' | 'leave-open';
  const storeScript = (file: string, ending: Ending) => `
    import { openStore } from ${JSON.stringify(openStoreUrl)};
    const store = openStore({ sqlitePath: ${JSON.stringify(file)} });
    await store.db.schema.createTable('items').addColumn('n', 'integer', (c) => c.primaryKey()).execute();
    await store.transaction(async (trx) => {
      for (let n = 1; n <= 500; n++) await trx.insertInto('items').values({ n }).execute();
    });
    process.stderr.write('script done\\n');
    ${
      {
        close: 'await store.close();',
        // As drover serve shuts down: the process exits as soon as close() has resolved.
        'close-then-exit': 'await store.close(); process.exit(0);',
        'leave-open': '// left open: the idle checkpoint worker must not keep the process alive',
      }[ending]
    }
  `;

  const countRows = (file: string): number => {
    const db = new SQLite(file, { fileMustExist: true });
    try {
      return (db.prepare('select count(*) as n from items').get() as { n: number }).n;
    } finally {
      db.close();
    }
  };

  it('a process that opens a store, writes and closes it exits by itself with code 0; the data is in the file and the WAL is empty', async () => {
    const file = path.join(dir, 'drover.sqlite');
    const result = await runScript(storeScript(file, 'close'));
    expect(result, result.stderr).toMatchObject({ code: 0, signal: null });
    expect(result.stderr).toContain('script done');
    const wal = walSize(file);
    expect(wal === null || wal === 0, `WAL is ${wal} bytes`).toBe(true);
    expect(countRows(file)).toBe(500);
  });

  it('a process that exits at once when close() has resolved (as drover serve does) still leaves the WAL checkpointed and empty', async () => {
    const file = path.join(dir, 'drover.sqlite');
    const result = await runScript(storeScript(file, 'close-then-exit'));
    expect(result, result.stderr).toMatchObject({ code: 0, signal: null });
    const wal = walSize(file);
    expect(wal === null || wal === 0, `WAL is ${wal} bytes`).toBe(true);
    expect(countRows(file)).toBe(500);
  });

  it('a process that leaves its store open is not kept alive by the idle worker: it exits by itself with code 0 and its commits survive', async () => {
    const file = path.join(dir, 'drover.sqlite');
    const result = await runScript(storeScript(file, 'leave-open'));
    expect(result, result.stderr).toMatchObject({ code: 0, signal: null });
    expect(result.stderr).toContain('script done');
    expect(countRows(file)).toBe(500);
  });
});
