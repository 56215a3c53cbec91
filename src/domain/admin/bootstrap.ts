import { SCOPES } from '../auth/scopes.ts';
import type { DomainContext } from '../context.ts';
import { defaultTicketPrefix } from '../tickets/model.ts';
import { countOrgs, insertOrg } from '../../store/orgs.ts';
import { isUniqueViolation } from '../../store/db.ts';
import { issueApiKey } from './service.ts';

/**
 * On the very first start (no organizations at all) creates org `default` with one all-scopes key,
 * in one transaction. Returns the key once; null when the database was already set up. Replicas
 * racing here are settled by the unique org slug: only the winner commits, and only it prints a key.
 */
export async function bootstrapIfEmpty(ctx: DomainContext): Promise<{ org: string; key: string } | null> {
  if ((await countOrgs(ctx.store.db)) > 0) return null;
  try {
    return await ctx.store.transaction(async (trx) => {
      const org = await insertOrg(trx, { slug: 'default', name: 'Default', ticket_prefix: defaultTicketPrefix('default'), created_at: ctx.now() });
      const { key } = await issueApiKey(ctx, trx, org.id, { name: 'bootstrap', scopes: SCOPES });
      return { org: org.slug, key };
    });
  } catch (error) {
    if (isUniqueViolation(error)) return null;
    throw error;
  }
}
