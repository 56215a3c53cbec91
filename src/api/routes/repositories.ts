import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { DomainContext } from '../../domain/context.ts';
import type { Provider } from '../../domain/repositories/model.ts';
import * as service from '../../domain/repositories/service.ts';
import type { RepositoryRow } from '../../store/schema.ts';
import { OrgParams, errorResponses, iso } from '../schemas/common.ts';
import * as s from '../schemas/repositories.ts';

const tags = ['Repositories'];

export const repositoryView = (row: RepositoryRow) => ({
  id: row.id,
  name: row.name,
  full_name: row.full_name,
  provider: row.provider as Provider,
  url: row.url,
  default_branch: row.default_branch,
  created_at: iso(row.created_at),
});

export const repositoryRoutes = (ctx: DomainContext): FastifyPluginAsyncTypebox =>
  async function repositories(app) {
    app.get(
      '/repositories',
      {
        config: { scope: 'repos:read' },
        schema: {
          tags,
          operationId: 'listRepositories', summary: 'List repositories, newest first',
          params: OrgParams,
          querystring: s.NoQuery,
          response: { 200: s.RepositoryList, ...errorResponses() },
        },
      },
      async (request) => ({ repositories: (await service.listRepositories(ctx, request.principal.org.id)).map(repositoryView) }),
    );

    app.get(
      '/repositories/:id',
      {
        config: { scope: 'repos:read' },
        schema: {
          tags,
          operationId: 'getRepository', summary: 'Get a repository',
          params: s.RepositoryParams,
          querystring: s.NoQuery,
          response: { 200: s.RepositoryEnvelope, ...errorResponses() },
        },
      },
      async (request) => ({
        repository: repositoryView(await service.getRepository(ctx, request.principal.org.id, request.params.id)),
      }),
    );

    app.get(
      '/repositories/:id/branches',
      {
        config: { scope: 'repos:read' },
        schema: {
          tags,
          operationId: 'listRepositoryBranches', summary: "List the repository's branches, read live from its provider with the caller's access token",
          description:
            'One of the query parameter `access_token` and the header `X-Git-Access-Token` is required (400 without either; ' +
            'OpenAPI cannot mark two parameters as alternatives). The header wins if both are sent. The token is used for this call only: ' +
            'it is never stored or logged. A token the provider refuses is 400; other provider failures are 502 PROVIDER_ERROR.',
          params: s.RepositoryParams,
          querystring: s.BranchesQuery,
          headers: s.BranchesHeaders,
          response: { 200: s.BranchList, ...errorResponses(502) },
        },
      },
      async (request) => {
        const token = request.headers['x-git-access-token'] ?? request.query.access_token;
        return { branches: await service.listBranches(ctx, request.principal.org.id, request.params.id, token) };
      },
    );

    app.get(
      '/repositories/:id/merge-requests',
      {
        config: { scope: 'repos:read' },
        schema: {
          tags,
          operationId: 'listMergeRequests', summary: "List the repository's merge (pull) requests, newest first, read live with its stored token",
          description:
            'A `git` repository, or one registered without a token, has none. If the provider fails or refuses the stored token: 502 PROVIDER_ERROR.',
          params: s.RepositoryParams,
          querystring: s.MergeRequestsQuery,
          response: { 200: s.MergeRequestList, ...errorResponses(502) },
        },
      },
      async (request) => {
        const { state = 'all', branch } = request.query;
        return { merge_requests: await service.listMergeRequests(ctx, request.principal.org.id, request.params.id, { state, branch }) };
      },
    );
  };
