/**
 * Streams end with their credential, and are capped per credential and per organization
 * (docs/events.md "Streams end with their credential"; docs/api.md "Stream caps"):
 *
 * - a revoked key's `/events` and output streams close within 5 s, whether it was revoked through
 *   this replica or behind its back (in the database, as another replica does); an expiring key's
 *   within 5 s of its expiry; a pod token's when its pod ends (terminated, or its runner deleted);
 *   on PostgreSQL, a stream on replica B closes when the key is revoked, or the pod terminated,
 *   through replica A;
 * - the 21st concurrent stream of a key is 429 TOO_MANY_STREAMS, and once one closes a new one is
 *   accepted; the organization's cap holds across its keys and pod tokens.
 *
 * Each close is awaited with the contract's 5 s as its deadline; nothing else is timed.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/serve/build-app.ts';
import { revokeApiKey } from '../../src/store/api-keys.ts';
import { SCOPES } from '../../src/protocol/scopes.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp, type TestAppOptions } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { expectError } from '../helpers/errors.ts';
import { insertRunner } from '../helpers/runners.ts';
import { waitFor } from '../helpers/runner-process.ts';
import { CLOSE_WITHIN_MS, closesWithin, openStream, type OpenStream } from '../helpers/sse.ts';

/** A stream the server has not ended (it still answers), checked by an event reaching it. */
async function stillOpen(stream: OpenStream, t: TestApp): Promise<void> {
  const before = stream.messages.length;
  const response = await t.request({ method: 'POST', url: t.path('/tickets'), payload: { type: 'task', title: 'still there?' } });
  expect(response.statusCode, response.body).toBe(201);
  await stream.waitFor(before + 1, CLOSE_WITHIN_MS);
}

