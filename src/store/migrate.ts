import { Migrator, sql, type Migration, type MigrationProvider } from 'kysely';
import type { Store } from './db.ts';
import { foundation } from './migrations/0001_foundation.ts';
import { channels } from './migrations/0002_channels.ts';
import { repositories } from './migrations/0003_repositories.ts';
import { runnersAndPods } from './migrations/0004_runners_pods.ts';
import { loops } from './migrations/0005_loops.ts';
import { webhooks } from './migrations/0006_webhooks.ts';
import { ticketVersions } from './migrations/0007_ticket_versions.ts';
import { runnerSandbox } from './migrations/0008_runner_sandbox.ts';
import { adminLifecycle } from './migrations/0010_admin_lifecycle.ts';
import { operations } from './migrations/0011_operations.ts';
import { podResults } from './migrations/0012_pod_results.ts';
import { podQueue } from './migrations/0013_pod_queue.ts';
import { events } from './migrations/0014_events.ts';
import { podParent } from './migrations/0015_pod_parent.ts';
import { networkWalls } from './migrations/0016_network_walls.ts';
import { runnerIsolation } from './migrations/0017_runner_isolation.ts';
import { modelUsage } from './migrations/0018_model_usage.ts';
import { deliveries } from './migrations/0019_deliveries.ts';
import { people } from './migrations/0020_people.ts';
import { workspaceRemovals } from './migrations/0021_workspace_removals.ts';
import { runStartLease } from './migrations/0022_run_start_lease.ts';

/** Migrations in order; names are fixed once released. */
export function migrationsFor(store: Store): Record<string, Migration> {
  return {
    '0001_foundation': foundation(store.kind),
    '0002_channels': channels(store.kind),
    '0003_repositories': repositories(),
    '0004_runners_pods': runnersAndPods(store.kind),
    '0005_loops': loops(store.kind),
    '0006_webhooks': webhooks(store.kind),
    '0007_ticket_versions': ticketVersions(),
    '0008_runner_sandbox': runnerSandbox(),
    '0010_admin_lifecycle': adminLifecycle(),
    '0011_operations': operations(store.kind),
    '0012_pod_results': podResults(),
    '0013_pod_queue': podQueue(store.kind),
    '0014_events': events(store.kind),
    '0015_pod_parent': podParent(),
    '0016_network_walls': networkWalls(),
    '0017_runner_isolation': runnerIsolation(),
    '0018_model_usage': modelUsage(),
    '0019_deliveries': deliveries(),
    '0020_people': people(store.kind),
    '0021_workspace_removals': workspaceRemovals(),
    '0022_run_start_lease': runStartLease(),
  };
}

/**
 * PostgreSQL: the schema we work in. Without it Kysely's migrator looks for its bookkeeping tables
 * in every schema of the database, so another schema's (another app's, a concurrent or crashed test
 * suite's) would be taken for ours and ours never created.
 */
async function ownSchema(store: Store): Promise<string | undefined> {
  if (store.kind !== 'postgres') return undefined;
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(store.db);
  return rows[0]?.schema ?? undefined;
}

/**
 * Brings the schema up to date. Safe with several replicas starting at once on one PostgreSQL:
 * Kysely's migrator takes an advisory lock and runs each migration in a transaction.
 */
export async function migrateToLatest(store: Store): Promise<void> {
  await migrate(store, (migrator) => migrator.migrateToLatest());
}

/** Brings the schema up to (and including) the named migration: how tests build data of an older release. */
export async function migrateTo(store: Store, name: string): Promise<void> {
  await migrate(store, (migrator) => migrator.migrateTo(name));
}

async function migrate(store: Store, run: (migrator: Migrator) => ReturnType<Migrator['migrateToLatest']>): Promise<void> {
  const provider: MigrationProvider = { getMigrations: async () => migrationsFor(store) };
  const schema = await ownSchema(store);
  const migrator = new Migrator({ db: store.db, provider, migrationTableSchema: schema });
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await run(migrator);
    if (!error) return;
    // Kysely's setup lists the tables of every schema of the database; another schema dropped in
    // that moment (another app's, a test suite cleaning up) fails the listing, not our migration.
    if (attempt < 5 && isOtherSchemaGone(error, schema)) {
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
      continue;
    }
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`migration ${failed?.migrationName ?? '(setup)'} failed: ${(error as Error).message ?? String(error)}`, {
      cause: error,
    });
  }
}

/**
 * PostgreSQL's "schema … does not exist" (3F000) or "relation … does not exist" (42P01, a table of
 * a schema dropped while listed) about something that is not in this store's own schema.
 */
export function isOtherSchemaGone(error: unknown, own: string | undefined): boolean {
  const { code, message } = error as { code?: string; message?: string };
  return (code === '3F000' || code === '42P01') && own !== undefined && !(message ?? '').includes(`"${own}`);
}
