import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { DomainContext } from '../../domain/context.ts';
import { listRunDeliveries, redeliverRun, type DeliveryWithAttempts } from '../../domain/loops/deliveries.ts';
import { optionalBody } from '../plugins/optional-body.ts';
import { IdempotencyHeaders, clampLimit, errorResponses, iso, isoOrNull } from '../schemas/common.ts';
import * as s from '../schemas/loops.ts';

const tags = ['Loops'];

function deliveryView({ delivery, attempts }: DeliveryWithAttempts) {
  return {
    id: delivery.id,
    webhook_id: delivery.event_id,
    url: delivery.url,
    status: delivery.status,
    attempt_count: delivery.attempts,
    next_attempt_at: delivery.status === 'pending' ? isoOrNull(delivery.next_attempt_at) : null,
    created_at: iso(delivery.created_at),
    updated_at: iso(delivery.updated_at),
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      attempted_at: iso(a.attempted_at),
      status_code: a.status_code,
      error: a.error,
      duration_ms: a.duration_ms,
    })),
  };
}

/** A run's callback deliveries and their redelivery (docs/decisions.md), served under both loop prefixes. */
export const loopDeliveryRoutes = (ctx: DomainContext): FastifyPluginAsyncTypebox =>
  async function loopDeliveries(app) {
    app.get(
      '/loops/:slug/runs/:run_id/deliveries',
      {
        config: { scope: 'loops:read' },
        schema: {
          tags,
          operationId: 'listLoopRunDeliveries',
          summary: "A run's callback deliveries and their attempts, newest first",
          params: s.RunParams,
          querystring: s.ListDeliveriesQuery,
          response: { 200: Type.Object({ deliveries: Type.Array(Type.Ref('WebhookDelivery')), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() }), ...errorResponses() },
        },
      },
      async (request) => {
        const limit = clampLimit(request.query.limit ?? 20, 100);
        const offset = request.query.offset ?? 0;
        const { items, total } = await listRunDeliveries(ctx, request.principal.org.id, request.params.slug, request.params.run_id, { limit, offset });
        return { deliveries: items.map(deliveryView), total, limit, offset };
      },
    );

    app.post(
      '/loops/:slug/runs/:run_id/redeliver',
      {
        config: { scope: 'loops:write', idempotent: true },
        schema: {
          tags,
          operationId: 'redeliverLoopRun',
          headers: IdempotencyHeaders,
          summary: "Queue a new delivery of the run's callback event (same body and webhook-id) to the loop's callback_url",
          params: s.RunParams,
          body: s.EmptyBody,
          response: { 201: Type.Object({ delivery: Type.Ref('WebhookDelivery') }), ...errorResponses(409) },
        },
        preValidation: optionalBody,
      },
      async (request, reply) => {
        const delivery = await redeliverRun(ctx, request.principal.org.id, request.params.slug, request.params.run_id);
        return reply.code(201).send({ delivery: deliveryView(delivery) });
      },
    );
  };
