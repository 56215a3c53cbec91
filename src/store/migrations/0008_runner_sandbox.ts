import type { Kysely } from 'kysely';

/**
 * Runners say how they sandbox their pods (docs/runners.md): `sandbox` is `bwrap` or `none`, null until
 * the runner has connected. `agents` keeps its column; its JSON becomes `[{slug, version}]`
 * (older rows hold plain slugs, read as version-less until the runner's next hello rewrites them).
 */
export function runnerSandbox() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('runners').addColumn('sandbox', 'text').execute();
    },
  };
}
