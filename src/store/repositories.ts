import type { Executor } from './db.ts';
import type { RepositoryRow } from './schema.ts';

export async function findRepository(db: Executor, orgId: number, id: number): Promise<RepositoryRow | undefined> {
  return db.selectFrom('repositories').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}
