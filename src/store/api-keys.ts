import { runNamed } from './compiled.ts';
import type { Executor } from './db.ts';
import type { ApiKeyRow } from './schema.ts';

export async function insertApiKey(
  db: Executor,
  key: Omit<ApiKeyRow, 'id' | 'revoked_at' | 'last_used_at'>,
): Promise<ApiKeyRow> {
  return db.insertInto('api_keys').values(key).returningAll().executeTakeFirstOrThrow();
}

/** Candidates sharing a public prefix; the caller compares hashes in constant time. */
export async function findApiKeysByPrefix(db: Executor, prefix: string): Promise<ApiKeyRow[]> {
  return db.selectFrom('api_keys').selectAll().where('prefix', '=', prefix).execute();
}

export async function listApiKeys(db: Executor, orgId: number): Promise<ApiKeyRow[]> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function revokeApiKey(db: Executor, orgId: number, id: number, at: number): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function findApiKey(db: Executor, orgId: number, id: number): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

export async function touchApiKey(db: Executor, id: number, at: number): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
}

export type ApiKeyWithOrg = ApiKeyRow & {
  org_slug: string;
  org_name: string;
  org_ticket_prefix: string;
  org_created_at: number;
  user_name: string | null;
};

/** One round trip for authentication: the key candidates with their organization (compiled once, store/compiled.ts). */
export async function findApiKeysWithOrgByPrefix(db: Executor, prefix: string): Promise<ApiKeyWithOrg[]> {
  const { rows } = await runNamed(
    db,
    'api keys with their org by prefix',
    (v) =>
      db
        .selectFrom('api_keys')
        .innerJoin('orgs', 'orgs.id', 'api_keys.org_id')
        .leftJoin('users', 'users.id', 'api_keys.user_id')
        .selectAll('api_keys')
        .select('users.name as user_name')
        .select([
          'orgs.slug as org_slug',
          'orgs.name as org_name',
          'orgs.ticket_prefix as org_ticket_prefix',
          'orgs.created_at as org_created_at',
        ])
        .where('api_keys.prefix', '=', v('prefix')),
    { prefix },
  );
  return rows;
}

/** Of the keys `ids`, those that still work at `now`: not revoked, not expired (deleted ones are not returned). */
export async function workingApiKeyIds(db: Executor, ids: readonly number[], now: number): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('api_keys')
    .select('id')
    .where('id', 'in', ids)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .execute();
  return rows.map((row) => Number(row.id));
}

/** Revokes the keys of a user (the user is being deleted); returns their ids. */
export async function revokeUserApiKeys(db: Executor, orgId: number, userId: number, at: number): Promise<number[]> {
  const rows = await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('org_id', '=', orgId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .returning('id')
    .execute();
  return rows.map((row) => Number(row.id));
}
