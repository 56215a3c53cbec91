import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { DomainContext } from '../../domain/context.ts';
import * as admin from '../../domain/repositories/admin.ts';
import type { RepositoryRow } from '../../store/schema.ts';
import { AdminIdParams, AdminOrgParams } from '../schemas/admin.ts';
import { MessageBody, errorResponses } from '../schemas/common.ts';
import * as s from '../schemas/repositories.ts';
import { repositoryView } from './repositories.ts';

const tags = ['Administration'];
const security = [{ adminToken: [] }];

/** The admin view: configuration included, the token only as `has_token`. */
const adminRepositoryView = (row: RepositoryRow) => ({
  ...repositoryView(row),
  ticket_prefix: row.ticket_prefix,
  api_base_url: row.api_base_url,
  has_token: row.token_encrypted !== null,
});

export const adminRepositoryRoutes = (ctx: DomainContext): FastifyPluginAsyncTypebox =>
  async function administerRepositories(app) {
    app.post(
      '/orgs/:org/repositories',
      {
        schema: {
          tags,
          security,
          operationId: 'adminCreateRepository', summary: 'Register a repository; its token (for merge requests) is stored encrypted and never returned',
          params: AdminOrgParams,
          body: s.CreateRepositoryBody,
          response: { 201: s.AdminRepositoryEnvelope, ...errorResponses(409) },
        },
      },
      async (request, reply) =>
        reply.code(201).send({ repository: adminRepositoryView(await admin.createRepository(ctx, request.params.org, request.body)) }),
    );

    app.get(
      '/orgs/:org/repositories',
      {
        schema: {
          tags,
          security,
          operationId: 'adminListRepositories', summary: 'List repositories with their configuration (never the token)',
          params: AdminOrgParams,
          response: { 200: s.AdminRepositoryList, ...errorResponses() },
        },
      },
      async (request) => ({ repositories: (await admin.listOrgRepositories(ctx, request.params.org)).map(adminRepositoryView) }),
    );

    app.patch(
      '/orgs/:org/repositories/:id',
      {
        schema: {
          tags,
          security,
          operationId: 'adminUpdateRepository',
          summary: 'Change a repository; `token` replaces the stored token, `token: null` clears it',
          params: AdminIdParams,
          body: s.UpdateRepositoryBody,
          response: { 200: s.AdminRepositoryEnvelope, ...errorResponses(409) },
        },
      },
      async (request) => ({
        repository: adminRepositoryView(await admin.updateRepository(ctx, request.params.org, request.params.id, request.body)),
      }),
    );

    app.delete(
      '/orgs/:org/repositories/:id',
      {
        schema: {
          tags,
          security,
          operationId: 'adminDeleteRepository',
          summary: 'Delete a repository: 409 while loops or active pods use it; its tickets and channels are detached',
          params: AdminIdParams,
          response: { 200: MessageBody, ...errorResponses(409) },
        },
      },
      async (request) => {
        const { tickets, channels } = await admin.deleteRepository(ctx, request.params.org, request.params.id);
        return { message: `Repository ${request.params.id} deleted; ${tickets} tickets and ${channels} channels detached from it.` };
      },
    );
  };
