/**
 * Verified API keys are cached for KEY_CACHE_MS per replica (src/domain/auth/authenticate.ts;
 * docs/decisions.md "Storage and performance"): revoking through this replica takes
 * effect at once; a revocation this replica did not see (another replica's, written straight to
 * the database here) takes effect once KEY_CACHE_MS have passed since the key was verified;
 * expiry is checked on every request, cached or not; a wrong key is never accepted because a key
 * with the same prefix is cached; `last_used_at` is written on the first use and then at most
 * once a minute. Every test drives the app's injected clock; the cache reads only that clock.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as admin from '../../src/domain/admin/service.ts';
import { Authenticator, KEY_CACHE_MS } from '../../src/domain/auth/authenticate.ts';
import { SCOPES } from '../../src/protocol/scopes.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { waitFor } from '../helpers/runner-process.ts';

const START = Date.parse('2026-03-01T12:00:00.000Z');

describe.each(DATABASES)('API key cache on %s', (kind) => {
  let t: TestApp;
  let clock: number;

  beforeEach(async () => {
    clock = START;
    t = await startTestApp(kind, { now: () => clock });
  });
  afterEach(async () => t?.close());

  const list = (key: string, header: 'x-api-key' | 'bearer' = 'x-api-key'): Promise<LightMyRequestResponse> =>
    header === 'x-api-key'
      ? t.request({ method: 'GET', url: t.path('/tickets'), key })
      : t.request({ method: 'GET', url: t.path('/tickets'), key: null, headers: { authorization: `Bearer ${key}` } });

  const expectAccepted = async (key: string, header?: 'x-api-key' | 'bearer') => {
    const res = await list(key, header);
    expect(res.statusCode, `at +${clock - START} ms: ${res.body}`).toBe(200);
  };
  const expectRefused = async (key: string, header?: 'x-api-key' | 'bearer') => {
    const res = await list(key, header);
    expect(res.statusCode, `at +${clock - START} ms: ${res.body}`).toBe(401);
    expect((res.json() as { code: string }).code).toBe('INVALID_API_KEY');
  };

  const revokeInDatabase = (id: number) => t.store.db.updateTable('api_keys').set({ revoked_at: clock }).where('id', '=', id).execute();

  const lastUsedAt = async (id: number): Promise<number | null> => {
    const row = await t.store.db.selectFrom('api_keys').select('last_used_at').where('id', '=', id).executeTakeFirstOrThrow();
    return row.last_used_at === null ? null : Number(row.last_used_at);
  };

  it('KEY_CACHE_MS is 1 s, as documented', () => {
    expect(KEY_CACHE_MS).toBe(1_000);
  });

  it('a key revoked through DELETE /api/v1/admin/orgs/acme/api-keys/:id is refused at once, though it was verified a moment ago', async () => {
    const { id, key } = await t.issueKey(SCOPES);
    await expectAccepted(key);
    await expectAccepted(key, 'bearer');
    const revoke = await t.request({
      method: 'DELETE',
      url: `/api/v1/admin/orgs/acme/api-keys/${id}`,
      key: null,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(revoke.statusCode, revoke.body).toBe(200);
    // Same instant on the injected clock: the verification is well within KEY_CACHE_MS.
    await expectRefused(key);
    await expectRefused(key, 'bearer');
    clock += KEY_CACHE_MS;
    await expectRefused(key);
    // Another key of the same organization is not affected.
    await expectAccepted(t.key);
  });

  it('a key revoked in the database by someone else (another replica) works until KEY_CACHE_MS after its verification, then is refused', async () => {
    const { id, key } = await t.issueKey(SCOPES);
    await expectAccepted(key); // verified at START
    await revokeInDatabase(id);
    await expectAccepted(key); // cached
    clock = START + KEY_CACHE_MS / 2;
    await expectAccepted(key); // uses within the window do not extend it…
    clock = START + KEY_CACHE_MS - 1;
    await expectAccepted(key);
    clock = START + KEY_CACHE_MS; // …which ends KEY_CACHE_MS after the verification
    await expectRefused(key);
    await expectRefused(key, 'bearer');
    clock += 10 * KEY_CACHE_MS;
    await expectRefused(key);
  });

  it('a key revoked in the database before it was ever verified here is refused at once', async () => {
    const { id, key } = await t.issueKey(SCOPES);
    await revokeInDatabase(id);
    await expectRefused(key);
  });

  it('a key verified again after the window is cached again for KEY_CACHE_MS from then', async () => {
    const { id, key } = await t.issueKey(SCOPES);
    await expectAccepted(key); // verified at START
    clock = START + 5 * KEY_CACHE_MS + 123;
    const second = clock;
    await expectAccepted(key); // read again: verified at `second`
    await revokeInDatabase(id);
    clock = second + KEY_CACHE_MS - 1;
    await expectAccepted(key);
    clock = second + KEY_CACHE_MS;
    await expectRefused(key);
  });

  it('a cached key is refused from the instant it expires, though its cache window has not ended', async () => {
    const expiresAt = START + KEY_CACHE_MS / 2;
    const { key } = await t.issueKey(SCOPES, { expiresAt: new Date(expiresAt).toISOString() });
    await expectAccepted(key); // verified and cached at START, cache window until START + KEY_CACHE_MS
    clock = expiresAt - 1;
    await expectAccepted(key);
    clock = expiresAt;
    await expectRefused(key);
    await expectRefused(key, 'bearer');
    clock = START + KEY_CACHE_MS - 1;
    await expectRefused(key);
    clock = START + 10 * KEY_CACHE_MS;
    await expectRefused(key);
  });

  it('a wrong key stays refused, also when a key with the same prefix is cached', async () => {
    const { key } = await t.issueKey(SCOPES);
    const sameTwelveChars = key.slice(0, -1) + (key.at(-1) === 'a' ? 'b' : 'a');
    const unknown = `drv_${'Q'.repeat(key.length - 4)}`;
    await expectRefused(sameTwelveChars);
    await expectRefused(unknown);
    await expectAccepted(key); // the real one is now cached
    await expectRefused(sameTwelveChars);
    await expectRefused(unknown);
    await expectRefused(`${key}x`);
    await expectRefused(sameTwelveChars, 'bearer');
    await expectAccepted(key);
  });

  it('last_used_at is written on the first use, not again by later uses within a minute, and again after one', async () => {
    const { id, key } = await t.issueKey(SCOPES);
    expect(await lastUsedAt(id)).toBeNull();
    await expectAccepted(key);
    // Written off the request path.
    await waitFor(async () => (await lastUsedAt(id)) === START, { what: 'last_used_at = first use' });

    for (const offset of [1, KEY_CACHE_MS - 1, KEY_CACHE_MS, 10 * KEY_CACHE_MS, 59_999]) {
      clock = START + offset; // cached and re-verified uses alike
      await expectAccepted(key);
    }
    expect(await lastUsedAt(id)).toBe(START);

    clock = START + 60_000;
    await expectAccepted(key);
    await waitFor(async () => (await lastUsedAt(id)) === START + 60_000, { what: 'last_used_at = a minute later' });
  });
});

/**
 * A request whose key lookup is still in flight while the key is revoked on this replica.
 * The Authenticator reads the key through a database handle whose results are held back until
 * `release()`, so the interleaving is exact: the lookup has read the key (not revoked yet), then
 * the revocation completes (and forgets the key), then the lookup's result arrives.
 */
