/**
 * The security matrix every resource's endpoints go through (docs/api.md "Authentication",
 * "Errors"): given the routes and the scope each needs, it checks a missing key
 * (401 AUTH_REQUIRED), malformed, unknown, revoked and expired keys (401 INVALID_API_KEY), keys without
 * the scope (403 INSUFFICIENT_SCOPE naming it), another organization's key and unknown organizations
 * (404, before 403), another organization's resource through our path (404, like a missing one), and
 * that the scope alone grants the route, through either header. Every refused request must leave the
 * snapshot exactly as it was. A file adds only what is particular to its resource.
 */
import crypto from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import * as admin from '../../src/domain/admin/service.ts';
import { grants, SCOPES, type Scope } from '../../src/protocol/scopes.ts';
import { ADMIN_TOKEN, type TestApp } from './app.ts';
import { expectError } from './errors.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface SecuredRoute<T> {
  name: string;
  method: Method;
  /** The scope it needs; none: any valid key of the organization. */
  scope?: Scope;
  /** The path below /orgs/{org}, for the resource it addresses (if any). */
  path: (target: T) => string;
  /** A valid body; a function gets a number unique per call (for names that must not repeat). */
  payload?: Record<string, unknown> | ((n: number) => Record<string, unknown>);
  /** The status of a successful call. */
  success: number;
  /** Whether it addresses one resource of the organization (so another org's one must be 404). */
  addresses: boolean;
  /** Whether a successful call changes its target (each successful call then gets a fresh one). */
  changes: boolean;
}

export interface SecurityMatrixSetup<T> {
  app: () => TestApp;
  /** The URL of `path` under organization `org` (default: the app's /api/v1/ext/orgs prefix). */
  url?: (path: string, org: string) => string;
  /** The app's clock (default Date.now), to expire keys. */
  now?: () => number;
  /** The other organization: its slug, a key holding every scope there, and its resource. */
  foreign: () => { org: string; key: string; target: T };
  /** The resource a call addresses: a fresh one when `fresh` (the call may change it). */
  target: (route: SecuredRoute<T>, fresh: boolean) => T | Promise<T>;
  /** A resource that does not exist. */
  missing: T;
  /** A read that `scope` grants (to see a key work before it is revoked). */
  probe: (scope: Scope | undefined) => string;
  /** Everything a refused request could change. */
  snapshot: () => Promise<unknown>;
  /** Checked after the refused requests of a row (e.g. that no provider was asked). */
  untouched?: () => void;
  /** Text no 404 may contain (names of the other organization's or our resources). */
  hidden?: string[];
  /** The scopes of a key for a route that needs none in particular (default: repos:read). */
  anyKey?: Scope[];
}

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const randomBase62 = (n: number): string => Array.from(crypto.randomBytes(n), (b) => BASE62[b % 62]).join('');

/** Values that are not keys at all, or not of an API key's shape. */
const MALFORMED_KEYS = [
  'garbage',
  'not-a-key',
  'drv_',
  'drv_short',
  'drv_garbage',
  `drv_${'a'.repeat(31)}`,
  `DRV_${randomBase62(40)}`,
  `sk_${randomBase62(40)}`,
  `drv_${randomBase62(20)}-${randomBase62(19)}`,
  `drv_${randomBase62(39)}é`,
  `Bearer drv_${randomBase62(40)}`,
  'drvpod_',
  `drvpod_${randomBase62(40)}`,
  `drvrun_${randomBase62(40)}`,
  `drvreg_${randomBase62(40)}`,
];
/** Well-formed keys nobody holds. */
const UNKNOWN_KEYS = [`drv_${randomBase62(40)}`, `drv_${'x'.repeat(40)}`, `drv_${'Z'.repeat(40)}`];

interface Send<T> {
  key?: string | null;
  org?: string;
  headers?: Record<string, string>;
  target?: T;
}

