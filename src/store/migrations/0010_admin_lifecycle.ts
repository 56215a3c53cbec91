import type { Kysely } from 'kysely';

/**
 * Registration tokens become single-use by default and revocable (docs/decisions.md): each keeps how
 * many registrations it allows and has left, its recognisable prefix and when it was revoked.
 * Tokens issued before this migration were reusable until they expired; they get one use left
 * and no prefix (only their hash was ever stored).
 *
 * Rate limits shared by the replicas of one PostgreSQL (src/store/rate-limits.ts): hits per
 * bucket (limit and client, e.g. `auth:203.0.113.7`) and fixed window.
 */
export function adminLifecycle() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('runner_tokens').addColumn('prefix', 'text').execute();
      await db.schema.alterTable('runner_tokens').addColumn('uses', 'integer', (c) => c.notNull().defaultTo(1)).execute();
      await db.schema.alterTable('runner_tokens').addColumn('uses_left', 'integer', (c) => c.notNull().defaultTo(1)).execute();
      await db.schema.alterTable('runner_tokens').addColumn('revoked_at', 'bigint').execute();
      await db.schema.createIndex('runner_tokens_org').on('runner_tokens').columns(['org_id', 'created_at']).execute();

      await db.schema
        .createTable('rate_limit_hits')
        .addColumn('bucket', 'text', (c) => c.notNull())
        .addColumn('window_start', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('hits', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('rate_limit_hits_pk', ['bucket', 'window_start'])
        .execute();
      await db.schema.createIndex('rate_limit_hits_expiry').on('rate_limit_hits').column('expires_at').execute();
    },
  };
}