describe.each(DATABASES)('revocation racing a key lookup in flight on %s', (kind) => {
  let t: TestApp;
  const clock = START;

  beforeEach(async () => {
    t = await startTestApp(kind, { now: () => clock });
  });
  afterEach(async () => t?.close());

  /**
   * `target`, with every `execute…()` of the query builders it hands out held back: `read` resolves
   * once a query's result is in (the query has run), the result reaches the caller after `gate`.
   */
  function heldBack<T extends object>(target: T, gate: Promise<void>, read: () => void): T {
    return new Proxy(target, {
      get(object, property) {
        const value = Reflect.get(object, property, object) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          const result = (value as (...a: unknown[]) => unknown).apply(object, args);
          if (typeof property === 'string' && property.startsWith('execute')) {
            return Promise.resolve(result).then(async (rows) => {
              read();
              await gate;
              return rows;
            });
          }
          return result !== null && typeof result === 'object' && 'execute' in result ? heldBack(result, gate, read) : result;
        };
      },
    });
  }

  // A verification in flight during the revocation is not remembered (a revocation moves the
  // authenticator's generation), so no request after the revocation is accepted.
  it('a key revoked while its lookup is in flight is refused by every request that starts after the revocation', async () => {
    const { id, key } = await t.issueKey(SCOPES);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let keyRead!: () => void;
    const read = new Promise<void>((resolve) => (keyRead = resolve));
    const authenticator: Authenticator = new Authenticator({ ...t.ctx, store: { ...t.store, db: heldBack(t.store.db, gate, keyRead) } });

    const inFlight = authenticator.authenticate(key);
    await read; // the lookup has read the key (not revoked yet); its result is held back
    await admin.revokeApiKey({ ...t.ctx, apiKeyRevoked: (keyId) => authenticator.forget(keyId) }, 'acme', id);
    release();
    // The request that was in flight may still pass: it began before the revocation.
    await expect(inFlight).resolves.toMatchObject({ kind: 'api_key', keyId: id });
    // Any request after the revocation completed must not (same instant on the injected clock).
    await expect(authenticator.authenticate(key)).rejects.toMatchObject({ code: 'INVALID_API_KEY' });
  });
});
