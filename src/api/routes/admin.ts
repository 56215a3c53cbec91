import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import * as admin from '../../domain/admin/service.ts';
import type { DomainContext } from '../../domain/context.ts';
import type { ApiKeyRow, OrgRecord, UserRow } from '../../store/schema.ts';
import { parseNetworkAllow } from '../../domain/pods/network.ts';
import { MessageBody, errorResponses, iso, isoOrNull } from '../schemas/common.ts';
import * as s from '../schemas/admin.ts';

const tags = ['Administration'];
const security = [{ adminToken: [] }];

export const orgView = (org: OrgRecord) => ({ ...org, network_allow: parseNetworkAllow(org.network_allow), created_at: iso(org.created_at) });
const userView = (user: UserRow) => ({ id: user.id, name: user.name, email: user.email, created_at: iso(user.created_at) });
const apiKeyView = (key: ApiKeyRow) => ({
  id: key.id,
  name: key.name,
  prefix: key.prefix,
  scopes: JSON.parse(key.scopes) as string[],
  expires_at: isoOrNull(key.expires_at),
  last_used_at: isoOrNull(key.last_used_at),
  revoked_at: isoOrNull(key.revoked_at),
  user_id: key.user_id === null ? null : Number(key.user_id),
  created_at: iso(key.created_at),
});

export const adminRoutes = (ctx: DomainContext): FastifyPluginAsyncTypebox =>
  async function administration(app) {
    app.post(
      '/orgs',
      {
        schema: { tags, security, operationId: 'createOrg', summary: 'Create an organization', body: s.CreateOrgBody, response: { 201: Type.Object({ org: Type.Ref('Org') }), ...errorResponses(409) } },
      },
      async (request, reply) => reply.code(201).send({ org: orgView(await admin.createOrg(ctx, request.body)) }),
    );

    app.get(
      '/orgs',
      { schema: { tags, security, operationId: 'listOrgs', summary: 'List organizations', response: { 200: Type.Object({ orgs: Type.Array(Type.Ref('Org')) }), ...errorResponses() } } },
      async () => ({ orgs: (await admin.listOrgs(ctx)).map(orgView) }),
    );

    app.patch(
      '/orgs/:org',
      {
        schema: {
          tags,
          security,
          operationId: 'updateOrg',
          summary: 'Rename an organization or change its ticket prefix (new tickets only; existing slugs stay)',
          params: s.AdminOrgParams,
          body: s.UpdateOrgBody,
          response: { 200: Type.Object({ org: Type.Ref('Org') }), ...errorResponses() },
        },
      },
      async (request) => ({ org: orgView(await admin.updateOrg(ctx, request.params.org, request.body)) }),
    );

    app.post(
      '/orgs/:org/api-keys',
      {
        schema: {
          tags,
          security,
          operationId: 'createApiKey', summary: 'Issue an API key; the key itself is shown only in this response',
          params: s.AdminOrgParams,
          body: s.CreateApiKeyBody,
          response: { 201: Type.Object({ api_key: Type.Ref('ApiKey'), key: Type.String() }), ...errorResponses() },
        },
      },
      async (request, reply) => {
        const { apiKey, key } = await admin.createApiKey(ctx, request.params.org, request.body);
        return reply.code(201).send({ api_key: apiKeyView(apiKey), key });
      },
    );

    app.get(
      '/orgs/:org/api-keys',
      {
        schema: { tags, security, operationId: 'listApiKeys', summary: 'List API keys (never the keys themselves)', params: s.AdminOrgParams, response: { 200: Type.Object({ api_keys: Type.Array(Type.Ref('ApiKey')) }), ...errorResponses() } },
      },
      async (request) => ({ api_keys: (await admin.listApiKeys(ctx, request.params.org)).map(apiKeyView) }),
    );

    app.delete(
      '/orgs/:org/api-keys/:id',
      {
        schema: { tags, security, operationId: 'revokeApiKey', summary: 'Revoke an API key', params: s.AdminKeyParams, response: { 200: MessageBody, ...errorResponses() } },
      },
      async (request) => {
        await admin.revokeApiKey(ctx, request.params.org, request.params.id);
        return { message: `API key ${request.params.id} revoked.` };
      },
    );

    app.post(
      '/orgs/:org/users',
      {
        schema: { tags, security, operationId: 'createUser', summary: 'Create a user (ticket assignees are users)', params: s.AdminOrgParams, body: s.CreateUserBody, response: { 201: Type.Object({ user: Type.Ref('User') }), ...errorResponses(409) } },
      },
      async (request, reply) => reply.code(201).send({ user: userView(await admin.createUser(ctx, request.params.org, request.body)) }),
    );

    app.patch(
      '/orgs/:org/users/:id',
      {
        schema: {
          tags,
          security,
          operationId: 'updateUser',
          summary: 'Change a user\'s name or email',
          params: s.AdminIdParams,
          body: s.UpdateUserBody,
          response: { 200: Type.Object({ user: Type.Ref('User') }), ...errorResponses(409) },
        },
      },
      async (request) => ({ user: userView(await admin.updateUser(ctx, request.params.org, request.params.id, request.body)) }),
    );

    app.delete(
      '/orgs/:org/users/:id',
      {
        schema: {
          tags,
          security,
          operationId: 'deleteUser',
          summary: 'Delete a user; the tickets assigned to them become unassigned, their API keys revoked',
          params: s.AdminIdParams,
          response: { 200: MessageBody, ...errorResponses() },
        },
      },
      async (request) => {
        const { unassigned } = await admin.deleteUser(ctx, request.params.org, request.params.id);
        return { message: `User ${request.params.id} deleted; ${unassigned} ticket${unassigned === 1 ? '' : 's'} unassigned.` };
      },
    );

    app.get(
      '/orgs/:org/users',
      {
        schema: { tags, security, operationId: 'listUsers', summary: 'List users', params: s.AdminOrgParams, response: { 200: Type.Object({ users: Type.Array(Type.Ref('User')) }), ...errorResponses() } },
      },
      async (request) => ({ users: (await admin.listUsers(ctx, request.params.org)).map(userView) }),
    );
  };
