import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './schema.ts';

/** How many transactions at most share one commit. */
const MAX_GROUP = 64;

interface Job {
  work: (trx: Transaction<Database>) => Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * Group commit for SQLite. Committing costs more than most transactions' own work here (the
 * commit appends every page it changed to the write-ahead log: ~65 µs for a ticket insert whose
 * writes take ~20 µs), and SQLite runs one write transaction at a time anyway. So the
 * transactions that arrive while one is running are run together, each inside a savepoint of one
 * database transaction, and committed once: a transaction that fails rolls back to its savepoint
 * and fails alone; one whose work succeeded settles only when the shared commit has succeeded,
 * so every caller still sees its own transaction durable before it answers.
 *
 * A transaction's work must use the `trx` it is given for every query (as with any Kysely
 * transaction on SQLite's single connection) and must not wait on anything but the database.
 */
export class GroupCommit {
  private queue: Job[] = [];
  private scheduled = false;

  constructor(private readonly db: Kysely<Database>) {}

  run<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  /** After the current turn of the event loop, so that the requests read in it join the group. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    const jobs = this.queue.splice(0, MAX_GROUP);
    try {
      if (jobs.length > 0) await this.commitGroup(jobs);
    } finally {
      this.scheduled = false;
      if (this.queue.length > 0) this.schedule();
    }
  }

  private async commitGroup(jobs: Job[]): Promise<void> {
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    let trx: Awaited<ReturnType<ReturnType<Kysely<Database>['startTransaction']>['execute']>>;
    try {
      trx = await this.db.startTransaction().execute();
    } catch (error) {
      for (const job of jobs) job.reject(error);
      return;
    }
    try {
      for (const job of jobs) {
        await sql`savepoint drover_job`.execute(trx);
        try {
          outcomes.push({ ok: true, value: await job.work(trx) });
        } catch (error) {
          await sql`rollback to savepoint drover_job`.execute(trx);
          outcomes.push({ ok: false, error });
        }
        await sql`release savepoint drover_job`.execute(trx);
      }
      await trx.commit().execute();
    } catch (error) {
      // The transaction itself failed (a savepoint command, the commit): nothing of it is kept.
      await trx.rollback().execute().catch(() => {});
      for (const job of jobs) job.reject(error);
      return;
    }
    for (const [i, job] of jobs.entries()) {
      const outcome = outcomes[i];
      if (outcome.ok) job.resolve(outcome.value);
      else job.reject(outcome.error);
    }
  }
}
