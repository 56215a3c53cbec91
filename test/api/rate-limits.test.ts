/**
 * Rate limits on @fastify/rate-limit (docs/decisions.md): per API key, failed authentication per client
 * address (429 for refused credentials after 30 failures a minute; a credential that verifies is
 * never refused for its address), runner
 * registration per address; 429 RATE_LIMITED with Retry-After. On PostgreSQL each is one limit
 * across replicas (two apps on one database here), not one per replica.
 */
import crypto from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp, type AppOptions } from '../../src/serve/build-app.ts';
import * as admin from '../../src/domain/admin/service.ts';
import { SCOPES } from '../../src/protocol/scopes.ts';
import { SecretBox } from '../../src/domain/secrets.ts';
import type { DatabaseKind, Store } from '../../src/store/db.ts';
import { ADMIN_TOKEN } from '../helpers/app.ts';
import { DATABASES, createTestStore } from '../helpers/databases.ts';
import { expectError } from '../helpers/errors.ts';
import { upgradeStatus } from '../helpers/runners.ts';
import { waitFor } from '../helpers/runner-process.ts';

/** Counts the queries that read `api_keys` (the lookup a failed authentication costs). */
class ApiKeyLookups implements KyselyPlugin {
  count = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (args.node.kind === 'SelectQueryNode' && JSON.stringify(args.node).includes('"api_keys"')) this.count++;
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

interface Replica {
  app: FastifyInstance;
  lookups: ApiKeyLookups;
  call(options: InjectOptions & { from?: string; key?: string | null }): Promise<LightMyRequestResponse>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** An app on `store` whose api_keys lookups are counted; requests come from `from` (default 10.0.0.1). */
async function replica(store: Store, options: Partial<AppOptions>, key: string): Promise<Replica> {
  const lookups = new ApiKeyLookups();
  const counted: Store = { ...store, db: store.db.withPlugin(lookups) };
  const app = await buildApp({ store: counted, adminToken: ADMIN_TOKEN, rateLimitPerMinute: 0, secrets: new SecretBox(crypto.randomBytes(32)), rateLimitFlushMs: 20, ...options });
  cleanups.push(() => app.close());
  return {
    app,
    lookups,
    call: ({ from = '10.0.0.1', key: presented = key, headers, ...rest }) =>
      app.inject({ ...rest, remoteAddress: from, headers: { ...(presented === null ? {} : { 'x-api-key': presented }), ...headers } }),
  };
}

async function database(kind: DatabaseKind) {
  const { store, database: db, cleanup } = await createTestStore(kind);
  cleanups.push(cleanup);
  const ctx = { store, now: Date.now };
  const org = await admin.createOrg(ctx, { slug: 'acme', name: 'Acme' });
  const { key } = await admin.issueApiKey(ctx, store.db, org.id, { name: 'all', scopes: SCOPES });
  return { store, key, open: () => db.open(), org };
}

const TICKETS = '/api/v1/ext/orgs/acme/tickets';
const badKey = () => 'drv_' + crypto.randomBytes(24).toString('hex');
const registration = (token: string) => ({ token, name: 'r', labels: [], max_pods: 1, version: '1', os: 'linux', arch: 'x64' });

describe.each(DATABASES)('rate limits on %s', (kind) => {
  it('failed authentication per address: 30 a minute, then 429 with Retry-After for bad keys; a key that verifies still gets in', async () => {
    const { store, key } = await database(kind);
    const a = await replica(store, { authFailuresPerMinute: 30 }, key);
    for (let i = 0; i < 30; i++) expectError(await a.call({ method: 'GET', url: TICKETS, key: badKey() }), 401, 'INVALID_API_KEY');
    const limited = await a.call({ method: 'GET', url: TICKETS, key: badKey() });
    expectError(limited, 429, 'RATE_LIMITED');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    for (let i = 0; i < 20; i++) expectError(await a.call({ method: 'GET', url: TICKETS, key: badKey() }), 429, 'RATE_LIMITED');
    expectError(await a.call({ method: 'GET', url: TICKETS, key: `drvpod_${'x'.repeat(40)}` }), 429, 'RATE_LIMITED');
    // The address is blocked, yet a key that verifies is served, and pays what it pays anywhere:
    // one lookup (then none while its verification is cached).
    const lookupsBefore = a.lookups.count;
    expect((await a.call({ method: 'GET', url: TICKETS })).statusCode).toBe(200);
    expect((await a.call({ method: 'GET', url: TICKETS })).statusCode).toBe(200);
    expect(a.lookups.count - lookupsBefore).toBeLessThanOrEqual(1);
    // A missing key is still 401 (it was never counted), and bad keys stay refused.
    expectError(await a.call({ method: 'GET', url: TICKETS, key: null }), 401, 'AUTH_REQUIRED');
    expectError(await a.call({ method: 'GET', url: TICKETS, key: badKey() }), 429, 'RATE_LIMITED');
    // Another address is not affected.
    expect((await a.call({ method: 'GET', url: TICKETS, from: '10.0.0.2' })).statusCode).toBe(200);
    expectError(await a.call({ method: 'GET', url: TICKETS, from: '10.0.0.2', key: badKey() }), 401, 'INVALID_API_KEY');
  });

  it('40 bad keys from 127.0.0.1, then a valid API key, the admin token and a runner link from it: each gets in', async () => {
    const { store, key } = await database(kind);
    const a = await replica(store, { authFailuresPerMinute: 30 }, key);
    const base = await a.app.listen({ host: '127.0.0.1', port: 0 });
    const get = (url: string, authorization: Record<string, string>) => fetch(`${base}${url}`, { headers: authorization });
    const adminAuth = { authorization: `Bearer ${ADMIN_TOKEN}` };
    // A runner registered beforehand (its link comes back after the flood, as a local runner's does).
    const issued = await fetch(`${base}/api/v1/admin/orgs/acme/runner-tokens`, { method: 'POST', headers: { ...adminAuth, 'content-type': 'application/json' }, body: '{}' });
    expect(issued.status).toBe(201);
    const { token } = (await issued.json()) as { token: string };
    const registered = await fetch(`${base}/api/v1/runner/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(registration(token)) });
    expect(registered.status).toBe(201);
    const { credential } = (await registered.json()) as { credential: string };

    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await get(TICKETS, { 'x-api-key': badKey() })).status);
    expect(statuses.slice(0, 30)).toEqual(Array(30).fill(401));
    expect(statuses.slice(30)).toEqual(Array(10).fill(429));
    // Every kind of refused credential from the address is 429 now...
    expect((await get('/api/v1/admin/orgs', { authorization: 'Bearer wrong-admin-token' })).status).toBe(429);
    expect(await upgradeStatus(base, 'drvrun_not-a-credential')).toBe(429);
    // ...and every credential that verifies is served.
    expect((await get(TICKETS, { 'x-api-key': key })).status).toBe(200);
    expect((await get('/api/v1/admin/orgs', adminAuth)).status).toBe(200);
    expect(await upgradeStatus(base, credential)).toBe(101);
  });

  it('a missing key is not a failure; wrong admin tokens and runner credentials are', async () => {
    const { store, key } = await database(kind);
    const a = await replica(store, { authFailuresPerMinute: 5 }, key);
    for (let i = 0; i < 10; i++) expectError(await a.call({ method: 'GET', url: TICKETS, key: null }), 401, 'AUTH_REQUIRED');
    for (let i = 0; i < 5; i++) {
      expectError(await a.call({ method: 'GET', url: '/api/v1/admin/orgs', key: null, headers: { authorization: 'Bearer wrong' } }), 401, 'INVALID_API_KEY');
    }
    expectError(await a.call({ method: 'GET', url: '/api/v1/admin/orgs', key: null, headers: { authorization: 'Bearer wrong' } }), 429, 'RATE_LIMITED');
    expect((await a.call({ method: 'GET', url: '/api/v1/admin/orgs', key: null, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).statusCode).toBe(200);
    // Runner credentials (the WebSocket route answers before upgrading).
    for (let i = 0; i < 5; i++) {
      expectError(await a.call({ method: 'GET', url: '/api/v1/runner/connect', key: null, from: '10.0.0.3', headers: { authorization: 'Bearer drvrun_nope' } }), 401, 'INVALID_API_KEY');
    }
    expectError(await a.call({ method: 'GET', url: '/api/v1/runner/connect', key: null, from: '10.0.0.3', headers: { authorization: 'Bearer drvrun_nope' } }), 429, 'RATE_LIMITED');
  });

  it('runner registration per address: 429 beyond the limit, before the body is read', async () => {
    const { store, key } = await database(kind);
    const a = await replica(store, { registerPerMinute: 3 }, key);
    for (let i = 0; i < 3; i++) {
      expectError(await a.call({ method: 'POST', url: '/api/v1/runner/register', key: null, payload: registration('drvreg_nope') }), 401, 'INVALID_API_KEY');
    }
    const limited = await a.call({ method: 'POST', url: '/api/v1/runner/register', key: null, payload: '{not json', headers: { 'content-type': 'application/json' } });
    expectError(limited, 429, 'RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expectError(await a.call({ method: 'POST', url: '/api/v1/runner/register', key: null, from: '10.0.0.2', payload: registration('drvreg_nope') }), 401, 'INVALID_API_KEY');
  });

  it('per API key: 429 with Retry-After; 0 turns every limit off', async () => {
    const { store, key } = await database(kind);
    const limitedApp = await replica(store, { rateLimitPerMinute: 4 }, key);
    for (let i = 0; i < 4; i++) expect((await limitedApp.call({ method: 'GET', url: TICKETS })).statusCode).toBe(200);
    const limited = await limitedApp.call({ method: 'GET', url: TICKETS, from: '10.0.0.7' });
    expectError(limited, 429, 'RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const open = await replica(store, {}, key);
    for (let i = 0; i < 50; i++) expect((await open.call({ method: 'GET', url: TICKETS, key: i % 2 ? key : badKey() })).statusCode).toBe(i % 2 ? 200 : 401);
  });
});

describe.skipIf(!process.env.DATABASE_URL)('rate limits are one limit across replicas on PostgreSQL', () => {
  /** Waits until the shared count of `bucket` is `hits` (both replicas have flushed what they counted). */
  const sharedHits = (store: Store, bucket: string, hits: number) =>
    waitFor(async () => {
      const rows = await store.db.selectFrom('rate_limit_hits').select(['hits']).where('bucket', '=', bucket).execute();
      return rows.reduce((sum, r) => sum + Number(r.hits), 0) === hits;
    }, { what: `${hits} shared hits of ${bucket}` });

  it('per API key: 6 requests through A and 4 through B use up a limit of 10 between them', async () => {
    const { store, key, open } = await database('postgres');
    const second = open();
    cleanups.push(() => second.close());
    const keyId = (await store.db.selectFrom('api_keys').select('id').executeTakeFirstOrThrow()).id;
    const a = await replica(store, { rateLimitPerMinute: 10 }, key);
    const b = await replica(second, { rateLimitPerMinute: 10 }, key);
    for (let i = 0; i < 6; i++) expect((await a.call({ method: 'GET', url: TICKETS })).statusCode).toBe(200);
    await sharedHits(store, `key:${keyId}`, 6);
    let allowedOnB = 0;
    for (let i = 0; i < 10; i++) {
      const res = await b.call({ method: 'GET', url: TICKETS });
      if (res.statusCode === 429) break;
      expect(res.statusCode).toBe(200);
      allowedOnB++;
      await sharedHits(store, `key:${keyId}`, 6 + allowedOnB);
    }
    expect(allowedOnB).toBe(4);
    // A hears of B's share at its next flush: its next request is refused, then stays refused.
    const nextOnA = await a.call({ method: 'GET', url: TICKETS });
    await sharedHits(store, `key:${keyId}`, 11 + 1);
    expectError(await a.call({ method: 'GET', url: TICKETS }), 429, 'RATE_LIMITED');
    expect([200, 429]).toContain(nextOnA.statusCode);
  });

  it('failed authentication: 20 failures through A and 10 through B block the address on both', async () => {
    const { store, key, open } = await database('postgres');
    const second = open();
    cleanups.push(() => second.close());
    const a = await replica(store, { authFailuresPerMinute: 30 }, key);
    const b = await replica(second, { authFailuresPerMinute: 30 }, key);
    for (let i = 0; i < 20; i++) expectError(await a.call({ method: 'GET', url: TICKETS, key: badKey() }), 401, 'INVALID_API_KEY');
    await sharedHits(store, 'auth:10.0.0.1', 20);
    for (let i = 0; i < 10; i++) expectError(await b.call({ method: 'GET', url: TICKETS, key: badKey() }), 401, 'INVALID_API_KEY');
    // Once B's flush shows 30 (its 10 and A's 20), B refuses the address's bad keys; a valid key still gets in.
    await sharedHits(store, 'auth:10.0.0.1', 30);
    expectError(await b.call({ method: 'GET', url: TICKETS, key: badKey() }), 429, 'RATE_LIMITED');
    expect((await b.call({ method: 'GET', url: TICKETS })).statusCode).toBe(200);
    // A learns the total with its next failure at the latest, then refuses the bad keys too.
    const first = await a.call({ method: 'GET', url: TICKETS, key: badKey() });
    expect([401, 429]).toContain(first.statusCode);
    await sharedHits(store, 'auth:10.0.0.1', first.statusCode === 401 ? 31 : 30);
    expectError(await a.call({ method: 'GET', url: TICKETS, key: badKey() }), 429, 'RATE_LIMITED');
    expect((await a.call({ method: 'GET', url: TICKETS })).statusCode).toBe(200);
  });

  it('runner registration: a limit of 3 holds across two replicas', async () => {
    const { store, key, open } = await database('postgres');
    const second = open();
    cleanups.push(() => second.close());
    const a = await replica(store, { registerPerMinute: 3 }, key);
    const b = await replica(second, { registerPerMinute: 3 }, key);
    const register = (r: Replica) => r.call({ method: 'POST', url: '/api/v1/runner/register', key: null, payload: registration('drvreg_nope') });
    expectError(await register(a), 401, 'INVALID_API_KEY');
    expectError(await register(a), 401, 'INVALID_API_KEY');
    await sharedHits(store, 'register:10.0.0.1', 2);
    expectError(await register(b), 401, 'INVALID_API_KEY');
    await sharedHits(store, 'register:10.0.0.1', 3);
    expectError(await register(b), 429, 'RATE_LIMITED');
  });
});
