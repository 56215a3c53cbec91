import type { Insertable, Updateable } from 'kysely';
import type { Executor } from './db.ts';
import type { RepositoriesTable, RepositoryRow } from './schema.ts';

export async function findRepository(db: Executor, orgId: number, id: number): Promise<RepositoryRow | undefined> {
  return db.selectFrom('repositories').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

export async function insertRepository(db: Executor, repository: Insertable<RepositoriesTable>): Promise<RepositoryRow> {
  return db.insertInto('repositories').values(repository).returningAll().executeTakeFirstOrThrow();
}

/** Newest first. */
export async function listRepositories(db: Executor, orgId: number): Promise<RepositoryRow[]> {
  return db
    .selectFrom('repositories')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function findRepositoryByName(db: Executor, orgId: number, name: string): Promise<RepositoryRow | undefined> {
  return db.selectFrom('repositories').selectAll().where('org_id', '=', orgId).where('name', '=', name).executeTakeFirst();
}

export async function updateRepository(db: Executor, orgId: number, id: number, set: Updateable<RepositoriesTable>): Promise<RepositoryRow | undefined> {
  return db.updateTable('repositories').set(set).where('org_id', '=', orgId).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function deleteRepository(db: Executor, orgId: number, id: number): Promise<void> {
  await db.deleteFrom('repositories').where('org_id', '=', orgId).where('id', '=', id).execute();
}
