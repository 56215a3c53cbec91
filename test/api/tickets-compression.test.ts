import zlib from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GZIP_MIN_BYTES } from '../../src/api/response-cache.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

/**
 * The kept ticket reads (list, board, detail) go gzipped to a client that takes gzip (the
 * dashboard's browser), compressed once per rendered version; as they are to one that does not
 * (the CLI), and never stale: a change makes a new body, compressed or not (docs/api.md
 * "Compression").
 */
describe.each(DATABASES)('compressed ticket reads on %s', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await startTestApp(kind);
  });
  afterEach(async () => t.close());

  const get = (url: string, acceptEncoding?: string) =>
    t.request({ method: 'GET', url: t.path(url), headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding } });
  const createTickets = async (count: number) => {
    for (let n = 0; n < count; n++) {
      const created = await t.request({ method: 'POST', url: t.path('/tickets'), payload: { type: 'task', title: `ticket number ${n} of the board`, labels: ['compression'] } });
      expect(created.statusCode, created.body).toBe(201);
    }
  };

  it('board, list and detail: gzip for a client that takes it, the same JSON as the plain body, Vary on both', async () => {
    await createTickets(30);
    const slug = (await get('/tickets?limit=1')).json().tickets[0].slug as string;
    for (const url of ['/tickets/board', '/tickets?limit=20', `/tickets/${slug}`]) {
      const plain = await get(url);
      expect(plain.statusCode, plain.body).toBe(200);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.headers.vary).toBe('accept-encoding');
      if (plain.rawPayload.length < GZIP_MIN_BYTES) continue;
      for (const accept of ['gzip', 'gzip, deflate, br, zstd', 'br;q=1.0, gzip;q=0.5', '*']) {
        const compressed = await get(url, accept);
        expect(compressed.statusCode).toBe(200);
        expect(compressed.headers['content-encoding'], `${url} with ${accept}`).toBe('gzip');
        expect(compressed.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(compressed.headers.vary).toBe('accept-encoding');
        expect(Number(compressed.headers['content-length'])).toBe(compressed.rawPayload.length);
        expect(compressed.rawPayload.length).toBeLessThan(plain.rawPayload.length);
        expect(zlib.gunzipSync(compressed.rawPayload).toString('utf8')).toBe(plain.body);
      }
    }
    // The board and the list are over the threshold here: both were compressed.
    expect((await get('/tickets/board', 'gzip')).headers['content-encoding']).toBe('gzip');
    expect((await get('/tickets?limit=20', 'gzip')).headers['content-encoding']).toBe('gzip');
  });

  it('sent as it is when gzip is refused or not named, and for a body too small to gain', async () => {
    await createTickets(30);
    for (const accept of ['gzip;q=0', 'identity', 'br', 'deflate', '*;q=0', '']) {
      const response = await get('/tickets/board', accept);
      expect(response.headers['content-encoding'], accept).toBeUndefined();
      expect(response.json().board.columns).toHaveLength(5);
    }
    const small = await get('/tickets?limit=1&type=bug', 'gzip');
    expect(small.rawPayload.length).toBeLessThan(GZIP_MIN_BYTES);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.json()).toMatchObject({ tickets: [], total: 0 });
  });

  it('a change makes a new compressed body: never the one kept from before', async () => {
    await createTickets(30);
    const read = async () => JSON.parse(zlib.gunzipSync((await get('/tickets/board', 'gzip')).rawPayload).toString('utf8')) as { board: { columns: { status: string; total: number }[] } };
    const before = await read();
    expect(before.board.columns.find((c) => c.status === 'backlog')?.total).toBe(30);
    expect(await read()).toEqual(before);
    await createTickets(1);
    const after = await read();
    expect(after.board.columns.find((c) => c.status === 'backlog')?.total).toBe(31);
    const plain = await get('/tickets/board');
    expect(plain.json()).toEqual(after);
  });
});
