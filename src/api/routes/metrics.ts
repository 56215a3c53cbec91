import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Metrics } from '../metrics.ts';
import { errorResponses } from '../schemas/common.ts';

/** `GET /metrics` (Prometheus text format), behind the admin token like the admin API. */
export const metricsRoutes = (metrics: Metrics): FastifyPluginAsyncTypebox =>
  async function metricsRoute(app) {
    app.get(
      '/metrics',
      {
        schema: {
          tags: ['Operations'],
          operationId: 'getMetrics',
          summary: 'Prometheus metrics: requests, pods, runners, cron lag, webhook outbox, event subscribers',
          security: [{ adminToken: [] }],
          response: {
            200: { description: 'Prometheus text exposition format 0.0.4', content: { 'text/plain': { schema: Type.String() } } },
            ...errorResponses(),
          },
        },
      },
      async (_request, reply) => {
        const { contentType, text } = await metrics.render();
        return reply.type(contentType).send(text);
      },
    );
  };
