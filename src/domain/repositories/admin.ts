/** Registering repositories (docs/api.md "Administration"). The token is encrypted before it is stored. */
import { AppError, notFound, type ErrorDetail } from '../../errors.ts';
import { isUniqueViolation } from '../../store/db.ts';
import { detachRepository } from '../../store/references.ts';
import { recordChannelsUpdated } from '../channels/service.ts';
import { recordTicketsUpdated } from '../tickets/service.ts';
import * as store from '../../store/repositories.ts';
import type { RepositoryRow } from '../../store/schema.ts';
import { refuseWhileUsed } from '../admin/in-use.ts';
import { requireOrg } from '../admin/service.ts';
import type { DomainContext } from '../context.ts';
import { localRepositoryProblem } from './local-path.ts';
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

/** PATCH: every field optional; `null` clears `ticket_prefix`, `api_base_url` and `token`. */
export interface UpdateRepositoryInput {
  name?: string;
  full_name?: string;
  url?: string;
  default_branch?: string;
  ticket_prefix?: string | null;
  api_base_url?: string | null;
  token?: string | null;
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

/** `urlChanged`: the local path is checked when the URL is new (an update of other fields leaves it be). */
async function checkProblems(input: CreateRepositoryInput, urlChanged = true): Promise<void> {
  const details = problems(input);
  const local = details.length === 0 && urlChanged ? await localRepositoryProblem(input.url) : null;
  if (local !== null) details.push({ field: '/url', message: `url ${local}` });
  if (details.length > 0) {
    const more = details.length > 1 ? ` (and ${details.length - 1} more)` : '';
    throw new AppError('VALIDATION_FAILED', details[0].message + more, { details });
  }
}

function encryptToken(ctx: DomainContext, token: string): string {
  if (!ctx.secrets) throw new Error('no secret key configured: cannot store repository tokens');
  return ctx.secrets.encrypt(token);
}

const nameTaken = (name: string) => new AppError('ALREADY_EXISTS', `a repository named "${name}" already exists`);

export async function createRepository(ctx: DomainContext, orgSlug: string, input: CreateRepositoryInput): Promise<RepositoryRow> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  await checkProblems(input);
  const tokenEncrypted = input.token !== undefined ? encryptToken(ctx, input.token) : null;
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
    if (isUniqueViolation(error)) throw nameTaken(input.name);
    throw error;
  }
}

/**
 * PATCH /admin/orgs/{org}/repositories/{id}: the fields given are checked together with the ones
 * kept (a gitea repository cannot lose its `api_base_url`); `token: null` clears the stored token.
 */
export async function updateRepository(ctx: DomainContext, orgSlug: string, id: number, input: UpdateRepositoryInput): Promise<RepositoryRow> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  const current = await store.findRepository(ctx.store.db, org.id, id);
  if (!current) throw notFound('repository');
  const merged: CreateRepositoryInput = {
    name: input.name ?? current.name,
    full_name: input.full_name ?? current.full_name,
    provider: current.provider as Provider,
    url: input.url ?? current.url,
    api_base_url: (input.api_base_url === undefined ? current.api_base_url : input.api_base_url) ?? undefined,
    token: typeof input.token === 'string' ? input.token : undefined,
  };
  await checkProblems(merged, input.url !== undefined);
  if (input.name !== undefined && input.name !== current.name && (await store.findRepositoryByName(ctx.store.db, org.id, input.name))) {
    throw nameTaken(input.name);
  }
  try {
    const updated = await store.updateRepository(ctx.store.db, org.id, id, {
      name: input.name,
      full_name: input.full_name,
      url: input.url,
      default_branch: input.default_branch,
      ticket_prefix: input.ticket_prefix,
      api_base_url: input.api_base_url,
      token_encrypted: input.token === undefined ? undefined : input.token === null ? null : encryptToken(ctx, input.token),
    });
    if (!updated) throw notFound('repository');
    return updated;
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(input.name ?? current.name);
    throw error;
  }
}

/**
 * DELETE /admin/orgs/{org}/repositories/{id}: refused (409 RESOURCE_IN_USE) while loops or active
 * pods use the repository; its tickets and channels are detached (their `repository_id` becomes
 * null), finished pods keep the id they ran with. Nothing else is deleted.
 */
export async function deleteRepository(ctx: DomainContext, orgSlug: string, id: number): Promise<{ tickets: number; channels: number }> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  return ctx.store.transaction(async (trx) => {
    if (!(await store.findRepository(trx, org.id, id))) throw notFound('repository');
    await refuseWhileUsed(trx, org.id, `repository ${id}`, { repositoryId: id });
    const { ticketIds, channelIds } = await detachRepository(trx, org.id, id, ctx.now());
    await store.deleteRepository(trx, org.id, id);
    await recordTicketsUpdated(ctx, trx, org.id, ticketIds);
    await recordChannelsUpdated(ctx, trx, org.id, channelIds);
    return { tickets: ticketIds.length, channels: channelIds.length };
  });
}

export async function listOrgRepositories(ctx: DomainContext, orgSlug: string): Promise<RepositoryRow[]> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  return store.listRepositories(ctx.store.db, org.id);
}
