/** Registering repositories (contract §2, admin API). The token is encrypted before it is stored. */
import { AppError, type ErrorDetail } from '../../errors.ts';
import { isUniqueViolation } from '../../store/db.ts';
import * as store from '../../store/repositories.ts';
import type { RepositoryRow } from '../../store/schema.ts';
import { requireOrg } from '../admin/service.ts';
import type { DomainContext } from '../context.ts';
import { DEFAULT_BRANCH, apiBaseUrlProblem, fullNameProblem, tokenProblem, urlProblem, type Provider } from './model.ts';

export interface CreateRepositoryInput {
  name: string;
  full_name: string;
  provider: Provider;
  url: string;
  default_branch?: string;
  ticket_prefix?: string;
  api_base_url?: string;
  token?: string;
}

/** Every problem of the body at once, named like schema errors (JSON pointers). */
function problems(input: CreateRepositoryInput): ErrorDetail[] {
  const found: [string, string | null][] = [
    ['full_name', fullNameProblem(input.provider, input.full_name)],
    ['url', urlProblem(input.provider, input.url)],
  ];
  if (input.api_base_url !== undefined) {
    found.push(['api_base_url', input.provider === 'git' ? 'is not used by git repositories' : apiBaseUrlProblem(input.api_base_url)]);
  } else if (input.provider === 'gitea') {
    found.push(['api_base_url', 'is required for gitea repositories (e.g. https://gitea.example.com/api/v1)']);
  }
  if (input.token !== undefined) found.push(['token', tokenProblem(input.token)]);
  return found.filter(([, problem]) => problem !== null).map(([field, problem]) => ({ field: `/${field}`, message: `${field} ${problem}` }));
}

export async function createRepository(ctx: DomainContext, orgSlug: string, input: CreateRepositoryInput): Promise<RepositoryRow> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  const details = problems(input);
  if (details.length > 0) {
    const more = details.length > 1 ? ` (and ${details.length - 1} more)` : '';
    throw new AppError('VALIDATION_FAILED', details[0].message + more, { details });
  }
  let tokenEncrypted: string | null = null;
  if (input.token !== undefined) {
    if (!ctx.secrets) throw new Error('no secret key configured: cannot store repository tokens');
    tokenEncrypted = ctx.secrets.encrypt(input.token);
  }
  try {
    return await store.insertRepository(ctx.store.db, {
      org_id: org.id,
      name: input.name,
      full_name: input.full_name,
      provider: input.provider,
      url: input.url,
      default_branch: input.default_branch ?? DEFAULT_BRANCH,
      ticket_prefix: input.ticket_prefix ?? null,
      api_base_url: input.api_base_url ?? null,
      token_encrypted: tokenEncrypted,
      created_at: ctx.now(),
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new AppError('ALREADY_EXISTS', `a repository named "${input.name}" already exists`);
    throw error;
  }
}

export async function listOrgRepositories(ctx: DomainContext, orgSlug: string): Promise<RepositoryRow[]> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  return store.listRepositories(ctx.store.db, org.id);
}
