import type { FastifyInstance } from 'fastify';
import { hashSecret, sameHash } from '../../domain/auth/keys.ts';
import { AppError } from '../../errors.ts';
import { countingFailures, type RateLimits } from './rate-limit.ts';

/**
 * Admin routes take `Authorization: Bearer <admin token>`, compared in constant time. A wrong
 * token counts as a failed authentication of the client address.
 */
export function registerAdminAuth(app: FastifyInstance, adminToken: string, limits: RateLimits): void {
  const expected = hashSecret(adminToken);
  app.addHook('onRequest', async (request) => {
    const match = /^bearer\s+(.+)$/i.exec(request.headers.authorization?.trim() ?? '');
    if (!match) throw new AppError('AUTH_REQUIRED', 'the admin token is required (Authorization: Bearer <admin token>)');
    await countingFailures(limits, request, async () => {
      if (!sameHash(hashSecret(match[1].trim()), expected)) throw new AppError('INVALID_API_KEY', 'the admin token is not valid');
    });
  });
}