/** Registers the matrix's rows for every route, inside the caller's describe (after its beforeAll). */
export function securityMatrix<Target>(routes: SecuredRoute<Target>[], setup: SecurityMatrixSetup<Target>): void {
  const url = setup.url ?? ((path: string, org: string) => setup.app().path(path, org));
  const now = setup.now ?? Date.now;
  const anyKey = setup.anyKey ?? (['repos:read'] as Scope[]);
  let serial = 0;
  const keys = new Map<string, string>();
  /** A key of our organization holding exactly `scopes` (issued once). */
  const keyWith = async (scopes: readonly Scope[]): Promise<string> => {
    const name = [...scopes].sort().join(' ');
    if (!keys.has(name)) keys.set(name, (await setup.app().issueKey(scopes)).key);
    return keys.get(name)!;
  };

  const send = async (route: SecuredRoute<Target>, options: Send<Target> = {}): Promise<LightMyRequestResponse> => {
    const t = setup.app();
    const target = options.target ?? (await setup.target(route, false));
    const payload = typeof route.payload === 'function' ? route.payload(++serial) : route.payload;
    return t.request({
      method: route.method,
      url: url(route.path(target), options.org ?? t.org.slug),
      key: options.key,
      headers: options.headers,
      ...(payload === undefined ? {} : { payload }),
    });
  };

  /** Runs `refuse` and checks that nothing changed. */
  const refused = async (refuse: () => Promise<void>): Promise<void> => {
    const before = await setup.snapshot();
    await refuse();
    expect(await setup.snapshot()).toEqual(before);
    setup.untouched?.();
  };
  const notFound = (res: LightMyRequestResponse) => {
    const body = expectError(res, 404, 'NOT_FOUND');
    for (const text of setup.hidden ?? []) expect(res.body).not.toContain(text);
    return body;
  };
  /** Scopes that do not grant `scope`, each as its own key, and all of them in one key. */
  const lacking = (scope: Scope) => SCOPES.filter((s) => !grants([s], scope));

  describe.each(routes)('$name (security matrix)', (route) => {
    beforeAll(async () => {
      if (route.scope) for (const s of [route.scope, ...lacking(route.scope)]) await keyWith([s]);
    });

    it('without a key → 401 AUTH_REQUIRED, also on an unknown org', async () => {
      const t = setup.app();
      await refused(async () => {
        expectError(await send(route, { key: null }), 401, 'AUTH_REQUIRED');
        expectError(await send(route, { key: null, org: 'no-such-org' }), 401, 'AUTH_REQUIRED');
        for (const authorization of ['Bearer', 'Bearer    ', `Basic ${Buffer.from('u:p').toString('base64')}`, 'Basic dTpw', t.key]) {
          expectError(await send(route, { key: null, headers: { authorization } }), 401, 'AUTH_REQUIRED');
        }
      });
    });

    it('with a malformed or unknown key → 401 INVALID_API_KEY, in either header, before the org', async () => {
      const t = setup.app();
      await refused(async () => {
        for (const key of [...MALFORMED_KEYS, ...UNKNOWN_KEYS]) {
          expectError(await send(route, { key }), 401, 'INVALID_API_KEY');
          expectError(await send(route, { key: null, headers: { authorization: `Bearer ${key}` } }), 401, 'INVALID_API_KEY');
        }
        // Same prefix as a real key, a different secret: found by prefix, refused by hash; a real key cut or extended is another key.
        for (const key of [t.key.slice(0, -1) + (t.key.endsWith('a') ? 'b' : 'a'), `${t.key}x`, t.key.slice(0, -1)]) {
          expectError(await send(route, { key }), 401, 'INVALID_API_KEY');
        }
        // X-API-Key wins over Authorization: a bad X-API-Key beside a good bearer token is refused.
        for (const key of ['garbage', UNKNOWN_KEYS[0]]) expectError(await send(route, { key, headers: { authorization: `Bearer ${t.key}` } }), 401, 'INVALID_API_KEY');
        // 401 comes before 404: a bad key on an unknown org is still 401.
        expectError(await send(route, { key: 'garbage', org: 'no-such-org' }), 401, 'INVALID_API_KEY');
      });
    });

    it('with a revoked key (by the admin API or in the domain) → 401 INVALID_API_KEY', async () => {
      const t = setup.app();
      const scopes = route.scope ? [route.scope] : anyKey;
      const byApi = await t.issueKey(scopes);
      const inDomain = await t.issueKey(scopes);
      // The keys work before they are revoked (checked on a read, so nothing changes).
      for (const { key } of [byApi, inDomain]) expect((await t.request({ method: 'GET', url: url(setup.probe(route.scope), t.org.slug), key })).statusCode).toBe(200);
      const revoke = await t.request({ method: 'DELETE', url: `/api/v1/admin/orgs/${t.org.slug}/api-keys/${byApi.id}`, key: null, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(revoke.statusCode, revoke.body).toBe(200);
      await admin.revokeApiKey(t.ctx, t.org.slug, inDomain.id);
      await refused(async () => {
        for (const { key } of [byApi, inDomain]) {
          expectError(await send(route, { key }), 401, 'INVALID_API_KEY');
          expectError(await send(route, { key: null, headers: { authorization: `Bearer ${key}` } }), 401, 'INVALID_API_KEY');
          expectError(await send(route, { key, headers: { authorization: `Bearer ${t.key}` } }), 401, 'INVALID_API_KEY');
        }
      });
    });

    it('with an expired key → 401 INVALID_API_KEY, also on an unknown org', async () => {
      const t = setup.app();
      const { id, key } = await t.issueKey(route.scope ? [route.scope] : SCOPES);
      await t.store.db.updateTable('api_keys').set({ expires_at: now() - 1000 }).where('id', '=', id).execute();
      await refused(async () => {
        expectError(await send(route, { key }), 401, 'INVALID_API_KEY');
        expectError(await send(route, { key: null, headers: { authorization: `Bearer ${key}` } }), 401, 'INVALID_API_KEY');
        expectError(await send(route, { key, org: 'no-such-org' }), 401, 'INVALID_API_KEY');
      });
    });

    if (route.scope) {
      const scope = route.scope;
      it(`with a key lacking ${scope} → 403 INSUFFICIENT_SCOPE naming it, before the resource is looked up`, async () => {
        await refused(async () => {
          const without = [await keyWith(lacking(scope)), ...(await Promise.all(lacking(scope).map((s) => keyWith([s]))))];
          for (const key of without) {
            const body = expectError(await send(route, { key, headers: { 'idempotency-key': 'scope-check' } }), 403, 'INSUFFICIENT_SCOPE');
            expect(body.required_scopes).toEqual([scope]);
            expect(body.error).toContain(scope);
          }
          // 403 comes before 404: the scope is checked before the addressed resource.
          const missing = expectError(await send(route, { key: without[0], target: setup.missing }), 403, 'INSUFFICIENT_SCOPE');
          expect(missing.required_scopes).toEqual([scope]);
        });
      });

      if (scope.endsWith(':write')) {
        const read = scope.replace(/:write$/, ':read') as Scope;
        it(`a ${read} key → 403 with required_scopes [${scope}], nothing written; X-API-Key is judged, not Bearer`, async () => {
          const t = setup.app();
          const readKey = await keyWith([read]);
          await refused(async () => {
            const body = expectError(await send(route, { key: readKey, headers: { 'idempotency-key': 'read-only' } }), 403, 'INSUFFICIENT_SCOPE');
            expect(body.required_scopes).toEqual([scope]);
            expect(body.error).toContain(scope);
            expectError(await send(route, { key: null, headers: { authorization: `bearer ${readKey}` } }), 403, 'INSUFFICIENT_SCOPE');
            expectError(await send(route, { key: readKey, headers: { authorization: `Bearer ${t.key}` } }), 403, 'INSUFFICIENT_SCOPE');
          });
        });
      }
    }

    it(`the scope alone grants it → ${route.success}, through X-API-Key or Authorization: Bearer (any case)`, async () => {
      const t = setup.app();
      const fresh = () => setup.target(route, route.changes);
      const own = await keyWith(route.scope ? [route.scope] : anyKey);
      const holders = [own, t.key];
      // A :write scope implies the :read scope of the same resource.
      if (route.scope?.endsWith(':read')) holders.push(await keyWith([route.scope.replace(/:read$/, ':write') as Scope]));
      const calls: Send<Target>[] = [
        ...holders.map((key) => ({ key })),
        ...['Bearer', 'bearer', 'BEARER'].map((scheme) => ({ key: null, headers: { authorization: `${scheme} ${own}` } })),
        { key: null, headers: { authorization: `bearer   ${t.key}  ` } },
        // A good X-API-Key wins over a bad bearer token.
        { key: own, headers: { authorization: `Bearer ${UNKNOWN_KEYS[0]}` } },
      ];
      for (const call of calls) {
        const res = await send(route, { ...call, target: await fresh() });
        expect(res.statusCode, `${JSON.stringify(call.headers ?? {})}: ${res.body}`).toBe(route.success);
      }
    });

    it("a key of another org on our path → 404 NOT_FOUND like an unknown org, before 403; nothing written", async () => {
      const t = setup.app();
      const foreign = setup.foreign();
      await refused(async () => {
        const theirs = notFound(await send(route, { key: foreign.key }));
        const unknown = notFound(await send(route, { org: 'no-such-org' }));
        const { request_id: _a, ...theirsRest } = theirs;
        const { request_id: _b, ...unknownRest } = unknown;
        expect(theirsRest).toEqual(unknownRest);
        const slug = t.org.slug;
        for (const org of [slug.toUpperCase(), `${slug}-`, slug.slice(0, -1), slug[0]]) notFound(await send(route, { org }));
        // Our keys on their path: 404, not 403 (never reveal that the org exists), also for their resource.
        const ours = [...(route.scope ? [await keyWith(lacking(route.scope)), await keyWith([route.scope])] : []), t.key];
        for (const key of ours) {
          notFound(await send(route, { key, org: foreign.org }));
          notFound(await send(route, { key, org: foreign.org, target: foreign.target }));
        }
      });
    });

    if (route.addresses) {
      it("another org's resource through our path with our key → 404 like a missing one, and it is unchanged", async () => {
        const foreign = setup.foreign();
        await refused(async () => {
          const theirs = notFound(await send(route, { target: foreign.target }));
          const missing = notFound(await send(route, { target: setup.missing }));
          expect(theirs.error).toBe(missing.error);
        });
        if (!route.changes) {
          // Its owner reaches it.
          const res = await send(route, { key: foreign.key, org: foreign.org, target: foreign.target });
          expect(res.statusCode, res.body).toBe(route.success);
        }
      });
    }
  });
}
