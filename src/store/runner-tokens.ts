import type { Executor } from './db.ts';
import type { RunnerTokenRow, RunnerTokensTable } from './schema-runners.ts';

export async function insertRunnerToken(db: Executor, token: Omit<RunnerTokensTable, 'id'>): Promise<RunnerTokenRow> {
  return db.insertInto('runner_tokens').values(token).returningAll().executeTakeFirstOrThrow();
}

export async function findRunnerToken(db: Executor, tokenHash: string): Promise<RunnerTokenRow | undefined> {
  return db.selectFrom('runner_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

export async function findRunnerTokenById(db: Executor, orgId: number, id: number): Promise<RunnerTokenRow | undefined> {
  return db.selectFrom('runner_tokens').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

/** Newest first. */
export async function listRunnerTokens(db: Executor, orgId: number): Promise<RunnerTokenRow[]> {
  return db.selectFrom('runner_tokens').selectAll().where('org_id', '=', orgId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}

/**
 * Takes one use of a token that is neither revoked, used up nor expired, in one statement (two
 * runners registering with the last use at once: one gets it). Returns the token, or undefined.
 */
export async function takeRunnerTokenUse(db: Executor, tokenHash: string, now: number): Promise<RunnerTokenRow | undefined> {
  return db
    .updateTable('runner_tokens')
    .set((eb) => ({ uses_left: eb('uses_left', '-', 1) }))
    .where('token_hash', '=', tokenHash)
    .where('uses_left', '>', 0)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
}

export async function revokeRunnerToken(db: Executor, orgId: number, id: number, now: number): Promise<void> {
  await db.updateTable('runner_tokens').set({ revoked_at: now }).where('org_id', '=', orgId).where('id', '=', id).where('revoked_at', 'is', null).execute();
}
