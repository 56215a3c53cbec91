/**
 * SQLite's change token (Store.changeToken, src/store/commit-sign.ts): it moves with every commit
 * by another process on the same file, read from the WAL-index header without a statement, and
 * with this process's own writes; it stays put while nothing is written (so rendered reads are
 * reused). docs/decisions.md "Storage and performance".
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { commitSign } from '../../src/store/commit-sign.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { REPO_ROOT } from '../helpers/server-process.ts';

/** Another process commits one row to `file` and exits before this returns. */
function commitFromAnotherProcess(file: string, value: number): void {
  const script = `const SQLite = require('better-sqlite3'); const db = new SQLite(process.argv[1]); db.pragma('busy_timeout = 5000'); db.prepare('insert into items (v) values (?)').run(Number(process.argv[2])); db.close();`;
  execFileSync(process.execPath, ['-e', script, file, String(value)], { cwd: REPO_ROOT });
}

/** This process's POSIX locks on a file, from /proc/locks (Linux): SQLite's locks on its -shm file. */
function locksHeld(file: string): number {
  const inode = String(fs.statSync(file).ino);
  return fs
    .readFileSync('/proc/locks', 'utf8')
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[1] === 'POSIX' && Number(fields[4]) === process.pid && fields[5]?.split(':')[2] === inode).length;
}

describe('the SQLite change token', () => {
  let dir: string;
  let file: string;
  let store: Store;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-change-token-'));
    file = path.join(dir, 'drover.sqlite');
    store = openStore({ sqlitePath: file });
    await sql`create table items (v integer)`.execute(store.db);
  });

  afterEach(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('moves with every commit by another process, and only then', async () => {
    for (let n = 1; n <= 3; n++) {
      const before = store.changeToken();
      expect(store.changeToken()).toBe(before);
      commitFromAnotherProcess(file, n);
      const after = store.changeToken();
      expect(after).not.toBe(before);
      // What moved it is visible to the next read.
      const { rows } = await sql<{ n: number }>`select count(*) as n from items`.execute(store.db);
      expect(rows[0].n).toBe(n);
      expect(store.changeToken()).toBe(after);
    }
  });

  it('moves with this process\'s own writes', async () => {
    const before = store.changeToken();
    await sql`insert into items (v) values (1)`.execute(store.db);
    expect(store.changeToken()).not.toBe(before);
  });

  // Closing a descriptor of the -shm file would drop every lock this process holds on it.
  it.runIf(fs.existsSync('/proc/locks'))('closing another store on the same file leaves the open one\'s locks on -shm in place', async () => {
    await sql`select count(*) from items`.execute(store.db);
    const before = locksHeld(`${file}-shm`);
    expect(before).toBeGreaterThan(0);
    const other = openStore({ sqlitePath: file });
    await sql`select count(*) from items`.execute(other.db);
    await other.close();
    expect(locksHeld(`${file}-shm`)).toBe(before);
    // And the open store still sees other processes' commits.
    const token = store.changeToken();
    commitFromAnotherProcess(file, 9);
    expect(store.changeToken()).not.toBe(token);
  });

  it('reads the WAL-index header (one pread), not pragma data_version', () => {
    const database = new SQLite(file);
    const reads = vi.spyOn(fs, 'readSync');
    try {
      const sign = commitSign(database, file);
      const first = sign.read();
      expect(sign.read()).toBe(first);
      commitFromAnotherProcess(file, 7);
      reads.mockClear();
      expect(sign.read()).toBe(first + 1);
      expect(reads).toHaveBeenCalledTimes(1);
      sign.close();
    } finally {
      reads.mockRestore();
      database.close();
    }
  });
});
