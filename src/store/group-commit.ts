import { AsyncResource } from 'node:async_hooks';
import type { Kysely, Transaction } from 'kysely';
import { holdConnection, releaseConnection, type Statements } from './direct.ts';
import type { Database } from './schema.ts';

/** Run straight on the connection the shared transaction holds: three times per transaction. */
const SAVEPOINT = 'savepoint drover_job';
const ROLLBACK_TO = 'rollback to savepoint drover_job';
const RELEASE = 'release savepoint drover_job';
const NO_VALUES: readonly unknown[] = [];

/** How many transactions at most share one commit. */
const MAX_GROUP = 64;

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

interface Job {
  work: (trx: Transaction<Database>) => Promise<unknown>;
  /** The caller's async context, which its work runs in. */
  context: AsyncResource;
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
 * so every caller still sees its own transaction durable before it answers. If the shared
 * transaction fails as a whole, each of its transactions is run again in one of its own.
 *
 * A transaction's work must use the `trx` it is given for every query (as with any Kysely
 * transaction on SQLite's single connection), must not wait on anything but the database, and
 * may run twice (only the writes of its last run are kept), like a transaction a database retries.
 */
export class GroupCommit {
  private queue: Job[] = [];
  private scheduled = false;

  constructor(
    private readonly db: Kysely<Database>,
    /** The connection's statements: what the shared transaction runs directly while it holds it (store/direct.ts). */
    private readonly statements: Statements,
  ) {}

  run<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // The work runs later, from the flush of whichever caller started the group: bound to its own
      // caller's async context, it still sees that caller's context (who is acting, for the actor
      // columns and events: docs/api.md "Actors and activity"), not another request's.
      // (An AsyncResource rather than AsyncResource.bind, which costs two util.deprecate wrappers per call.)
      this.queue.push({ work, context: new AsyncResource('DroverTransaction'), resolve: resolve as (value: unknown) => void, reject });
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
    const outcomes: Outcome[] = [];
    try {
      const trx = await this.db.startTransaction().execute();
      holdConnection(trx, this.statements);
      try {
        for (const job of jobs) outcomes.push(await this.inSavepoint(trx, job));
        releaseConnection(trx);
        await trx.commit().execute();
      } catch (error) {
        releaseConnection(trx);
        await trx.rollback().execute().catch(() => {});
        throw error;
      }
    } catch (error) {
      // The shared transaction failed as a whole (SQLite abandons it on SQLITE_FULL, an I/O error,
      // a RAISE(ROLLBACK)…; or the COMMIT itself failed): nothing of it was kept. Each transaction
      // runs again on its own, so the one that causes the failure fails alone.
      if (jobs.length === 1) {
        const outcome = outcomes[0];
        jobs[0].reject(outcome && !outcome.ok ? outcome.error : error);
        return;
      }
      for (const job of jobs) settle(job, await this.alone(job));
      return;
    }
    for (const [i, job] of jobs.entries()) settle(job, outcomes[i]);
  }

  /** One transaction's work in a savepoint of the shared transaction; its failure rolls back only itself. */
  private async inSavepoint(trx: Transaction<Database>, job: Job): Promise<Outcome> {
    this.statements.run(SAVEPOINT, NO_VALUES);
    let outcome: Outcome;
    try {
      outcome = { ok: true, value: await job.context.runInAsyncScope(job.work, null, trx) };
    } catch (error) {
      // Fails when SQLite has abandoned the whole transaction: the caller re-runs the group one by one.
      this.statements.run(ROLLBACK_TO, NO_VALUES);
      outcome = { ok: false, error };
    }
    this.statements.run(RELEASE, NO_VALUES);
    return outcome;
  }

  /** One transaction in a database transaction of its own. */
  private async alone(job: Job): Promise<Outcome> {
    try {
      return { ok: true, value: await this.db.transaction().execute((trx) => job.context.runInAsyncScope(job.work, null, trx)) };
    } catch (error) {
      return { ok: false, error };
    }
  }
}

function settle(job: Job, outcome: Outcome): void {
  if (outcome.ok) job.resolve(outcome.value);
  else job.reject(outcome.error);
}
