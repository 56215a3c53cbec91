import { AppError } from '../../errors.ts';
import { findApiKeysWithOrgByPrefix, touchApiKey } from '../../store/api-keys.ts';
import type { OrgRow } from '../../store/schema.ts';
import { findOrgById } from '../../store/orgs.ts';
import { findPodsByTokenPrefix } from '../../store/pods.ts';
import { ACTIVE_POD_STATUSES } from '../../protocol/enums.ts';
import { POD_TOKEN_PREFIX_LENGTH, POD_TOKEN_SCOPES } from '../pods/model.ts';
import type { DomainContext } from '../context.ts';
import { hashSecret, keyPrefix, looksLikeApiKey, sameHash } from './keys.ts';

/** Who is calling: an API key or a pod's token, its organization and what it may do. */
export type Principal =
  | {
      readonly kind: 'api_key';
      readonly keyId: number;
      readonly keyName: string;
      /** The person the key belongs to, if any. */
      readonly user: { readonly id: number; readonly name: string } | null;
      readonly org: OrgRow;
      readonly scopes: readonly string[];
    }
  | {
      readonly kind: 'pod';
      /** Negative pod id: pod tokens share the per-caller tables (rate limit, idempotency) with keys. */
      readonly keyId: number;
      readonly podKey: string;
      readonly org: OrgRow;
      readonly scopes: readonly string[];
    };

const TOUCH_INTERVAL_MS = 60_000;
/**
 * How long a verified API key is trusted without reading it again. Revoking through this replica
 * takes effect at once (`forget`); another replica may still accept the key for this long.
 */
export const KEY_CACHE_MS = 1_000;
const KEY_CACHE_MAX = 10_000;

interface CachedKey {
  principal: Principal;
  keyExpiresAt: number | null;
  until: number;
}

/**
 * Resolves API keys to principals. A verified key is kept for KEY_CACHE_MS (by its hash, never
 * the key itself), so a client's steady stream of requests reads it about once a second.
 * `last_used_at` is written at most once a minute per key and replica, off the request path,
 * so reads do not turn into writes.
 */
export class Authenticator {
  private readonly lastTouched = new Map<number, number>();
  private readonly verified = new Map<string, CachedKey>();
  /** Moves with every revocation: a lookup that started before one is not cached. */
  private generation = 0;

  constructor(private readonly ctx: DomainContext) {}

  /**
   * The principal of an API key verified less than KEY_CACHE_MS ago, found without a promise (the
   * steady case of the request path); undefined when `authenticate` must decide: a key not cached,
   * a pod token, or a cached key that has expired since (which `authenticate` refuses).
   */
  cached(presented: string): Principal | undefined {
    if (!looksLikeApiKey(presented)) return undefined;
    const entry = this.verified.get(hashSecret(presented));
    const now = this.ctx.now();
    if (!entry || entry.until <= now || (entry.keyExpiresAt !== null && entry.keyExpiresAt <= now)) return undefined;
    this.touch(entry.principal.keyId, null, now);
    return entry.principal;
  }

  async authenticate(presented: string): Promise<Principal> {
    if (presented.startsWith('drvpod_')) return this.authenticatePod(presented);
    if (!looksLikeApiKey(presented)) throw new AppError('INVALID_API_KEY', 'the API key is not valid');
    const hash = hashSecret(presented);
    const now = this.ctx.now();
    const cached = this.verified.get(hash);
    if (cached && cached.until > now) {
      if (cached.keyExpiresAt !== null && cached.keyExpiresAt <= now) throw new AppError('INVALID_API_KEY', 'the API key has expired');
      this.touch(cached.principal.keyId, null, now);
      return cached.principal;
    }
    const generation = this.generation;
    const candidates = await findApiKeysWithOrgByPrefix(this.ctx.store.db, keyPrefix(presented));
    const key = candidates.find((c) => sameHash(c.key_hash, hash));
    if (!key) throw new AppError('INVALID_API_KEY', 'the API key is not valid');
    if (key.revoked_at !== null) throw new AppError('INVALID_API_KEY', 'the API key has been revoked');
    if (key.expires_at !== null && key.expires_at <= now) throw new AppError('INVALID_API_KEY', 'the API key has expired');
    this.touch(key.id, key.last_used_at, now);
    const principal: Principal = {
      kind: 'api_key',
      keyId: key.id,
      keyName: key.name,
      user: key.user_id !== null && key.user_name !== null ? { id: Number(key.user_id), name: key.user_name } : null,
      org: { id: key.org_id, slug: key.org_slug, name: key.org_name, ticket_prefix: key.org_ticket_prefix, created_at: key.org_created_at },
      scopes: JSON.parse(key.scopes) as string[],
    };
    // Not when a key was revoked while this lookup was in flight: it may have read the key before.
    if (generation === this.generation) this.remember(hash, { principal, keyExpiresAt: key.expires_at, until: now + KEY_CACHE_MS });
    return principal;
  }

  /** A key was revoked: this replica stops trusting it now (and lookups in flight are not kept). */
  forget(keyId: number): void {
    this.forgetWhere((principal) => principal.keyId === keyId);
  }

  /** An organization changed (name, ticket prefix): keys of it are read again with the new values. */
  forgetOrg(orgId: number): void {
    this.forgetWhere((principal) => principal.org.id === orgId);
  }

  private forgetWhere(matches: (principal: Principal) => boolean): void {
    this.generation++;
    for (const [hash, entry] of this.verified) if (matches(entry.principal)) this.verified.delete(hash);
  }

  private remember(hash: string, entry: CachedKey): void {
    this.verified.delete(hash);
    // Oldest out first: the map keeps insertion order.
    if (this.verified.size >= KEY_CACHE_MAX) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(hash, entry);
  }

  /** A pod's token works while its pod is active, with the pod scopes only. */
  private async authenticatePod(presented: string): Promise<Principal> {
    const hash = hashSecret(presented);
    const candidates = await findPodsByTokenPrefix(this.ctx.store.db, presented.slice(0, POD_TOKEN_PREFIX_LENGTH));
    const pod = candidates.find((c) => sameHash(c.token_hash, hash));
    if (!pod) throw new AppError('INVALID_API_KEY', 'the pod token is not valid');
    if (!ACTIVE_POD_STATUSES.includes(pod.status)) throw new AppError('INVALID_API_KEY', 'the pod token stopped working when its pod ended');
    const org = await findOrgById(this.ctx.store.db, pod.org_id);
    if (!org) throw new AppError('INVALID_API_KEY', 'the pod token is not valid');
    return { kind: 'pod', keyId: -pod.id, podKey: pod.key, org, scopes: POD_TOKEN_SCOPES };
  }

  private touch(keyId: number, storedLastUsed: number | null, now: number): void {
    const last = Math.max(storedLastUsed ?? 0, this.lastTouched.get(keyId) ?? 0);
    if (now - last < TOUCH_INTERVAL_MS) return;
    this.lastTouched.set(keyId, now);
    touchApiKey(this.ctx.store.db, keyId, now).catch(() => {
      // A missed last_used_at update is harmless; the next request retries it.
      this.lastTouched.delete(keyId);
    });
  }
}
