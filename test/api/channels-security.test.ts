/**
 * The security matrix of the six channel endpoints (docs/api.md "Authentication",
 * "Errors"): no, unknown and revoked keys; missing scopes; read keys on writes; another
 * organization's key; another organization's channel addressed through ours. Every denied request
 * must leave the database exactly as it was.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/protocol/scopes.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { securityMatrix } from '../helpers/security-matrix.ts';

interface Endpoint {
  name: string;
  method: 'GET' | 'POST' | 'PUT';
  scope: Extract<Scope, 'channels:read' | 'channels:write'>;
  path: (channelId: number) => string;
  body?: Record<string, unknown>;
  success: number;
  addressesChannel: boolean;
}

const ENDPOINTS: Endpoint[] = [
  { name: 'GET /channels', method: 'GET', scope: 'channels:read', path: () => '/channels', success: 200, addressesChannel: false },
  { name: 'GET /channels/:id', method: 'GET', scope: 'channels:read', path: (id) => `/channels/${id}`, success: 200, addressesChannel: true },
  {
    name: 'GET /channels/:id/messages',
    method: 'GET',
    scope: 'channels:read',
    path: (id) => `/channels/${id}/messages`,
    success: 200,
    addressesChannel: true,
  },
  {
    name: 'POST /channels',
    method: 'POST',
    scope: 'channels:write',
    path: () => '/channels',
    body: { name: 'created-by-matrix', document: 'd' },
    success: 201,
    addressesChannel: false,
  },
  {
    name: 'PUT /channels/:id',
    method: 'PUT',
    scope: 'channels:write',
    path: (id) => `/channels/${id}`,
    body: { name: 'renamed-by-matrix', document: 'changed', description: 'changed' },
    success: 200,
    addressesChannel: true,
  },
  {
    name: 'POST /channels/:id/messages',
    method: 'POST',
    scope: 'channels:write',
    path: (id) => `/channels/${id}/messages`,
    body: { content: 'posted by the matrix' },
    success: 201,
    addressesChannel: true,
  },
];
const WRITE_ENDPOINTS = ENDPOINTS.filter((e) => e.scope === 'channels:write');
const CHANNEL_ENDPOINTS = ENDPOINTS.filter((e) => e.addressesChannel);

describe.each(DATABASES)('channels security on %s', (kind) => {
  let t: TestApp;
  let ours: number;
  let theirs: number;
  let otherKey: string;
  let readKey: string;
  let writeKey: string;

  beforeAll(async () => {
    t = await startTestApp(kind);
    const other = await t.createOrg('other');
    otherKey = (await t.issueKey(['channels:read', 'channels:write'], { org: other })).key;
    readKey = (await t.issueKey(['channels:read'])).key;
    writeKey = (await t.issueKey(['channels:write'])).key;

    const make = async (org: string, key: string, name: string) => {
      const response = await t.request({ method: 'POST', url: t.path('/channels', org), key, payload: { name, document: `${name} doc` } });
      const id = response.json().channel.id as number;
      await t.request({ method: 'POST', url: t.path(`/channels/${id}/messages`, org), key, payload: { content: `${name} says hi` } });
      return id;
    };
    ours = await make(t.org.slug, t.key, 'ours');
    theirs = await make('other', otherKey, 'theirs');
  });
  afterAll(async () => t.close());

  /** Every channel and message row of every org, to prove a denied request wrote nothing. */
  const snapshot = async () => ({
    channels: await t.store.db.selectFrom('channels').selectAll().orderBy('id').execute(),
    messages: await t.store.db.selectFrom('channel_messages').selectAll().orderBy('id').execute(),
  });

  const call = (endpoint: Endpoint, options: { key?: string | null; headers?: Record<string, string>; org?: string; channelId?: number }) =>
    t.request({
      method: endpoint.method,
      url: t.path(endpoint.path(options.channelId ?? ours), options.org),
      key: options.key,
      headers: options.headers,
      ...(endpoint.body ? { payload: endpoint.body } : {}),
    });

  const expectDenied = async (
    send: () => Promise<LightMyRequestResponse>,
    status: number,
    code: string,
  ): Promise<Record<string, unknown>> => {
    const before = await snapshot();
    const response = await send();
    expect(response.statusCode, response.body).toBe(status);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const body = response.json();
    expect(body).toMatchObject({ code, error: expect.any(String), request_id: expect.any(String) });
    expect(await snapshot()).toEqual(before);
    return body;
  };

  it.each(ENDPOINTS)("$name: another organization's key on our organization is 404 naming nothing of ours", async (endpoint) => {
    const body = await expectDenied(() => call(endpoint, { key: otherKey }), 404, 'NOT_FOUND');
    expect(String(body.error)).not.toContain('ours');
  });

  it.each(CHANNEL_ENDPOINTS)("$name: another organization's channel through ours leaves their messages as they were", async (endpoint) => {
    await expectDenied(() => call(endpoint, { channelId: theirs }), 404, 'NOT_FOUND');
    const theirMessages = await t.request({ method: 'GET', url: t.path(`/channels/${theirs}/messages`, 'other'), key: otherKey });
    expect(theirMessages.json().messages.map((m: { content: string }) => m.content)).toEqual(['theirs says hi']);
  });

  it("GET /channels lists only our organization's channels", async () => {
    const response = await t.request({ method: 'GET', url: t.path('/channels?include_archived=true') });
    expect(response.json().channels.map((c: { id: number }) => c.id)).toEqual([ours]);
    const theirsList = await t.request({ method: 'GET', url: t.path('/channels?include_archived=true', 'other'), key: otherKey });
    expect(theirsList.json().channels.map((c: { id: number }) => c.id)).toEqual([theirs]);
  });

  it.each(WRITE_ENDPOINTS)('$name: auth is checked before the body (401 → 404 → 403, then 400)', async (endpoint) => {
    const bad = { method: endpoint.method, url: t.path(endpoint.path(ours)), payload: { unexpected: true } };
    await expectDenied(() => t.request({ ...bad, key: null }), 401, 'AUTH_REQUIRED');
    await expectDenied(() => t.request({ ...bad, key: otherKey }), 404, 'NOT_FOUND');
    await expectDenied(() => t.request({ ...bad, key: readKey }), 403, 'INSUFFICIENT_SCOPE');
    await expectDenied(() => t.request({ ...bad, key: writeKey }), 400, 'VALIDATION_FAILED');
  });

  // Last: the matrix's grant rows write, proving it denied working requests.
  securityMatrix<number>(
    ENDPOINTS.map((ep) => ({
      ...ep,
      // Names must not repeat: each successful create or rename gets its own.
      payload: ep.body && typeof ep.body.name === 'string' ? (n: number) => ({ ...ep.body, name: `${String(ep.body!.name)}-${n}` }) : ep.body,
      addresses: ep.addressesChannel,
      changes: ep.scope === 'channels:write',
    })),
    {
      app: () => t,
      foreign: () => ({ org: 'other', key: otherKey, target: theirs }),
      target: () => ours,
      missing: 999_999,
      probe: () => '/channels',
      snapshot,
      hidden: ['ours says', 'theirs says'],
    },
  );
});
