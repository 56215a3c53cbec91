import type { Executor } from './db.ts';
import type { IdempotencyKeysTable } from './schema.ts';

/** How long a stored Idempotency-Key answers replays; the housekeeping loop deletes older keys. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export async function insertIdempotencyKey(
  db: Executor,
  row: Pick<IdempotencyKeysTable, 'api_key_id' | 'key' | 'method_path' | 'request_hash' | 'created_at'>,
): Promise<void> {
  await db
    .insertInto('idempotency_keys')
    .values({ ...row, state: 'in_progress', status_code: null, response_body: null })
    .execute();
}

export async function findIdempotencyKey(db: Executor, apiKeyId: number, key: string) {
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('api_key_id', '=', apiKeyId)
    .where('key', '=', key)
    .executeTakeFirst();
}

export async function completeIdempotencyKey(
  db: Executor,
  apiKeyId: number,
  key: string,
  statusCode: number,
  responseBody: string,
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ state: 'done', status_code: statusCode, response_body: responseBody })
    .where('api_key_id', '=', apiKeyId)
    .where('key', '=', key)
    .execute();
}

export async function deleteIdempotencyKey(db: Executor, apiKeyId: number, key: string): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('api_key_id', '=', apiKeyId).where('key', '=', key).execute();
}

export async function deleteIdempotencyKeysBefore(db: Executor, before: number): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('created_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
