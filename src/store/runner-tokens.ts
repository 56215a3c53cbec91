import type { Executor } from './db.ts';
import type { RunnerTokensTable } from './schema-runners.ts';

export async function insertRunnerToken(db: Executor, token: Omit<RunnerTokensTable, 'id'>) {
  return db.insertInto('runner_tokens').values(token).returningAll().executeTakeFirstOrThrow();
}

export async function findRunnerToken(db: Executor, tokenHash: string) {
  return db.selectFrom('runner_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}
