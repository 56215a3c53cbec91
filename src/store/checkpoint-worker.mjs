// Checkpoints the SQLite write-ahead log from a worker thread (see src/store/checkpointer.ts).
// Plain JavaScript: worker threads do not go through the TypeScript loader of the main thread.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const db = new Database(workerData.file);
db.pragma('busy_timeout = 1000');

const checkpoint = (mode) => {
  try {
    db.pragma(`wal_checkpoint(${mode})`);
  } catch {
    // Busy or interrupted: the next round catches up.
  }
};

const timer = setInterval(() => checkpoint('PASSIVE'), workerData.intervalMs);

parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  checkpoint('TRUNCATE');
  db.close();
  parentPort.close();
});
