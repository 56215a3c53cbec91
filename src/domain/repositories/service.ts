/**
 * Repositories as the org API sees them (docs/api.md): the records, and their branches and merge
 * requests read live from the Git provider. Provider failures become AppErrors here; neither the
 * caller's access token nor the stored token ever reaches a message.
 */
import { AppError, invalid, notFound } from '../../errors.ts';
import * as store from '../../store/repositories.ts';
import type { RepositoryRow } from '../../store/schema.ts';
import type { DomainContext } from '../context.ts';
import { SecretError } from '../secrets.ts';
import * as providers from './providers/index.ts';
import { tokenProblem } from './model.ts';

export type MergeRequestState = providers.MergeRequestState;

export const listRepositories = (ctx: DomainContext, orgId: number): Promise<RepositoryRow[]> =>
  store.listRepositories(ctx.store.db, orgId);

export async function getRepository(ctx: DomainContext, orgId: number, id: number): Promise<RepositoryRow> {
  const repository = await store.findRepository(ctx.store.db, orgId, id);
  if (!repository) throw notFound('repository');
  return repository;
}

const targetOf = (row: RepositoryRow): providers.ProviderTarget => ({
  provider: row.provider as providers.ProviderKind,
  fullName: row.full_name,
  url: row.url,
  apiBaseUrl: row.api_base_url,
});

const callOptions = (ctx: DomainContext): providers.ProviderCallOptions => ({
  timeoutMs: ctx.providerTimeoutMs ?? providers.DEFAULT_TIMEOUT_MS,
});

/** The provider clients already scrub tokens; this second pass costs nothing. */
const without = (message: string, token: string): string => (token ? message.split(token).join('***') : message);

/** Branch names; `accessToken` is the caller's own credential for the provider (never stored). */
export async function listBranches(ctx: DomainContext, orgId: number, id: number, accessToken: string | undefined): Promise<string[]> {
  // A missing or malformed token is a 400 whatever the repository (bad input is checked before lookups).
  if (accessToken === undefined || accessToken === '') {
    throw invalid('access_token', 'is required (query parameter access_token or header X-Git-Access-Token)');
  }
  const problem = tokenProblem(accessToken);
  if (problem) throw invalid('access_token', problem);
  const repository = await getRepository(ctx, orgId, id);
  try {
    return await providers.listBranches(targetOf(repository), accessToken, callOptions(ctx));
  } catch (error) {
    if (!(error instanceof providers.ProviderError)) throw error;
    if (error.kind === 'rejected') {
      throw new AppError('VALIDATION_FAILED', 'access token rejected by provider', {
        details: [{ field: 'access_token', message: 'access token rejected by provider' }],
      });
    }
    throw new AppError('PROVIDER_ERROR', `could not list branches: ${without(error.message, accessToken)}`);
  }
}

/**
 * Merge requests, live, with the repository's stored token: a `git` repository, or one without
 * a token, has none. A refusal of the stored token is the server's problem, not the caller's: 502.
 */
export async function listMergeRequests(
  ctx: DomainContext,
  orgId: number,
  id: number,
  filter: { state: MergeRequestState; branch?: string },
): Promise<providers.MergeRequest[]> {
  const repository = await getRepository(ctx, orgId, id);
  if (repository.provider === 'git' || repository.token_encrypted === null) return [];
  if (!ctx.secrets) throw new Error('no secret key configured: cannot read stored repository tokens');
  let token: string;
  try {
    token = ctx.secrets.decrypt(repository.token_encrypted);
  } catch (error) {
    if (!(error instanceof SecretError)) throw error;
    throw new AppError('INTERNAL', "the repository's stored token cannot be decrypted with this server's secret key");
  }
  try {
    return await providers.listMergeRequests(targetOf(repository), token, filter, callOptions(ctx));
  } catch (error) {
    if (!(error instanceof providers.ProviderError)) throw error;
    if (error.kind === 'rejected') {
      throw new AppError(
        'PROVIDER_ERROR',
        `${repository.provider} refused the repository's stored token; an administrator needs to replace it`,
      );
    }
    throw new AppError('PROVIDER_ERROR', `could not list merge requests: ${without(error.message, token)}`);
  }
}
