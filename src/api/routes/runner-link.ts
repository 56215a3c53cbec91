import type {} from '@fastify/websocket';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { DomainContext } from '../../domain/context.ts';
import { authenticateRunner, registerRunner } from '../../domain/runners/service.ts';
import { AppError } from '../../errors.ts';
import type { RunnerRow } from '../../store/schema-runners.ts';
import { Text, errorResponses } from '../schemas/common.ts';
import { countingFailures, type RateLimits } from '../plugins/rate-limit.ts';
import type { RunnerGateway } from '../../gateway/links.ts';
import { RunnerInfo } from '../../protocol/runner-link.ts';

declare module 'fastify' {
  interface FastifyRequest {
    runner: RunnerRow | null;
  }
}

const tags = ['Runner link'];

const RegisterBody = Type.Object(
  {
    token: Text({ minLength: 1, maxLength: 200 }),
    name: Text({ minLength: 1, maxLength: 100 }),
    // RunnerInfo's limits, with U+0000 refused as in every request string.
    labels: Type.Array(Text({ maxLength: 100 }), { maxItems: 50 }),
    max_pods: RunnerInfo.max_pods,
    version: Text({ maxLength: 100 }),
    os: Text({ maxLength: 100 }),
    arch: Text({ maxLength: 100 }),
  },
  { additionalProperties: false },
);

/** Where runners register (once) and connect (the WebSocket), under /api/v1/runner. */
export const runnerLinkRoutes = (ctx: DomainContext, gateway: RunnerGateway, limits: RateLimits): FastifyPluginAsyncTypebox =>
  async function runnerLink(app) {
    app.decorateRequest('runner', null);

    app.post(
      '/register',
      {
        schema: {
          tags,
          operationId: 'registerRunner', summary: 'Register a runner with a registration token; answers its own credential',
          security: [],
          body: RegisterBody,
          response: { 201: Type.Object({ runner_id: Type.Integer(), org: Type.String(), credential: Type.String() }), ...errorResponses() },
        },
        // Counted per client address before the body is read.
        onRequest: (request) => limits.register(request),
      },
      async (request, reply) => {
        const { runner, credential, org } = await registerRunner(ctx, request.body);
        return reply.code(201).send({ runner_id: runner.id, org, credential });
      },
    );

    app.route({
      method: 'GET',
      url: '/connect',
      schema: { hide: true },
      preValidation: async (request) => {
        const match = /^bearer\s+(.+)$/i.exec(request.headers.authorization?.trim() ?? '');
        if (!match) throw new AppError('AUTH_REQUIRED', 'a runner credential is required (Authorization: Bearer)');
        if (gateway.closing) throw new AppError('SERVICE_UNAVAILABLE', 'the server is shutting down; connect again shortly');
        request.runner = await countingFailures(limits, request, () => authenticateRunner(ctx, match[1].trim()));
      },
      wsHandler: (socket, request) => {
        gateway.attach(socket, request.runner!);
      },
      // A plain GET (no upgrade) gets the error body, not the plugin's empty 404.
      handler: async () => {
        throw new AppError('NOT_FOUND', 'this path takes WebSocket connections only (Upgrade: websocket)');
      },
    });
  };
