import fs from 'node:fs';
import path from 'node:path';
import type SQLite from 'better-sqlite3';

/** The WAL-index header's size and the version SQLite writes into its first field (the WAL format of 3.7.0). */
const HEADER_BYTES = 48;
const WAL_INDEX_VERSION = 3007000;

/**
 * A number that moves with every commit by another connection to a SQLite file in WAL mode (another
 * process, or another connection of this one), read without running a statement
 * (docs/decisions.md "Storage and performance", the change token).
 *
 * SQLite itself learns of other connections' commits from the WAL-index header at the start of
 * the `-shm` file, which every commit rewrites (its frame count, the last frame's checksum, the
 * salts of a restarted WAL) and which SQLite compares with the copy it last read. This reads the
 * same 48 bytes with one `pread` (about a third of `pragma data_version`'s CPU) and counts each
 * change: a commit is visible to readers only once that header is written, so the number has moved
 * for any read after it. A header read while being rewritten only makes one more move.
 *
 * Where there is no such header (an in-memory database, another journal mode, a header of another
 * version) it falls back to `pragma data_version`.
 */
export function commitSign(database: SQLite.Database, file: string): { read(): number; close(): void } {
  const dataVersion = database.prepare('pragma data_version').pluck();
  const fallback = { read: () => dataVersion.get() as number, close: () => {} };
  // The header exists once the connection has read in WAL mode.
  dataVersion.get();
  const shm = openShm(`${path.resolve(file)}-shm`);
  if (!shm) return fallback;
  let seen = Buffer.alloc(HEADER_BYTES);
  let next = Buffer.alloc(HEADER_BYTES);
  const readHeader = (into: Buffer) => fs.readSync(shm.fd, into, 0, HEADER_BYTES, 0) === HEADER_BYTES;
  // The version field is in the machine's byte order; isInit (byte 12) is 1 once the header is valid.
  if (!readHeader(seen) || seen.readUInt32LE(0) !== WAL_INDEX_VERSION || seen[12] !== 1) {
    shm.release();
    return fallback;
  }
  let moves = 0;
  return {
    read() {
      readHeader(next);
      if (!next.equals(seen)) {
        moves++;
        [seen, next] = [next, seen];
      }
      return moves;
    },
    close: () => shm.release(),
  };
}

/**
 * Closing any descriptor of a file drops every POSIX lock this process holds on it, SQLite's own
 * connections' locks on the `-shm` file included (sqlite.org "How To Corrupt An SQLite Database
 * File", 2.2): another process could then take the file for unused and reset it under them. So
 * the stores of this process open on one file share one descriptor, closed only when the last of
 * them releases it, which a store does after its own connections are closed.
 */
const openShms = new Map<string, { fd: number; users: number }>();

function openShm(shmPath: string): { fd: number; release(): void } | null {
  let entry = openShms.get(shmPath);
  if (!entry) {
    try {
      entry = { fd: fs.openSync(shmPath, 'r'), users: 0 };
    } catch {
      return null;
    }
    openShms.set(shmPath, entry);
  }
  entry.users++;
  const shared = entry;
  let released = false;
  return {
    fd: shared.fd,
    release() {
      if (released) return;
      released = true;
      if (--shared.users > 0) return;
      openShms.delete(shmPath);
      fs.closeSync(shared.fd);
    },
  };
}
