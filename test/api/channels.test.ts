import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_DOCUMENT } from '../../src/domain/channels/model.ts';
import { postSystemMessage } from '../../src/domain/channels/service.ts';
import { insertMessages } from '../../src/store/channel-messages.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe.each(DATABASES)('channels API on %s', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await startTestApp(kind);
  });
  afterEach(async () => t.close());

  const create = async (payload: Record<string, unknown>) => {
    const response = await t.request({ method: 'POST', url: t.path('/channels'), payload });
    expect(response.statusCode, response.body).toBe(201);
    return response.json().channel;
  };
  const post = async (channelId: number, content: string) => {
    const response = await t.request({ method: 'POST', url: t.path(`/channels/${channelId}/messages`), payload: { content } });
    expect(response.statusCode, response.body).toBe(201);
    return response.json().message;
  };
  const list = async (query = '') => {
    const response = await t.request({ method: 'GET', url: t.path(`/channels${query}`) });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };
  const messages = async (channelId: number, query = '') => {
    const response = await t.request({ method: 'GET', url: t.path(`/channels/${channelId}/messages${query}`) });
    expect(response.statusCode, response.body).toBe(200);
    return response.json().messages as { id: number; content: string }[];
  };
  const expectError = (response: { statusCode: number; json(): Record<string, unknown> }, status: number, code: string) => {
    expect(response.statusCode).toBe(status);
    expect(response.json()).toMatchObject({ code, error: expect.any(String), request_id: expect.any(String) });
  };
  const insertRepository = async (orgId: number, name: string) =>
    (
      await t.store.db
        .insertInto('repositories')
        .values({
          org_id: orgId,
          name,
          full_name: `acme/${name}`,
          provider: 'github',
          url: `https://example.invalid/acme/${name}.git`,
          default_branch: 'main',
          ticket_prefix: null,
          api_base_url: null,
          token_encrypted: null,
          created_at: Date.now(),
        })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;

  describe('POST /channels', () => {
    it('creates a channel with defaults and returns every detail field', async () => {
      const response = await t.request({ method: 'POST', url: t.path('/channels'), payload: { name: 'general' } });
      expect(response.statusCode).toBe(201);
      const { channel } = response.json();
      expect(channel).toEqual({
        id: expect.any(Number),
        name: 'general',
        description: null,
        repository_id: null,
        ticket_slug: null,
        document: null,
        archived: false,
        created_at: expect.stringMatching(ISO),
        updated_at: channel.created_at,
      });
    });

    it('keeps description, document, repository and ticket (slug canonicalised)', async () => {
      const repositoryId = await insertRepository(t.org.id, 'web');
      await t.request({ method: 'POST', url: t.path('/tickets'), payload: { type: 'bug', title: 'x' } });
      const channel = await create({
        name: 'Bug ACME-1',
        description: 'about the bug',
        document: '# Context\nsteps',
        repository_id: repositoryId,
        ticket_slug: 'acme-1',
      });
      expect(channel).toMatchObject({
        name: 'Bug ACME-1',
        description: 'about the bug',
        document: '# Context\nsteps',
        repository_id: repositoryId,
        ticket_slug: 'ACME-1',
      });
    });

    it('accepts names of 2 and 100 characters and a document of the maximum length', async () => {
      await create({ name: 'ab' });
      await create({ name: 'n'.repeat(100) });
      const big = await create({ name: 'big', document: 'd'.repeat(MAX_DOCUMENT), description: 'x'.repeat(10_000) });
      const fetched = await t.request({ method: 'GET', url: t.path(`/channels/${big.id}`) });
      expect(fetched.json().channel.document).toHaveLength(MAX_DOCUMENT);
    });

    it('accepts every field at its maximum in the costliest characters: the schema never allows more than a 1 MiB body holds', async () => {
      // U+0001 is written as the 6-byte escape \u0001: the most a character can take in JSON. Names
      // refuse control characters: theirs is a 4-byte one.
      const body = { name: `c${'\u{1F600}'.repeat(99)}`, description: '\u0001'.repeat(10_000), document: '\u0001'.repeat(MAX_DOCUMENT) };
      expect(Buffer.byteLength(JSON.stringify(body))).toBeGreaterThan(6 * MAX_DOCUMENT);
      const channel = await create(body);
      expect(channel.document).toHaveLength(MAX_DOCUMENT);
    });

    it.each([
      { label: 'no name', payload: {}, field: '/name' },
      { label: 'a 1-character name', payload: { name: 'a' }, field: '/name' },
      { label: 'a 101-character name', payload: { name: 'n'.repeat(101) }, field: '/name' },
      { label: 'a blank name', payload: { name: '   ' }, field: '/name' },
      { label: 'a numeric name', payload: { name: 7 }, field: '/name' },
      { label: 'a 10,001-character description', payload: { name: 'ok', description: 'x'.repeat(10_001) }, field: '/description' },
      { label: 'a document one character too long', payload: { name: 'ok', document: 'x'.repeat(MAX_DOCUMENT + 1) }, field: '/document' },
      { label: 'a string repository_id', payload: { name: 'ok', repository_id: '1' }, field: '/repository_id' },
      { label: 'repository_id 0', payload: { name: 'ok', repository_id: 0 }, field: '/repository_id' },
      { label: 'an empty ticket_slug', payload: { name: 'ok', ticket_slug: '' }, field: '/ticket_slug' },
      { label: 'archived on create', payload: { name: 'ok', archived: true }, field: '/archived' },
      { label: 'an unknown field', payload: { name: 'ok', colour: 'red' }, field: '/colour' },
    ] as { label: string; payload: Record<string, unknown>; field: string }[])('rejects $label, naming $field', async ({ payload, field }) => {
      const response = await t.request({ method: 'POST', url: t.path('/channels'), payload });
      expectError(response, 400, 'VALIDATION_FAILED');
      expect(response.json().details.map((d: { field: string }) => d.field)).toContain(field);
      expect((await list('?include_archived=true')).total).toBe(0);
    });

    it('rejects a repository or ticket that is not a record of the org, naming the field', async () => {
      const other = await t.createOrg('other');
      const foreignRepository = await insertRepository(other.id, 'theirs');
      const otherKey = await t.issueKey(['tickets:write'], { org: other });
      const foreignTicket = (
        await t.request({ method: 'POST', url: t.path('/tickets', 'other'), key: otherKey.key, payload: { type: 'bug', title: 'x' } })
      ).json().ticket;
      for (const [payload, field] of [
        [{ repository_id: 9999 }, '/repository_id'],
        [{ repository_id: foreignRepository }, '/repository_id'],
        [{ ticket_slug: 'ACME-42' }, '/ticket_slug'],
        [{ ticket_slug: foreignTicket.slug }, '/ticket_slug'],
      ] as const) {
        const response = await t.request({ method: 'POST', url: t.path('/channels'), payload: { name: 'x1', ...payload } });
        expectError(response, 400, 'VALIDATION_FAILED');
        expect(response.json().details[0].field).toBe(field);
        expect(response.json().error).toContain(field.slice(1));
      }
      expect((await list()).total).toBe(0);
    });

    it('refuses a name taken in the org ignoring case (409), but not one taken in another org', async () => {
      await create({ name: 'General' });
      const duplicate = await t.request({ method: 'POST', url: t.path('/channels'), payload: { name: 'gENERAL' } });
      expectError(duplicate, 409, 'ALREADY_EXISTS');
      expect((await list()).total).toBe(1);
      const other = await t.createOrg('other');
      const otherKey = await t.issueKey(['channels:write'], { org: other });
      const elsewhere = await t.request({ method: 'POST', url: t.path('/channels', 'other'), key: otherKey.key, payload: { name: 'general' } });
      expect(elsewhere.statusCode).toBe(201);
    });

    it('replays the first response for a repeated Idempotency-Key', async () => {
      const request = { method: 'POST' as const, url: t.path('/channels'), payload: { name: 'once' }, headers: { 'idempotency-key': 'k-1' } };
      const first = await t.request(request);
      const second = await t.request(request);
      expect(first.statusCode).toBe(201);
      expect(second.statusCode).toBe(201);
      expect(second.headers['idempotent-replayed']).toBe('true');
      expect(second.json()).toEqual(first.json());
      expect((await list()).total).toBe(1);
      const mismatch = await t.request({ ...request, payload: { name: 'twice' } });
      expectError(mismatch, 409, 'IDEMPOTENCY_MISMATCH');
    });
  });

  describe('GET /channels', () => {
    it('lists newest first with total, without documents, hiding archived channels unless asked', async () => {
      for (const name of ['c1', 'c2', 'c3']) await create({ name, document: `doc of ${name}` });
      const c4 = await create({ name: 'c4' });
      await t.request({ method: 'PUT', url: t.path(`/channels/${c4.id}`), payload: { archived: true } });

      const visible = await list();
      expect(visible).toMatchObject({ total: 3, limit: 100, offset: 0 });
      expect(visible.channels.map((c: { name: string }) => c.name)).toEqual(['c3', 'c2', 'c1']);
      expect(Object.keys(visible.channels[0]).sort()).toEqual(
        ['archived', 'created_at', 'description', 'id', 'name', 'repository_id', 'ticket_slug', 'updated_at'],
      );
      for (const query of ['?include_archived=true', '?include_archived=1']) {
        const all = await list(query);
        expect(all.total).toBe(4);
        expect(all.channels.map((c: { name: string }) => c.name)).toEqual(['c4', 'c3', 'c2', 'c1']);
        expect(all.channels[0].archived).toBe(true);
      }
      for (const query of ['?include_archived=false', '?include_archived=0']) expect((await list(query)).total).toBe(3);
    });

    it('filters by repository_id and by ticket_slug ignoring case', async () => {
      const web = await insertRepository(t.org.id, 'web');
      const api = await insertRepository(t.org.id, 'api');
      await t.request({ method: 'POST', url: t.path('/tickets'), payload: { type: 'bug', title: 'x' } });
      await create({ name: 'web-1', repository_id: web });
      await create({ name: 'web-2', repository_id: web, ticket_slug: 'ACME-1' });
      await create({ name: 'api-1', repository_id: api });
      await create({ name: 'none' });
      const names = async (query: string) => {
        const body = await list(query);
        expect(body.total).toBe(body.channels.length);
        return body.channels.map((c: { name: string }) => c.name);
      };
      expect(await names(`?repository_id=${web}`)).toEqual(['web-2', 'web-1']);
      expect(await names(`?repository_id=${api}`)).toEqual(['api-1']);
      expect(await names('?ticket_slug=acme-1')).toEqual(['web-2']);
      expect(await names('?ticket_slug=ACME-1')).toEqual(['web-2']);
      expect(await names(`?ticket_slug=acme-1&repository_id=${api}`)).toEqual([]);
      expect(await names('?repository_id=99999')).toEqual([]);
    });

    it('pages with limit and offset, clamps limit to 100, and rejects bad values', async () => {
      for (let i = 1; i <= 5; i++) await create({ name: `c${i}` });
      const page = await list('?limit=2&offset=1');
      expect(page).toMatchObject({ total: 5, limit: 2, offset: 1 });
      expect(page.channels.map((c: { name: string }) => c.name)).toEqual(['c4', 'c3']);
      expect((await list('?limit=5000')).limit).toBe(100);
      for (const bad of ['limit=0', 'limit=-1', 'limit=abc', 'offset=-1', 'include_archived=yes', 'repository_id=x', 'nope=1']) {
        const response = await t.request({ method: 'GET', url: t.path(`/channels?${bad}`) });
        expectError(response, 400, 'VALIDATION_FAILED');
        expect(response.json().details[0].field, bad).toBe(bad.split('=')[0]);
      }
    });
  });

  describe('GET /channels/:id', () => {
    it('returns the channel with its document; unknown ids 404, malformed ids 400', async () => {
      const channel = await create({ name: 'docs', document: 'the doc' });
      const found = await t.request({ method: 'GET', url: t.path(`/channels/${channel.id}`) });
      expect(found.statusCode).toBe(200);
      expect(found.json()).toEqual({ channel });
      expectError(await t.request({ method: 'GET', url: t.path(`/channels/${channel.id + 1000}`) }), 404, 'NOT_FOUND');
      for (const bad of ['abc', '0', '-1', '1.5', '99999999999999999999']) {
        const response = await t.request({ method: 'GET', url: t.path(`/channels/${bad}`) });
        expectError(response, 400, 'VALIDATION_FAILED');
        expect(response.json().details[0].field).toBe('id');
      }
    });
  });

  describe('PUT /channels/:id', () => {
    it('changes only the given fields; null clears description and document', async () => {
      const channel = await create({ name: 'first', description: 'd', document: 'doc' });
      await new Promise((resolve) => setTimeout(resolve, 5));
      const renamed = await t.request({ method: 'PUT', url: t.path(`/channels/${channel.id}`), payload: { name: 'second' } });
      expect(renamed.statusCode).toBe(200);
      const after = renamed.json().channel;
      expect(after).toMatchObject({ name: 'second', description: 'd', document: 'doc', archived: false, created_at: channel.created_at });
      expect(after.updated_at > channel.updated_at).toBe(true);
      const cleared = await t.request({
        method: 'PUT',
        url: t.path(`/channels/${channel.id}`),
        payload: { description: null, document: 'new doc' },
      });
      expect(cleared.json().channel).toMatchObject({ name: 'second', description: null, document: 'new doc' });
      const nulled = await t.request({ method: 'PUT', url: t.path(`/channels/${channel.id}`), payload: { document: null } });
      expect(nulled.json().channel.document).toBeNull();
      const unchanged = await t.request({ method: 'PUT', url: t.path(`/channels/${channel.id}`), payload: {} });
      expect(unchanged.statusCode).toBe(200);
      expect(unchanged.json().channel).toEqual(nulled.json().channel);
    });

    it('archives and unarchives', async () => {
      const channel = await create({ name: 'arch' });
      const archived = await t.request({ method: 'PUT', url: t.path(`/channels/${channel.id}`), payload: { archived: true } });
      expect(archived.json().channel.archived).toBe(true);
      const restored = await t.request({ method: 'PUT', url: t.path(`/channels/${channel.id}`), payload: { archived: false } });
      expect(restored.json().channel.archived).toBe(false);
      expect((await list()).total).toBe(1);
    });

    it('refuses a rename to a name taken ignoring case, allows re-casing its own name', async () => {
      await create({ name: 'General' });
      const channel = await create({ name: 'random' });
      const taken = await t.request({ method: 'PUT', url: t.path(`/channels/${channel.id}`), payload: { name: 'GENERAL', document: 'x' } });
      expectError(taken, 409, 'ALREADY_EXISTS');
      const fetched = (await t.request({ method: 'GET', url: t.path(`/channels/${channel.id}`) })).json().channel;
      expect(fetched).toMatchObject({ name: 'random', document: null });
      const recased = await t.request({ method: 'PUT', url: t.path(`/channels/${channel.id}`), payload: { name: 'Random' } });
      expect(recased.statusCode).toBe(200);
      expect(recased.json().channel.name).toBe('Random');
    });

    it('validates the body and 404s for unknown channels', async () => {
      const channel = await create({ name: 'val' });
      for (const [payload, field] of [
        [{ name: 'a' }, '/name'],
        [{ name: null }, '/name'],
        [{ archived: 'yes' }, '/archived'],
        [{ description: 3 }, '/description'],
        [{ repository_id: 1 }, '/repository_id'],
        [{ ticket_slug: 'ACME-1' }, '/ticket_slug'],
      ] as const) {
        const response = await t.request({ method: 'PUT', url: t.path(`/channels/${channel.id}`), payload });
        expectError(response, 400, 'VALIDATION_FAILED');
        expect(response.json().details.map((d: { field: string }) => d.field)).toContain(field);
      }
      const missing = await t.request({ method: 'PUT', url: t.path(`/channels/${channel.id + 1000}`), payload: { name: 'zz' } });
      expectError(missing, 404, 'NOT_FOUND');
      const badId = await t.request({ method: 'PUT', url: t.path('/channels/abc'), payload: { name: 'zz' } });
      expectError(badId, 400, 'VALIDATION_FAILED');
    });
  });

  describe('POST /channels/:id/messages', () => {
    it('records an API-key message as sender_type api with pod_key null', async () => {
      const channel = await create({ name: 'talk' });
      const response = await t.request({ method: 'POST', url: t.path(`/channels/${channel.id}/messages`), payload: { content: 'hello' } });
      expect(response.statusCode).toBe(201);
      expect(response.json()).toEqual({
        message: {
          id: expect.any(Number),
          channel_id: channel.id,
          content: 'hello',
          sender_type: 'api',
          sender: { type: 'api_key', id: expect.any(Number), name: expect.any(String) },
          pod_key: null,
          created_at: expect.stringMatching(ISO),
        },
      });
    });

    it('accepts 1 and 100,000 characters of content and rejects 0 and 100,001', async () => {
      const channel = await create({ name: 'sizes' });
      await post(channel.id, 'x');
      await post(channel.id, 'y'.repeat(100_000));
      for (const content of ['', 'z'.repeat(100_001)]) {
        const response = await t.request({ method: 'POST', url: t.path(`/channels/${channel.id}/messages`), payload: { content } });
        expectError(response, 400, 'VALIDATION_FAILED');
        expect(response.json().details[0].field).toBe('/content');
      }
      expect(await messages(channel.id)).toHaveLength(2);
    });

    it('rejects a pod_key that is not a pod of this org (no pod can exist yet)', async () => {
      const channel = await create({ name: 'pods' });
      const response = await t.request({
        method: 'POST',
        url: t.path(`/channels/${channel.id}/messages`),
        payload: { content: 'from a pod', pod_key: 'p-abc123' },
      });
      expectError(response, 400, 'VALIDATION_FAILED');
      expect(response.json().error).toBe('pod_key must be a pod of this organization');
      expect(response.json().details[0].field).toBe('/pod_key');
      expect(await messages(channel.id)).toEqual([]);
    });

    it('refuses the sender_type from the body: it is taken from the caller', async () => {
      const channel = await create({ name: 'spoof' });
      const response = await t.request({
        method: 'POST',
        url: t.path(`/channels/${channel.id}/messages`),
        payload: { content: 'hi', sender_type: 'system' },
      });
      expectError(response, 400, 'VALIDATION_FAILED');
      expect(response.json().details[0].field).toBe('/sender_type');
    });

    it('refuses posts to an archived channel with 409 CHANNEL_ARCHIVED, which stays readable', async () => {
      const channel = await create({ name: 'old' });
      await post(channel.id, 'before archiving');
      await t.request({ method: 'PUT', url: t.path(`/channels/${channel.id}`), payload: { archived: true } });
      const refused = await t.request({ method: 'POST', url: t.path(`/channels/${channel.id}/messages`), payload: { content: 'late' } });
      expectError(refused, 409, 'CHANNEL_ARCHIVED');
      expect((await messages(channel.id)).map((m) => m.content)).toEqual(['before archiving']);
      expect((await t.request({ method: 'GET', url: t.path(`/channels/${channel.id}`) })).statusCode).toBe(200);
      await t.request({ method: 'PUT', url: t.path(`/channels/${channel.id}`), payload: { archived: false } });
      await post(channel.id, 'after unarchiving');
    });

    it('404s for an unknown channel and 400s for a malformed id', async () => {
      expectError(await t.request({ method: 'POST', url: t.path('/channels/4242/messages'), payload: { content: 'x' } }), 404, 'NOT_FOUND');
      expectError(await t.request({ method: 'POST', url: t.path('/channels/x/messages'), payload: { content: 'x' } }), 400, 'VALIDATION_FAILED');
    });

    it('replays a repeated Idempotency-Key without a second message', async () => {
      const channel = await create({ name: 'idem' });
      const request = {
        method: 'POST' as const,
        url: t.path(`/channels/${channel.id}/messages`),
        payload: { content: 'once' },
        headers: { 'idempotency-key': 'msg-1' },
      };
      const first = await t.request(request);
      const second = await t.request(request);
      expect(second.json()).toEqual(first.json());
      expect(await messages(channel.id)).toHaveLength(1);
    });
  });

  describe('GET /channels/:id/messages', () => {
    it('pages most recent first with limit, before and after, giving exact results', async () => {
      const channel = await create({ name: 'paging' });
      const ids: number[] = [];
      for (let i = 1; i <= 10; i++) ids.push((await post(channel.id, `m${i}`)).id);
      const contents = async (query: string) => (await messages(channel.id, query)).map((m) => m.content);
      const id = (n: number) => ids[n - 1];

      expect(await contents('')).toEqual(['m10', 'm9', 'm8', 'm7', 'm6', 'm5', 'm4', 'm3', 'm2', 'm1']);
      expect(await contents('?limit=3')).toEqual(['m10', 'm9', 'm8']);
      expect(await contents(`?limit=3&before=${id(8)}`)).toEqual(['m7', 'm6', 'm5']);
      expect(await contents(`?limit=3&before=${id(3)}`)).toEqual(['m2', 'm1']);
      expect(await contents(`?before=${id(1)}`)).toEqual([]);
      // `after` anchors the page just above the cursor: the oldest newer messages, still newest first.
      expect(await contents(`?limit=3&after=${id(3)}`)).toEqual(['m6', 'm5', 'm4']);
      expect(await contents(`?after=${id(8)}`)).toEqual(['m10', 'm9']);
      expect(await contents(`?after=${id(10)}`)).toEqual([]);
      expect(await contents(`?after=${id(3)}&before=${id(8)}`)).toEqual(['m7', 'm6', 'm5', 'm4']);
      expect(await contents(`?after=${id(3)}&before=${id(8)}&limit=2`)).toEqual(['m5', 'm4']);
      expect(await contents(`?after=${id(8)}&before=${id(3)}`)).toEqual([]);

      // Walking the whole channel with before= sees every message once.
      const walked: string[] = [];
      let cursor = '';
      for (;;) {
        const page = await messages(channel.id, `?limit=4${cursor}`);
        if (page.length === 0) break;
        walked.push(...page.map((m) => m.content));
        cursor = `&before=${page[page.length - 1].id}`;
      }
      expect(walked).toEqual(['m10', 'm9', 'm8', 'm7', 'm6', 'm5', 'm4', 'm3', 'm2', 'm1']);
    });

    it('defaults to 50, clamps limit to 100, and keeps channels apart', async () => {
      const channel = await create({ name: 'busy' });
      const quiet = await create({ name: 'quiet' });
      await insertMessages(
        t.store.db,
        Array.from({ length: 120 }, (_, i) => ({
          org_id: t.org.id,
          channel_id: channel.id,
          content: `bulk ${i}`,
          sender_type: 'api' as const,
          pod_key: null,
          created_at: Date.now(),
        })),
      );
      await post(quiet.id, 'only one');
      expect(await messages(channel.id)).toHaveLength(50);
      expect(await messages(channel.id, '?limit=500')).toHaveLength(100);
      expect((await messages(channel.id, '?limit=1'))[0].content).toBe('bulk 119');
      expect((await messages(quiet.id)).map((m) => m.content)).toEqual(['only one']);
    });

    it('rejects limits and cursors that are not positive integers, and unknown channels', async () => {
      const channel = await create({ name: 'bad' });
      for (const bad of ['limit=0', 'limit=-1', 'limit=abc', 'limit=2.5', 'before=0', 'before=abc', 'after=-5', 'after=1.5', 'since=1']) {
        const response = await t.request({ method: 'GET', url: t.path(`/channels/${channel.id}/messages?${bad}`) });
        expectError(response, 400, 'VALIDATION_FAILED');
        expect(response.json().details[0].field, bad).toBe(bad.split('=')[0]);
      }
      expectError(await t.request({ method: 'GET', url: t.path(`/channels/${channel.id + 99}/messages`) }), 404, 'NOT_FOUND');
    });

    it('shows system messages from services next to API messages', async () => {
      const channel = await create({ name: 'sys' });
      await post(channel.id, 'from the API');
      await postSystemMessage(t.ctx, t.org.id, channel.id, 'pod p-1 finished', 'p-1');
      const [system, api] = await messages(channel.id);
      expect(system).toMatchObject({ content: 'pod p-1 finished', sender_type: 'system', pod_key: 'p-1' });
      expect(api).toMatchObject({ content: 'from the API', sender_type: 'api', pod_key: null });
    });
  });
});
