import { Worker } from 'node:worker_threads';
import { packageFile } from '../paths.ts';

const WORKER = packageFile('src/store/checkpoint-worker.mjs');

/**
 * Moves SQLite's WAL checkpoints off the request path. By default SQLite checkpoints inside the
 * commit that crosses 1000 WAL pages: that commit copies pages into the database file and fsyncs
 * it, stalling the event loop (and every request waiting on it) for milliseconds to tens of
 * milliseconds. With autocheckpoint off on the main connection, a connection in a worker thread
 * runs a PASSIVE checkpoint every `intervalMs` (never blocking writers or readers), and a
 * TRUNCATE one when the store closes.
 */
export class Checkpointer {
  private readonly worker: Worker;
  private readonly exited: Promise<void>;

  constructor(file: string, intervalMs = 200) {
    this.worker = new Worker(WORKER, { workerData: { file, intervalMs }, execArgv: [] });
    this.worker.unref();
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
  }

  /** Runs a last checkpoint (truncating the WAL) and stops the worker. */
  async close(): Promise<void> {
    // Unreferenced while it idles, so it never holds the process open; referenced while closing,
    // so the process waits for the last checkpoint.
    this.worker.ref();
    this.worker.postMessage('stop');
    await this.exited;
  }
}
