import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.ts';
import type { Store } from '../../store/db.ts';
import { SharedRateLimitStore } from './rate-limit-store.ts';

const MINUTE_MS = 60_000;
const AUTH_BUCKET = 'auth:';
/** Addresses remembered as over their failure limit, at most (the oldest are forgotten first). */
const MAX_BLOCKED = 100_000;

export interface RateLimitSettings {
  /** Requests per API key (or pod token) per minute; 0 turns the limit off. */
  perKeyPerMinute: number;
  /** Failed authentications per client address per minute before 429; 0 turns it off. */
  authFailuresPerMinute: number;
  /** `POST /api/v1/runner/register` per client address per minute; 0 turns it off. */
  registerPerMinute: number;
  /** PostgreSQL: how often this replica adds its counts to the shared ones (default 200 ms). */
  flushIntervalMs?: number;
}

/** The three limits (docs/api.md "Rate limits"), each one limit across replicas on PostgreSQL. */
export interface RateLimits {
  /** After authentication: 429 once the key has used its minute (nothing to wait for when the limit is off). */
  perKey(request: FastifyRequest, keyId: number): Promise<void> | undefined;
  /**
   * After a credential was refused: 429 while the client address is over its failure limit,
   * decided from memory (no lookup, no promise).
   */
  refuseIfBlocked(request: FastifyRequest): void;
  /** An authentication failed: counted against the client address. */
  authFailed(request: FastifyRequest): Promise<void>;
  /** `POST /api/v1/runner/register`: counted against the client address, 429 beyond the limit. */
  register(request: FastifyRequest): Promise<void>;
}

type Limiter = ReturnType<FastifyInstance['createRateLimit']>;

const limited = (what: string, ttlMs: number) =>
  new AppError('RATE_LIMITED', `rate limit exceeded: ${what}`, { retryAfterSeconds: Math.max(1, Math.ceil(ttlMs / 1000)) });

/**
 * Registers `@fastify/rate-limit` with no route limits of its own (the limits run inside the auth
 * hooks, where the key or the failure is known) and a store chosen by the database: shared
 * through PostgreSQL, in memory (the plugin's own) on SQLite, where there is one replica.
 */
export async function registerRateLimits(app: FastifyInstance, store: Store, settings: RateLimitSettings): Promise<RateLimits> {
  const shared = store.sharedByReplicas ? new SharedRateLimitStore(store, settings.flushIntervalMs ?? 200, app.log) : null;
  await app.register(rateLimit, { global: false, ...(shared ? { store: shared.asStoreClass() } : {}) });
  if (shared) app.addHook('onClose', () => shared.close());

  // IPv6 clients are counted per /64 (one host usually holds a whole /64), IPv4-mapped as IPv4.
  const address = (request: FastifyRequest) => normalizeIP(request.ip);
  const limiter = (max: number, bucket: (request: FastifyRequest) => string): Limiter | null =>
    max > 0 ? app.createRateLimit({ max, timeWindow: MINUTE_MS, keyGenerator: bucket }) : null;

  const perKey = limiter(settings.perKeyPerMinute, (request) => `key:${request.principal.keyId}`);
  const authFailures = limiter(settings.authFailuresPerMinute, (request) => `${AUTH_BUCKET}${address(request)}`);
  const registrations = limiter(settings.registerPerMinute, (request) => `register:${address(request)}`);
  /** Address → until when it is refused, for addresses that used up their failures. */
  const blocked = new Map<string, number>();
  const block = (key: string, until: number) => {
    blocked.delete(key);
    if (blocked.size >= MAX_BLOCKED) blocked.delete(blocked.keys().next().value!);
    blocked.set(key, until);
  };
  // Failures counted by other replicas block the address here as soon as a flush shows them.
  if (shared) {
    shared.onOverLimit = (bucket, until) => {
      if (bucket.startsWith(AUTH_BUCKET)) block(bucket.slice(AUTH_BUCKET.length), until);
    };
  }

  return {
    perKey(request, keyId) {
      if (!perKey) return undefined;
      return perKey(request).then((result) => {
        if (!result.isAllowed && result.isExceeded) {
          throw limited(`${settings.perKeyPerMinute} requests per minute for API key ${keyId}`, result.ttl);
        }
      });
    },

    refuseIfBlocked(request) {
      if (blocked.size === 0) return;
      const key = address(request);
      const until = blocked.get(key);
      if (until === undefined) return;
      const left = until - Date.now();
      if (left > 0) throw limited(`${settings.authFailuresPerMinute} failed authentications per minute from this address`, left);
      blocked.delete(key);
    },

    async authFailed(request) {
      if (!authFailures) return;
      const result = await authFailures(request);
      if (result.isAllowed || result.remaining > 0) return;
      block(address(request), Date.now() + result.ttl);
    },

    async register(request) {
      if (!registrations) return;
      const result = await registrations(request);
      if (!result.isAllowed && result.isExceeded) {
        throw limited(`${settings.registerPerMinute} runner registrations per minute from this address`, result.ttl);
      }
    },
  };
}

/**
 * Runs `authenticate`. A credential that verifies is let through whatever else came from its
 * address: a pod (or anyone) sharing the address cannot lock other clients out by failing
 * (docs/api.md "Rate limits"). One it refuses (401 INVALID_API_KEY) is 429 while the address is
 * over its failure limit, and otherwise counts as a failure of the address. A missing credential
 * costs no lookup and is not counted.
 */
export function countingFailures<T>(limits: RateLimits, request: FastifyRequest, authenticate: () => Promise<T>): Promise<T> {
  // A rejection handler rather than an async wrapper: a credential that verifies pays nothing here.
  return authenticate().catch(async (error: unknown) => {
    if (error instanceof AppError && error.code === 'INVALID_API_KEY') {
      limits.refuseIfBlocked(request);
      await limits.authFailed(request);
    }
    throw error;
  });
}
