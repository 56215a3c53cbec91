import type { Kysely } from 'kysely';

/**
 * Repository names are unique per organization: agentfiles name a repository by id or by name
 * (`REPO <name>`), which must be unambiguous. Created through the admin API from now on.
 */
export function repositories() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.createIndex('repositories_org_name').on('repositories').columns(['org_id', 'name']).unique().execute();
    },
  };
}
