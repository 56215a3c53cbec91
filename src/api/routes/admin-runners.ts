import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { PROMPT_POSITIONS, createCustomAgent, listCustomAgents } from '../../domain/agents/service.ts';
import type { DomainContext } from '../../domain/context.ts';
import { createRegistrationToken } from '../../domain/runners/service.ts';
import type { CustomAgentRow } from '../../store/schema-runners.ts';
import { Text, errorResponses, iso } from '../schemas/common.ts';
import { optionalBody } from '../plugins/optional-body.ts';
import { AdminOrgParams } from '../schemas/admin.ts';

const tags = ['Administration'];
const security = [{ adminToken: [] }];

export const Agent = Type.Object(
  {
    id: Type.Integer(),
    slug: Type.String(),
    name: Type.String(),
    command: Type.String(),
    args: Type.Array(Type.String()),
    prompt_position: Type.Enum(PROMPT_POSITIONS),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'CustomAgent' },
);

const presentAgent = (agent: CustomAgentRow) => ({
  id: agent.id,
  slug: agent.slug,
  name: agent.name,
  command: agent.command,
  args: JSON.parse(agent.args) as string[],
  prompt_position: agent.prompt_position as (typeof PROMPT_POSITIONS)[number],
  created_at: iso(agent.created_at),
});

export const adminRunnerRoutes = (ctx: DomainContext): FastifyPluginAsyncTypebox =>
  async function adminRunners(app) {
    app.post(
      '/orgs/:org/runner-tokens',
      {
        schema: {
          tags,
          security,
          operationId: 'createRunnerToken', summary: 'Issue a runner registration token (for `drover runner --token`)',
          params: AdminOrgParams,
          body: Type.Object(
            {
              labels: Type.Optional(Type.Array(Text({ minLength: 1, maxLength: 100 }), { maxItems: 50 })),
              expires_in_hours: Type.Optional(Type.Integer({ minimum: 1, maximum: 24 * 365 })),
            },
            { additionalProperties: false },
          ),
          response: { 201: Type.Object({ token: Type.String(), expires_at: Type.String({ format: 'date-time' }) }), ...errorResponses() },
        },
        preValidation: optionalBody,
      },
      async (request, reply) => {
        const { token, expiresAt } = await createRegistrationToken(ctx, request.params.org, request.body);
        return reply.code(201).send({ token, expires_at: iso(expiresAt) });
      },
    );

    app.post(
      '/orgs/:org/agents',
      {
        schema: {
          tags,
          security,
          operationId: 'createCustomAgent', summary: 'Create a custom agent',
          params: AdminOrgParams,
          body: Type.Object(
            {
              slug: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,62}$' }),
              name: Text({ minLength: 1, maxLength: 255 }),
              command: Text({ minLength: 1, maxLength: 1000 }),
              args: Type.Optional(Type.Array(Text({ maxLength: 1000 }), { maxItems: 100 })),
              prompt_position: Type.Optional(Type.Enum(PROMPT_POSITIONS)),
            },
            { additionalProperties: false },
          ),
          response: { 201: Type.Object({ agent: Type.Ref('CustomAgent') }), ...errorResponses(409) },
        },
      },
      async (request, reply) => reply.code(201).send({ agent: presentAgent(await createCustomAgent(ctx, request.params.org, request.body)) }),
    );

    app.get(
      '/orgs/:org/agents',
      { schema: { tags, security, operationId: 'listCustomAgents', summary: 'List custom agents', params: AdminOrgParams, response: { 200: Type.Object({ agents: Type.Array(Type.Ref('CustomAgent')) }), ...errorResponses() } } },
      async (request) => ({ agents: (await listCustomAgents(ctx, request.params.org)).map(presentAgent) }),
    );
  };
