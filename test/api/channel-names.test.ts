/**
 * Channel names (docs/api.md "Channels and messages"): NFKC-normalized and trimmed, control,
 * format and other invisible characters refused, before uniqueness is checked, on create and on
 * update; so `ſecret-a`, `secret-ａ`, `secret-a<ZWSP>`, `secret-a ` and `secret-a` can no longer
 * coexist. Rows written before the rule keep their name (docs/decisions.md "Channels and messages").
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { expectError } from '../helpers/errors.ts';

describe.each(DATABASES)('channel names on %s', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await startTestApp(kind);
  });
  afterEach(async () => t.close());

  const create = (name: string) => t.request({ method: 'POST', url: t.path('/channels'), payload: { name } });
  const rename = (id: number, name: string) => t.request({ method: 'PUT', url: t.path(`/channels/${id}`), payload: { name } });
  const created = async (name: string): Promise<{ id: number; name: string }> => {
    const response = await create(name);
    expect(response.statusCode, response.body).toBe(201);
    return response.json().channel;
  };
  const names = async () =>
    (await t.store.db.selectFrom('channels').select(['name', 'name_key']).where('org_id', '=', t.org.id).orderBy('id').execute()).map((row) => [row.name, row.name_key]);

  it('secret-a, then its look-alikes: ſecret-a, secret-ａ and SECRET-A are taken (409), secret-a<ZWSP> refused (400), secret-a␠ taken', async () => {
    await created('secret-a');
    for (const name of ['ſecret-a', 'secret-ａ', 'SECRET-A', 'secret-a ', ' secret-a', 'ｓｅｃｒｅｔ－ａ']) {
      expectError(await create(name), 409, 'ALREADY_EXISTS');
    }
    const zwsp = expectError(await create('secret-a\u200b'), 400, 'VALIDATION_FAILED');
    expect(zwsp.details).toEqual([{ field: '/name', message: expect.stringContaining('U+200B at character 9') }]);
    expect(await names()).toEqual([['secret-a', 'secret-a']]);
  });

  it('the same holds whichever comes first: ſecret-a is stored as secret-a', async () => {
    const first = await created('  ſecret-ａ ');
    expect(first.name).toBe('secret-a');
    expectError(await create('secret-a'), 409, 'ALREADY_EXISTS');
    const fetched = await t.request({ method: 'GET', url: t.path(`/channels/${first.id}`) });
    expect(fetched.json().channel.name).toBe('secret-a');
    // A ligature and a compatibility form become their plain letters; the case is kept.
    expect((await created('ﬁle-Ｓync')).name).toBe('file-Sync');
  });

  it.each([
    ['a control character (BEL)', 'bell\u0007'],
    ['an escape sequence', 'red\u001b[31m'],
    ['a tab inside', 'tab\there'],
    ['a trailing newline', 'line\n'],
    ['a zero-width joiner', 'jo\u200dined'],
    ['a right-to-left override', 'evil\u202etxt.exe'],
    ['a left-to-right mark', '\u200eleft'],
    ['a soft hyphen', 'soft\u00adhyphen'],
    ['a byte order mark', '\ufeffbom'],
    ['a line separator', 'two\u2028lines'],
    ['a Hangul filler', 'filler\u3164'],
    ['a variation selector', 'heart\ufe0f'],
    ['a lone surrogate', 'half\ud800'],
  ])('refuses %s (400 naming /name), writing nothing', async (_label, name) => {
    const body = expectError(await create(name), 400, 'VALIDATION_FAILED');
    expect(body.details?.[0].field).toBe('/name');
    expect(body.error).toMatch(/control, format or invisible characters/);
    expect(await names()).toEqual([]);
  });

  it('the length counts once normalized and trimmed: " a " is too short, 6 × U+FDFA (108 characters in NFKC) too long', async () => {
    expect(expectError(await create(' a '), 400, 'VALIDATION_FAILED').error).toMatch(/2 to 100 characters once normalized/);
    expect(expectError(await create('\ufdfa'.repeat(6)), 400, 'VALIDATION_FAILED').details?.[0].field).toBe('/name');
    expect((await created('\ufdfa'.repeat(5))).name).toHaveLength(90);
  });

  it('renaming applies the same rules: taken look-alikes are 409, hidden characters 400, the stored name normalized', async () => {
    await created('secret-a');
    const other = await created('other');
    expectError(await rename(other.id, 'ſecret-a'), 409, 'ALREADY_EXISTS');
    expectError(await rename(other.id, 'secret-a\u200b'), 400, 'VALIDATION_FAILED');
    // A bad name is refused before the channel is looked up (400 before 404).
    expectError(await rename(999_999, 'x\u200b'), 400, 'VALIDATION_FAILED');
    const renamed = await rename(other.id, ' ｓecret-b ');
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json().channel.name).toBe('secret-b');
    expect(await names()).toEqual([['secret-a', 'secret-a'], ['secret-b', 'secret-b']]);
  });

  it('rows written before the rule keep their name: both stay usable, and renaming one applies the rule', async () => {
    // As an earlier version stored them: the name as given, its lower-cased form as the key.
    const now = Date.now();
    const legacy = { org_id: t.org.id, description: null, repository_id: null, ticket_slug: null, document: null, archived: 0, created_at: now, updated_at: now };
    await t.store.db.insertInto('channels').values({ ...legacy, name: 'secret-a', name_key: 'secret-a' }).execute();
    const lookalike = await t.store.db.insertInto('channels').values({ ...legacy, name: 'ſecret-a', name_key: 'ſecret-a' }).returning('id').executeTakeFirstOrThrow();
    const id = Number(lookalike.id);
    const listed = await t.request({ method: 'GET', url: t.path('/channels') });
    expect(listed.json().channels.map((c: { name: string }) => c.name).sort()).toEqual(['secret-a', 'ſecret-a']);
    // Changing anything but the name leaves the name alone.
    const described = await t.request({ method: 'PUT', url: t.path(`/channels/${id}`), payload: { description: 'kept as it was' } });
    expect(described.statusCode, described.body).toBe(200);
    expect(described.json().channel.name).toBe('ſecret-a');
    // Its own name, normalized, is the other channel's: 409. A new name is normalized.
    expectError(await rename(id, 'ſecret-a'), 409, 'ALREADY_EXISTS');
    expect((await rename(id, 'ſecret-legacy')).json().channel.name).toBe('secret-legacy');
    // New channels are checked against the normalized keys.
    expectError(await create('SECRET-A'), 409, 'ALREADY_EXISTS');
  });
});
