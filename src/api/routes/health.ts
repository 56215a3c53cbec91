import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Store } from '../../store/db.ts';

/** Probes may carry query parameters of their own (cache busters): they are ignored. */
const AnyQuery = Type.Object({});
const Status = (status: string, description: string) => Type.Object({ status: Type.Literal(status) }, { description });

export const healthRoutes = (store: Store): FastifyPluginAsyncTypebox =>
  async function health(app) {
    app.get('/healthz', { schema: { tags: ['Health'], security: [], operationId: 'getHealth', querystring: AnyQuery, summary: 'The process is up', response: { 200: Status('ok', 'The process is up') } } }, async () => ({
      status: 'ok',
    }));
    app.get(
      '/readyz',
      { schema: { tags: ['Health'], security: [], operationId: 'getReadiness', querystring: AnyQuery, summary: 'The database answers', response: { 200: Status('ready', 'The database answers'), 503: Status('database unreachable', 'The database does not answer') } } },
      async (request, reply) => {
        try {
          await store.ping();
          return { status: 'ready' };
        } catch (error) {
          request.log.warn({ err: error, reqId: request.id }, 'readiness check failed');
          return reply.code(503).send({ status: 'database unreachable' });
        }
      },
    );
  };
