import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Authenticator, Principal } from '../../domain/auth/authenticate.ts';
import { grants, type Scope } from '../../protocol/scopes.ts';
import { AppError } from '../../errors.ts';
import { countingFailures, type RateLimits } from './rate-limit.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a route requires; org routes without one are refused, unless `anyScope` says any credential will do. */
    scope?: Scope;
    /** Instead of `scope`: the key needs at least one of these (the event stream, whose types each have their own scope). */
    anyScope?: readonly Scope[];
    /** Any valid credential of the organization may call the route (it tells the caller about itself: /auth/whoami). */
    anyCredential?: boolean;
    /** Creating POSTs honour Idempotency-Key. */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    principal: Principal;
  }
}

/** `X-API-Key` wins over `Authorization: Bearer` (scheme word case-insensitive). */
export function presentedKey(request: FastifyRequest): string | null {
  const header = request.headers['x-api-key'];
  const apiKey = Array.isArray(header) ? header[0] : header;
  if (apiKey) return apiKey.trim();
  const authorization = request.headers.authorization;
  if (!authorization) return null;
  const match = /^bearer\s+(.+)$/i.exec(authorization.trim());
  return match ? match[1].trim() : null;
}

/**
 * The order of checks (docs/api.md "Authentication") for every route under /orgs/{org}:
 * 401 (no, unknown, expired or revoked key) → 429 → 404 (unknown or foreign org) → 403 (scope).
 * A key refused from a client address over its limit of failed authentications is 429 rather than
 * 401; a key that verifies is never refused for its address.
 * It runs on onRequest, before the body is read, so 400s come after all of these.
 */
export function registerOrgAuth(app: FastifyInstance, deps: { authenticator: Authenticator; limits: RateLimits }): void {
  // A callback hook: a key verified within the last second (the steady case) costs no promise.
  app.addHook('onRequest', (request, _reply, done) => {
    const token = presentedKey(request);
    if (!token) return done(new AppError('AUTH_REQUIRED', 'an API key is required (X-API-Key header or Authorization: Bearer)'));
    const known = deps.authenticator.cached(token);
    let pending: Promise<void> | undefined;
    let refused: unknown;
    try {
      pending = known
        ? admit(request, known)
        : countingFailures(deps.limits, request, () => deps.authenticator.authenticate(token)).then((principal) => admit(request, principal));
    } catch (error) {
      refused = error;
    }
    if (refused !== undefined) return done(refused as Error);
    if (pending === undefined) return done();
    pending.then(() => done(), done);
  });

  /** After authentication: the rate limit, then the organization and the scope; a promise only when the limit must be counted. */
  function admit(request: FastifyRequest, principal: Principal): Promise<void> | undefined {
    request.principal = principal;
    const limited = deps.limits.perKey(request, principal.keyId);
    if (limited) return limited.then(() => authorize(request, principal));
    authorize(request, principal);
    return undefined;
  }
}

/** 404 for another organization's key, then 403 without the route's scope (docs/api.md "Authentication"). */
function authorize(request: FastifyRequest, principal: Principal): void {
  const { org } = request.params as { org?: string };
  // The key is valid, so saying it belongs elsewhere tells nothing new; which organization it
  // belongs to, or whether the named one exists, stays unsaid (docs/api.md "Authentication").
  if (principal.org.slug !== org) throw new AppError('NOT_FOUND', 'organization not found: this API key belongs to another organization');
  const config = request.routeOptions.config;
  if (config.anyCredential) return;
  const anyScope = config.anyScope;
  if (anyScope) {
    if (!anyScope.some((s) => grants(principal.scopes, s))) {
      throw new AppError('INSUFFICIENT_SCOPE', `this API key needs one of the scopes ${anyScope.join(', ')}`, { required_scopes: [...anyScope] });
    }
    return;
  }
  const scope = config.scope;
  if (!scope) throw new Error(`route ${request.routeOptions.url} declares no scope`);
  if (!grants(principal.scopes, scope)) {
    throw new AppError('INSUFFICIENT_SCOPE', `this API key lacks the ${scope} scope`, { required_scopes: [scope] });
  }
}
