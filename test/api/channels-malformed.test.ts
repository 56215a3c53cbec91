/**
 * A table-driven sweep of malformed requests to the six channel endpoints: wrong JSON types,
 * oversized strings, bad ids, limits and cursors, unknown fields, non-object JSON, broken JSON,
 * invalid UTF-8, wrong content types and oversized bodies. Each must be a 4xx with the contract's
 * error body, and write nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_DOCUMENT } from '../../src/domain/channels/model.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';

type Method = 'GET' | 'POST' | 'PUT';

interface Case {
  name: string;
  method: Method;
  /** Below /orgs/{org}; `:id` becomes an existing channel. */
  path: string;
  /** An object is sent as JSON; a string or Buffer is sent as is. */
  payload?: unknown;
  contentType?: string;
  status: number;
  code: string;
  /** The field the details must name, for validation errors. */
  field?: string;
}

const BODY_ROUTES: { method: Method; path: string; valid: Record<string, unknown> }[] = [
  { method: 'POST', path: '/channels', valid: { name: 'valid-name' } },
  { method: 'PUT', path: '/channels/:id', valid: { name: 'renamed-existing' } },
  { method: 'POST', path: '/channels/:id/messages', valid: { content: 'valid content' } },
];

const invalidBodies: [string, string, Record<string, unknown>, string][] = [
  // [route path, case name, body, field]
  ['/channels', 'name as a number', { name: 42 }, '/name'],
  ['/channels', 'name as null', { name: null }, '/name'],
  ['/channels', 'name as an array', { name: ['ab'] }, '/name'],
  ['/channels', 'name as an object', { name: { en: 'ab' } }, '/name'],
  ['/channels', 'name of 1 character', { name: 'a' }, '/name'],
  ['/channels', 'empty name', { name: '' }, '/name'],
  ['/channels', 'name of 101 characters', { name: 'n'.repeat(101) }, '/name'],
  ['/channels', 'missing name', { description: 'no name' }, '/name'],
  ['/channels', 'description as a number', { name: 'ok', description: 1 }, '/description'],
  ['/channels', 'description of 10,001 characters', { name: 'ok', description: 'd'.repeat(10_001) }, '/description'],
  ['/channels', 'document as an object', { name: 'ok', document: {} }, '/document'],
  ['/channels', 'document one character too long', { name: 'ok', document: 'd'.repeat(MAX_DOCUMENT + 1) }, '/document'],
  ['/channels', 'repository_id as a string', { name: 'ok', repository_id: '1' }, '/repository_id'],
  ['/channels', 'repository_id as a fraction', { name: 'ok', repository_id: 1.5 }, '/repository_id'],
  ['/channels', 'negative repository_id', { name: 'ok', repository_id: -3 }, '/repository_id'],
  ['/channels', 'repository_id beyond 2^53', { name: 'ok', repository_id: 1e20 }, '/repository_id'],
  ['/channels', 'ticket_slug as a number', { name: 'ok', ticket_slug: 7 }, '/ticket_slug'],
  ['/channels', 'ticket_slug of 81 characters', { name: 'ok', ticket_slug: 'T'.repeat(81) }, '/ticket_slug'],
  ['/channels', 'unknown field', { name: 'ok', topic: 'x' }, '/topic'],
  ['/channels', 'archived on create', { name: 'ok', archived: false }, '/archived'],
  ['/channels/:id', 'name as a number', { name: 42 }, '/name'],
  ['/channels/:id', 'name as null', { name: null }, '/name'],
  ['/channels/:id', 'name of 101 characters', { name: 'n'.repeat(101) }, '/name'],
  ['/channels/:id', 'archived as a string', { archived: 'true' }, '/archived'],
  ['/channels/:id', 'archived as 1', { archived: 1 }, '/archived'],
  ['/channels/:id', 'archived as null', { archived: null }, '/archived'],
  ['/channels/:id', 'description of 10,001 characters', { description: 'd'.repeat(10_001) }, '/description'],
  ['/channels/:id', 'document as a number', { document: 5 }, '/document'],
  ['/channels/:id', 'repository_id (not updatable)', { repository_id: 1 }, '/repository_id'],
  ['/channels/:id', 'unknown field', { name: 'ok-name', colour: 'red' }, '/colour'],
  ['/channels/:id/messages', 'content as a number', { content: 5 }, '/content'],
  ['/channels/:id/messages', 'content as null', { content: null }, '/content'],
  ['/channels/:id/messages', 'content as an array', { content: ['x'] }, '/content'],
  ['/channels/:id/messages', 'empty content', { content: '' }, '/content'],
  ['/channels/:id/messages', 'content of 100,001 characters', { content: 'c'.repeat(100_001) }, '/content'],
  ['/channels/:id/messages', 'missing content', { pod_key: 'p-1' }, '/content'],
  ['/channels/:id/messages', 'pod_key as a number', { content: 'x', pod_key: 5 }, '/pod_key'],
  ['/channels/:id/messages', 'pod_key with capitals', { content: 'x', pod_key: 'P-1' }, '/pod_key'],
  ['/channels/:id/messages', 'pod_key of 65 characters', { content: 'x', pod_key: 'p'.repeat(65) }, '/pod_key'],
  ['/channels/:id/messages', 'sender_type in the body', { content: 'x', sender_type: 'agent' }, '/sender_type'],
  ['/channels/:id/messages', 'unknown field', { content: 'x', channel_id: 1 }, '/channel_id'],
];