describe.each(DATABASES)('streams and their credentials (%s)', (kind) => {
  let t: TestApp;
  let base: string;
  const streams: OpenStream[] = [];
  const closers: (() => Promise<void>)[] = [];

  const start = async (options: TestAppOptions = {}) => {
    t = await startTestApp(kind, options);
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  };
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    while (closers.length > 0) await closers.pop()!();
    await t.close();
  });

  const open = async (path: string, key: string, at = base) => {
    const stream = await openStream(`${at}${t.path(path)}`, { 'x-api-key': key });
    streams.push(stream);
    return stream;
  };
  const admin = (method: 'DELETE', path: string) => t.request({ method, url: `/api/v1/admin/orgs/acme${path}`, key: null, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });

  /** A pod placed on a runner row (no process behind it): its key and its token, read back as its runner would get it. */
  const pod = async (runnerId?: number) => {
    const runner = runnerId ?? (await insertRunner(t.store, t.org.id));
    const response = await t.request({ method: 'POST', url: t.path('/pods'), payload: { agent_slug: 'shell', runner_id: runner, agentfile_layer: 'PROMPT "sleep 600"' } });
    expect(response.statusCode, response.body).toBe(201);
    const key = (response.json() as { pod: { pod_key: string } }).pod.pod_key;
    const row = await t.store.db.selectFrom('pods').select('token_encrypted').where('key', '=', key).executeTakeFirstOrThrow();
    return { key, token: t.secrets.decrypt(row.token_encrypted), runnerId: runner };
  };

  describe('revocation', () => {
    beforeEach(() => start());

    it("a key revoked through the admin API: its /events and output streams close within 5 s; another key's stay", async () => {
      const { id, key } = await t.issueKey(SCOPES);
      const { key: podKey } = await pod();
      const events = await open('/events', key);
      const output = await open(`/pods/${podKey}/output/stream`, key);
      const other = await open('/events', t.key);
      expect([events.status, output.status, other.status]).toEqual([200, 200, 200]);
      expect((await admin('DELETE', `/api-keys/${id}`)).statusCode).toBe(200);
      await Promise.all([closesWithin(events), closesWithin(output)]);
      await stillOpen(other, t);
      const again = await open('/events', key);
      expect(again.status).toBe(401);
    });

    it('a key revoked behind this replica’s back (in the database) closes within 5 s', async () => {
      const { id, key } = await t.issueKey(SCOPES);
      const events = await open('/events', key);
      expect(events.status).toBe(200);
      await revokeApiKey(t.store.db, t.org.id, id, Date.now());
      await closesWithin(events);
    });

    it('an expiring key: its stream closes within 5 s of the expiry', async () => {
      const expiresAt = Date.now() + 1_500;
      const { key } = await t.issueKey(SCOPES, { expiresAt: new Date(expiresAt).toISOString() });
      const events = await open('/events', key);
      expect(events.status).toBe(200);
      await closesWithin(events, expiresAt + CLOSE_WITHIN_MS - Date.now());
      expect(Date.now()).toBeGreaterThanOrEqual(expiresAt);
    });

    it("a pod token's streams close within 5 s of its pod ending (terminated)", async () => {
      const { key: podKey, token } = await pod();
      const events = await open('/events', token);
      const sibling = await pod();
      const output = await open(`/pods/${sibling.key}/output/stream`, token);
      expect([events.status, output.status]).toEqual([200, 200]);
      const terminated = await t.request({ method: 'POST', url: t.path(`/pods/${podKey}/terminate`) });
      expect(terminated.statusCode, terminated.body).toBe(200);
      await Promise.all([closesWithin(events), closesWithin(output)]);
    });

    it("deleting a runner: the tokens of its pods stop, and their streams close within 5 s", async () => {
      const first = await pod();
      const second = await pod(first.runnerId);
      const streamsOfPods = [await open('/events', first.token), await open('/events', second.token)];
      const unrelated = await open('/events', t.key);
      expect((await admin('DELETE', `/runners/${first.runnerId}`)).statusCode).toBe(200);
      await Promise.all(streamsOfPods.map((stream) => closesWithin(stream)));
      await stillOpen(unrelated, t);
    });
  });

  describe('caps', () => {
    it('the 21st concurrent stream of a key is 429 TOO_MANY_STREAMS; after one closes, a new one is accepted', async () => {
      await start();
      const { key: podKey } = await pod();
      const open20 = await Promise.all(Array.from({ length: 20 }, (_, i) => open(i % 2 ? '/events' : `/pods/${podKey}/output/stream`, t.key)));
      expect(open20.map((s) => s.status)).toEqual(Array(20).fill(200));
      const refused = await t.request({ method: 'GET', url: t.path('/events') });
      const body = expectError(refused, 429, 'TOO_MANY_STREAMS');
      expect(body.error).toMatch(/API key already has 20 open streams/);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expectError(await t.request({ method: 'GET', url: t.path(`/pods/${podKey}/output/stream`) }), 429, 'TOO_MANY_STREAMS');
      // Another key of the organization is not affected.
      const { key: other } = await t.issueKey(SCOPES);
      expect((await open('/events', other)).status).toBe(200);
      // One closes (the client goes away): a new one is accepted once the server has seen it go.
      open20[0].close();
      const replacement = await waitFor(
        async () => {
          const stream = await open('/events', t.key);
          return stream.status === 200 ? stream : undefined;
        },
        { what: 'a stream accepted after one closed' },
      );
      expect(replacement.status).toBe(200);
    });

    it("the organization's cap counts every key's and pod token's streams", async () => {
      await start({ streamCaps: { perCredential: 2, perOrg: 3 } });
      const { key: second } = await t.issueKey(SCOPES);
      const { token } = await pod();
      expect((await open('/events', t.key)).status).toBe(200);
      expect((await open('/events', second)).status).toBe(200);
      expect((await open('/events', token)).status).toBe(200);
      const refused = expectError(await t.request({ method: 'GET', url: t.path('/events'), key: second }), 429, 'TOO_MANY_STREAMS');
      expect(refused.error).toMatch(/organization already has 3 open streams/);
      expectError(await t.request({ method: 'GET', url: t.path('/events'), key: token }), 429, 'TOO_MANY_STREAMS');
      // Another organization has its own.
      const globex = await t.createOrg('globex', 'GLX');
      const { key: globexKey } = await t.issueKey(SCOPES, { org: globex });
      const elsewhere = await openStream(`${base}${t.path('/events', 'globex')}`, { 'x-api-key': globexKey });
      streams.push(elsewhere);
      expect(elsewhere.status).toBe(200);
    });

    it('0 turns the caps off', async () => {
      await start({ streamCaps: { perCredential: 0, perOrg: 0 } });
      const many = await Promise.all(Array.from({ length: 25 }, () => open('/events', t.key)));
      expect(many.map((s) => s.status)).toEqual(Array(25).fill(200));
    });
  });

  describe.skipIf(kind !== 'postgres')('across replicas', () => {
    let b: FastifyInstance;
    let baseB: string;

    beforeEach(async () => {
      await start();
      const storeB = t.database.open();
      b = await buildApp({ store: storeB, adminToken: ADMIN_TOKEN, rateLimitPerMinute: 0, secrets: t.secrets });
      closers.push(async () => {
        await b.close();
        await storeB.close();
      });
      baseB = await b.listen({ host: '127.0.0.1', port: 0 });
    });

    it('a key revoked through replica A: its stream on replica B closes within 5 s', async () => {
      const { id, key } = await t.issueKey(SCOPES);
      const onB = await open('/events', key, baseB);
      const otherOnB = await open('/events', t.key, baseB);
      expect([onB.status, otherOnB.status]).toEqual([200, 200]);
      expect((await admin('DELETE', `/api-keys/${id}`)).statusCode).toBe(200);
      await closesWithin(onB);
      await stillOpen(otherOnB, t);
    });

    it("a pod terminated through replica A: its token's stream on replica B closes within 5 s", async () => {
      const { key: podKey, token } = await pod();
      const onB = await open('/events', token, baseB);
      expect(onB.status).toBe(200);
      expect((await t.request({ method: 'POST', url: t.path(`/pods/${podKey}/terminate`) })).statusCode).toBe(200);
      await closesWithin(onB);
    });
  });
});
