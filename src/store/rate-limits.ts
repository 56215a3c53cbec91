import { sql } from 'kysely';
import type { Executor } from './db.ts';

export interface BucketHits {
  bucket: string;
  window_start: number;
  expires_at: number;
  hits: number;
}

/**
 * Adds each replica's local hits to the shared counts and answers the totals, in one statement.
 * Rows are written in (bucket, window) order, so replicas flushing overlapping sets at once take
 * their row locks in the same order and cannot deadlock.
 */
export async function addRateLimitHits(db: Executor, rows: BucketHits[]): Promise<BucketHits[]> {
  if (rows.length === 0) return [];
  const sorted = [...rows].sort((a, b) => (a.bucket < b.bucket ? -1 : a.bucket > b.bucket ? 1 : a.window_start - b.window_start));
  return db
    .insertInto('rate_limit_hits')
    .values(sorted)
    .onConflict((oc) => oc.columns(['bucket', 'window_start']).doUpdateSet({ hits: sql`rate_limit_hits.hits + excluded.hits` }))
    .returning(['bucket', 'window_start', 'expires_at', 'hits'])
    .execute();
}

export async function deleteExpiredRateLimitHits(db: Executor, now: number): Promise<void> {
  await db.deleteFrom('rate_limit_hits').where('expires_at', '<', now).execute();
}
