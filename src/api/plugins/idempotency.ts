import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DomainContext } from '../../domain/context.ts';
import { AppError, invalid } from '../../errors.ts';
import { isUniqueViolation } from '../../store/db.ts';
import * as keys from '../../store/idempotency.ts';

declare module 'fastify' {
  interface FastifyRequest {
    idempotency: { apiKeyId: number; key: string } | null;
  }
}

function fingerprint(methodPath: string, body: unknown): string {
  return crypto.createHash('sha256').update(methodPath).update('\n').update(JSON.stringify(body ?? null)).digest('hex');
}

/**
 * `Idempotency-Key` on creating POSTs (routes with `config.idempotent`), per API key:
 * the first request is recorded as in progress, its response is stored, and a repeat with
 * the same body replays it; a different body or a still-running first request is 409.
 * 5xx responses are not stored, so the client may retry them.
 */
export function registerIdempotency(app: FastifyInstance, ctx: DomainContext): void {
  app.decorateRequest('idempotency', null);

  const preHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers['idempotency-key'];
    if (header === undefined) return;
    const key = Array.isArray(header) ? header[0] : header;
    if (key.length === 0 || key.length > 255) throw invalid('Idempotency-Key', 'must be 1 to 255 characters');
    const apiKeyId = request.principal.keyId;
    const methodPath = `${request.method} ${request.url.split('?')[0]}`;
    const requestHash = fingerprint(methodPath, request.body);
    const db = ctx.store.db;

    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await keys.insertIdempotencyKey(db, { api_key_id: apiKeyId, key, method_path: methodPath, request_hash: requestHash, created_at: ctx.now() });
        request.idempotency = { apiKeyId, key };
        return;
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
      }
      const existing = await keys.findIdempotencyKey(db, apiKeyId, key);
      if (!existing) continue;
      if (existing.created_at < ctx.now() - keys.IDEMPOTENCY_TTL_MS) {
        await keys.deleteIdempotencyKey(db, apiKeyId, key);
        continue;
      }
      if (existing.request_hash !== requestHash) {
        throw new AppError('IDEMPOTENCY_MISMATCH', 'this Idempotency-Key was used with a different request');
      }
      if (existing.state !== 'done') {
        throw new AppError('IDEMPOTENCY_IN_PROGRESS', 'a request with this Idempotency-Key is still in progress');
      }
      return reply
        .code(existing.status_code ?? 200)
        .header('idempotent-replayed', 'true')
        .type('application/json')
        .send(existing.response_body ?? '');
    }
    throw new AppError('IDEMPOTENCY_IN_PROGRESS', 'a request with this Idempotency-Key is still in progress');
  };

  const onSend = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const pending = request.idempotency;
    if (!pending) return payload;
    request.idempotency = null;
    if (reply.statusCode >= 500 || typeof payload !== 'string') {
      await keys.deleteIdempotencyKey(ctx.store.db, pending.apiKeyId, pending.key);
    } else {
      await keys.completeIdempotencyKey(ctx.store.db, pending.apiKeyId, pending.key, reply.statusCode, payload);
    }
    return payload;
  };

  // Only the routes that declare `idempotent` (creating POSTs) carry the hooks; reads pay nothing.
  app.addHook('onRoute', (route) => {
    if (!route.config?.idempotent) return;
    route.preHandler = [...asList(route.preHandler), preHandler];
    route.onSend = [...asList(route.onSend), onSend];
  });
}

const asList = <T>(hooks: T | T[] | undefined): T[] => (hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]);
