import { SCOPES } from '../auth/scopes.ts';
import type { DomainContext } from '../context.ts';
import { countOrgs } from '../../store/orgs.ts';
import { isUniqueViolation } from '../../store/db.ts';
import { createOrg, issueApiKey } from './service.ts';

/**
 * On the very first start (no organizations at all) creates org `default` with one all-scopes key.
 * Returns the key once; null when the database was already set up. Replicas racing here are
 * settled by the unique org slug: only the winner creates the key.
 */
export async function bootstrapIfEmpty(ctx: DomainContext): Promise<{ org: string; key: string } | null> {
  if ((await countOrgs(ctx.store.db)) > 0) return null;
  try {
    const org = await createOrg(ctx, { slug: 'default', name: 'Default' });
    const { key } = await issueApiKey(ctx, ctx.store.db, org.id, { name: 'bootstrap', scopes: SCOPES });
    return { org: org.slug, key };
  } catch (error) {
    if (isUniqueViolation(error) || (error as { code?: string }).code === 'ALREADY_EXISTS') return null;
    throw error;
  }
}
