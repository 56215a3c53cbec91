import type { Executor } from './db.ts';
import type { UserRow } from './schema.ts';

export async function insertUser(db: Executor, user: Omit<UserRow, 'id'>): Promise<UserRow> {
  return db.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow();
}

export async function listUsers(db: Executor, orgId: number): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().where('org_id', '=', orgId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}

export async function userExists(db: Executor, orgId: number, id: number): Promise<boolean> {
  const row = await db.selectFrom('users').select('id').where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
  return row !== undefined;
}
