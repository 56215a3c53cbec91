import fs from 'node:fs';
import path from 'node:path';

/** Files of the data directory that hold secrets or the whole database: owner-only (0600). */
export const SECRET_FILES = ['admin-token', 'secret-key', 'bootstrap-api-key', 'drover.sqlite', 'drover.sqlite-wal', 'drover.sqlite-shm'];

/**
 * Creates the data directory owner-only (0700) and tightens what an earlier version left readable
 * by others: the directory itself and its secret files. Files written later are created 0600 by
 * whoever writes them (SQLite gives its WAL and shared-memory files the database file's mode).
 */
export function prepareDataDir(dataDir: string): void {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dataDir, 0o700);
  for (const name of SECRET_FILES) {
    try {
      fs.chmodSync(path.join(dataDir, name), 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}
