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

export async function findUser(db: Executor, orgId: number, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

export async function updateUser(db: Executor, orgId: number, id: number, set: { name?: string; email?: string }): Promise<UserRow | undefined> {
  return db.updateTable('users').set(set).where('org_id', '=', orgId).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function deleteUser(db: Executor, orgId: number, id: number): Promise<void> {
  await db.deleteFrom('users').where('org_id', '=', orgId).where('id', '=', id).execute();
}
