import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import type { Store } from './db.ts';
import { foundation } from './migrations/0001_foundation.ts';

/** Migrations in order; names are fixed once released. */
function migrationsFor(store: Store): Record<string, Migration> {
  return {
    '0001_foundation': foundation(store.kind),
  };
}

/**
 * Brings the schema up to date. Safe with several replicas starting at once on one PostgreSQL:
 * Kysely's migrator takes an advisory lock and runs each migration in a transaction.
 */
export async function migrateToLatest(store: Store): Promise<void> {
  const provider: MigrationProvider = { getMigrations: async () => migrationsFor(store) };
  const migrator = new Migrator({ db: store.db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`migration ${failed?.migrationName ?? '(setup)'} failed: ${(error as Error).message ?? String(error)}`, {
      cause: error,
    });
  }
}
