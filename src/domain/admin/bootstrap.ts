import { SCOPES } from '../../protocol/scopes.ts';
import type { DomainContext } from '../context.ts';
import { countOrgs, insertOrg } from '../../store/orgs.ts';
import { isUniqueViolation } from '../../store/db.ts';
import { issueApiKey } from './service.ts';

export const DEFAULT_ORG_PREFIX = 'DEF';

/**
 * On the very first start (no organizations at all) creates org `default` with one all-scopes key,
 * in one transaction. Returns the key once; null when the database was already set up. Replicas
 * racing here are settled by the unique org slug: only the winner commits, and only it prints a key.
 */
export async function bootstrapIfEmpty(ctx: DomainContext): Promise<{ org: string; key: string } | null> {
  if ((await countOrgs(ctx.store.db)) > 0) return null;
  try {
    return await ctx.store.transaction(async (trx) => {
      // `DEF`, not the `DEFAUL` the slug rule would give; PATCH /admin/orgs/default changes it.
      const org = await insertOrg(trx, { slug: 'default', name: 'Default', ticket_prefix: DEFAULT_ORG_PREFIX, created_at: ctx.now() });
      const { key } = await issueApiKey(ctx, trx, org.id, { name: 'bootstrap', scopes: SCOPES });
      return { org: org.slug, key };
    });
  } catch (error) {
    if (isUniqueViolation(error)) return null;
    throw error;
  }
}
