import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Store } from '../../store/db.ts';

const Status = Type.Object({ status: Type.String() });

export const healthRoutes = (store: Store): FastifyPluginAsyncTypebox =>
  async function health(app) {
    app.get('/healthz', { schema: { tags: ['Health'], summary: 'The process is up', response: { 200: Status } } }, async () => ({
      status: 'ok',
    }));
    app.get(
      '/readyz',
      { schema: { tags: ['Health'], summary: 'The database answers', response: { 200: Status, 503: Status } } },
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
