import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { PROMPT_POSITIONS, createCustomAgent, deleteCustomAgent, listCustomAgents, updateCustomAgent } from '../../domain/agents/service.ts';
import type { DomainContext } from '../../domain/context.ts';
import type { CustomAgentRow } from '../../store/schema-runners.ts';
import { MessageBody, OrgSlugParam, Text, errorResponses, iso } from '../schemas/common.ts';
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

const fields = {
  name: Text({ minLength: 1, maxLength: 255 }),
  command: Text({ minLength: 1, maxLength: 1000 }),
  args: Type.Array(Text({ maxLength: 1000 }), { maxItems: 100 }),
  prompt_position: Type.Enum(PROMPT_POSITIONS),
};
const AgentParams = Type.Object({ org: OrgSlugParam, slug: Text({ maxLength: 100 }) });

const customAgentView = (agent: CustomAgentRow) => ({
  id: agent.id,
  slug: agent.slug,
  name: agent.name,
  command: agent.command,
  args: JSON.parse(agent.args) as string[],
  prompt_position: agent.prompt_position as (typeof PROMPT_POSITIONS)[number],
  created_at: iso(agent.created_at),
});

/** An organization's custom agents (docs/api.md, docs/decisions.md). */
export const adminAgentRoutes = (ctx: DomainContext): FastifyPluginAsyncTypebox =>
  async function adminAgents(app) {
    app.post(
      '/orgs/:org/agents',
      {
        schema: {
          tags,
          security,
          operationId: 'createCustomAgent',
          summary: 'Create a custom agent',
          params: AdminOrgParams,
          body: Type.Object(
            {
              slug: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,62}$' }),
              name: fields.name,
              command: fields.command,
              args: Type.Optional(fields.args),
              prompt_position: Type.Optional(fields.prompt_position),
            },
            { additionalProperties: false },
          ),
          response: { 201: Type.Object({ agent: Type.Ref('CustomAgent') }), ...errorResponses(409) },
        },
      },
      async (request, reply) => reply.code(201).send({ agent: customAgentView(await createCustomAgent(ctx, request.params.org, request.body)) }),
    );

    app.get(
      '/orgs/:org/agents',
      { schema: { tags, security, operationId: 'listCustomAgents', summary: 'List custom agents', params: AdminOrgParams, response: { 200: Type.Object({ agents: Type.Array(Type.Ref('CustomAgent')) }), ...errorResponses() } } },
      async (request) => ({ agents: (await listCustomAgents(ctx, request.params.org)).map(customAgentView) }),
    );

    app.patch(
      '/orgs/:org/agents/:slug',
      {
        schema: {
          tags,
          security,
          operationId: 'updateCustomAgent',
          summary: 'Change a custom agent (its slug stays); pods started from now on use the new definition',
          params: AgentParams,
          body: Type.Object(
            {
              name: Type.Optional(fields.name),
              command: Type.Optional(fields.command),
              args: Type.Optional(fields.args),
              prompt_position: Type.Optional(fields.prompt_position),
            },
            { additionalProperties: false, minProperties: 1 },
          ),
          response: { 200: Type.Object({ agent: Type.Ref('CustomAgent') }), ...errorResponses() },
        },
      },
      async (request) => ({ agent: customAgentView(await updateCustomAgent(ctx, request.params.org, request.params.slug, request.body)) }),
    );

    app.delete(
      '/orgs/:org/agents/:slug',
      {
        schema: {
          tags,
          security,
          operationId: 'deleteCustomAgent',
          summary: 'Delete a custom agent: 409 while loops name it or pods running it are active',
          params: AgentParams,
          response: { 200: MessageBody, ...errorResponses(409) },
        },
      },
      async (request) => {
        await deleteCustomAgent(ctx, request.params.org, request.params.slug);
        return { message: `Agent ${request.params.slug} deleted.` };
      },
    );
  };
