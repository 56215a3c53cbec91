import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { DomainContext } from '../../domain/context.ts';
import { usageReport } from '../../domain/usage/service.ts';
import { OrgParams, errorResponses } from '../schemas/common.ts';
import { UsageQuery, UsageReport } from '../schemas/usage.ts';

export const usageRoutes = (ctx: DomainContext): FastifyPluginAsyncTypebox =>
  async function usageApi(app) {
    app.get(
      '/usage',
      {
        config: { scope: 'pods:read' },
        schema: {
          tags: ['Usage'],
          operationId: 'getUsage',
          summary: 'Model usage and cost of the pods created in a range, grouped by day, agent, loop, ticket or repository',
          params: OrgParams,
          querystring: UsageQuery,
          response: { 200: UsageReport, ...errorResponses() },
        },
      },
      async (request) => usageReport(ctx, request.principal.org.id, request.query),
    );
  };