const CASES: Case[] = [
  ...invalidBodies.map(([path, name, payload, field]): Case => ({
    name: `${path === '/channels/:id' ? 'PUT' : 'POST'} ${path}: ${name}`,
    method: path === '/channels/:id' ? 'PUT' : 'POST',
    path,
    payload,
    status: 400,
    code: 'VALIDATION_FAILED',
    field,
  })),
  ...BODY_ROUTES.flatMap(({ method, path, valid }): Case[] => [
    ...(['[]', '"text"', '3', 'null', 'true', '[{"name":"ab"}]'] as const).map(
      (raw): Case => ({ name: `${method} ${path}: JSON ${raw}`, method, path, payload: raw, status: 400, code: 'VALIDATION_FAILED' }),
    ),
    { name: `${method} ${path}: truncated JSON`, method, path, payload: '{"name": "ab"', status: 400, code: 'INVALID_JSON' },
    { name: `${method} ${path}: trailing garbage`, method, path, payload: '{"content": "x"} x', status: 400, code: 'INVALID_JSON' },
    {
      name: `${method} ${path}: invalid UTF-8`,
      method,
      path,
      payload: Buffer.concat([Buffer.from('{"name": "a'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('b", "content": "x"}')]),
      status: 400,
      code: 'INVALID_JSON',
    },
    { name: `${method} ${path}: __proto__ key`, method, path, payload: '{"__proto__": {"x": 1}, "name": "ab"}', status: 400, code: 'INVALID_JSON' },
    { name: `${method} ${path}: empty body`, method, path, payload: '', status: 400, code: 'VALIDATION_FAILED' },
    {
      name: `${method} ${path}: text/plain`,
      method,
      path,
      payload: JSON.stringify(valid),
      contentType: 'text/plain',
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
    },
    {
      name: `${method} ${path}: form encoding`,
      method,
      path,
      payload: 'name=valid-name&content=x',
      contentType: 'application/x-www-form-urlencoded',
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
    },
    {
      name: `${method} ${path}: body over 1 MiB`,
      method,
      path,
      payload: JSON.stringify({ ...valid, document: 'x'.repeat(1024 * 1024) }),
      status: 413,
      code: 'PAYLOAD_TOO_LARGE',
    },
  ]),
  ...['abc', '-1', '0', '1.5', '99999999999999999999', '%20'].flatMap((id): Case[] => [
    { name: `GET /channels/${id}`, method: 'GET', path: `/channels/${id}`, status: 400, code: 'VALIDATION_FAILED', field: 'id' },
    { name: `GET /channels/${id}/messages`, method: 'GET', path: `/channels/${id}/messages`, status: 400, code: 'VALIDATION_FAILED', field: 'id' },
    { name: `PUT /channels/${id}`, method: 'PUT', path: `/channels/${id}`, payload: { name: 'ok-name' }, status: 400, code: 'VALIDATION_FAILED', field: 'id' },
    {
      name: `POST /channels/${id}/messages`,
      method: 'POST',
      path: `/channels/${id}/messages`,
      payload: { content: 'x' },
      status: 400,
      code: 'VALIDATION_FAILED',
      field: 'id',
    },
  ]),
  ...[
    'limit=abc',
    'limit=0',
    'limit=-1',
    'limit=1.5',
    'limit=',
    'offset=-1',
    'offset=x',
    'repository_id=abc',
    'repository_id=0',
    'include_archived=yes',
    'include_archived=TRUE',
    `ticket_slug=${'T'.repeat(81)}`,
    'unknown=1',
  ].map((query): Case => ({
    name: `GET /channels?${query.slice(0, 40)}`,
    method: 'GET',
    path: `/channels?${query}`,
    status: 400,
    code: 'VALIDATION_FAILED',
    field: query.split('=')[0],
  })),
  ...['limit=abc', 'limit=0', 'limit=-5', 'limit=2.5', 'before=0', 'before=-1', 'before=abc', 'after=0', 'after=1.5', 'after=99999999999999999999', 'offset=10', 'cursor=1'].map(
    (query): Case => ({
      name: `GET /channels/:id/messages?${query}`,
      method: 'GET',
      path: `/channels/:id/messages?${query}`,
      status: 400,
      code: 'VALIDATION_FAILED',
      field: query.split('=')[0],
    }),
  ),
];

describe.each(DATABASES)('malformed channel requests on %s', (kind) => {
  let t: TestApp;
  let channelId: number;

  beforeAll(async () => {
    t = await startTestApp(kind);
    const created = await t.request({ method: 'POST', url: t.path('/channels'), payload: { name: 'existing', document: 'doc' } });
    channelId = created.json().channel.id;
    await t.request({ method: 'POST', url: t.path(`/channels/${channelId}/messages`), payload: { content: 'first' } });
  });
  afterAll(async () => t.close());

  const counts = async () => {
    const count = async (table: 'channels' | 'channel_messages') =>
      Number((await t.store.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    const channel = await t.store.db.selectFrom('channels').selectAll().where('id', '=', channelId).executeTakeFirstOrThrow();
    return { channels: await count('channels'), messages: await count('channel_messages'), channel };
  };

  it.each(CASES)('$name → $status $code', async (c) => {
    const before = await counts();
    const isJson = c.payload !== undefined && typeof c.payload === 'object' && !Buffer.isBuffer(c.payload);
    const payload = isJson ? JSON.stringify(c.payload) : (c.payload as string | Buffer | undefined);
    const response = await t.request({
      method: c.method,
      url: t.path(c.path.replace(':id', String(channelId))),
      ...(payload === undefined ? {} : { payload, headers: { 'content-type': c.contentType ?? 'application/json' } }),
    });
    expect(response.statusCode, response.body).toBe(c.status);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const body = response.json();
    expect(body).toMatchObject({ code: c.code, error: expect.any(String), request_id: expect.any(String) });
    expect(body.request_id).toBe(response.headers['x-request-id']);
    if (c.code === 'VALIDATION_FAILED') {
      expect(body.details).toEqual(expect.arrayContaining([{ field: expect.any(String), message: expect.any(String) }]));
    }
    if (c.field) expect(body.details.map((d: { field: string }) => d.field)).toContain(c.field);
    expect(await counts()).toEqual(before);
  });

  it('still accepts the valid forms of every body route afterwards', async () => {
    for (const { method, path, valid } of BODY_ROUTES) {
      const response = await t.request({ method, url: t.path(path.replace(':id', String(channelId))), payload: valid });
      expect(response.statusCode, `${method} ${path}: ${response.body}`).toBeLessThan(300);
    }
  });
});
