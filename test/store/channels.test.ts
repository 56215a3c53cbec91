import { CompiledQuery, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as admin from '../../src/domain/admin/service.ts';
import type { Principal } from '../../src/domain/auth/authenticate.ts';
import type { DomainContext } from '../../src/domain/context.ts';
import { createChannel, listChannels, postMessage, postSystemMessage, updateChannel } from '../../src/domain/channels/service.ts';
import * as channels from '../../src/store/channels.ts';
import * as messages from '../../src/store/channel-messages.ts';
import { isUniqueViolation, type DatabaseKind } from '../../src/store/db.ts';
import type { NewChannelMessage, OrgRow } from '../../src/store/schema.ts';
import { DATABASES, createTestStore } from '../helpers/databases.ts';

describe.each(DATABASES)('channel store on %s', (kind: DatabaseKind) => {
  let ctx: DomainContext;
  let org: OrgRow;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    const created = await createTestStore(kind);
    cleanup = created.cleanup;
    let clock = Date.parse('2026-01-01T00:00:00.000Z');
    ctx = { store: created.store, now: () => (clock += 1000) };
    org = await admin.createOrg(ctx, { slug: 'acme', name: 'Acme' });
  });
  afterEach(async () => cleanup());

  const rows = (channelId: number, count: number, from = 0): NewChannelMessage[] =>
    Array.from({ length: count }, (_, i) => ({
      org_id: org.id,
      channel_id: channelId,
      content: `m${from + i + 1}`,
      sender_type: 'api' as const,
      pod_key: null,
      created_at: 1_700_000_000_000 + from + i,
    }));

  it('keeps names unique per org ignoring case, through the unique index', async () => {
    const other = await admin.createOrg(ctx, { slug: 'other', name: 'Other' });
    const base = { description: null, repository_id: null, ticket_slug: null, document: null, created_at: 1, updated_at: 1 };
    await channels.insertChannel(ctx.store.db, { ...base, org_id: org.id, name: 'Ops', name_key: 'ops' });
    await channels.insertChannel(ctx.store.db, { ...base, org_id: other.id, name: 'ops', name_key: 'ops' });
    const clash = await channels.insertChannel(ctx.store.db, { ...base, org_id: org.id, name: 'OPS', name_key: 'ops' }).catch((e: unknown) => e);
    expect(isUniqueViolation(clash)).toBe(true);
    await expect(createChannel(ctx, org.id, { name: 'oPs' })).rejects.toMatchObject({ code: 'ALREADY_EXISTS' });
    const second = await createChannel(ctx, org.id, { name: 'dev' });
    await expect(updateChannel(ctx, org.id, second.id, { name: 'OPS', document: 'lost' })).rejects.toMatchObject({ code: 'ALREADY_EXISTS' });
    expect((await channels.findChannel(ctx.store.db, org.id, second.id))?.document).toBeNull();
  });

  it('lists newest first without documents, filters, and counts', async () => {
    const a = await createChannel(ctx, org.id, { name: 'aa', document: 'big' });
    await createChannel(ctx, org.id, { name: 'bb' });
    await updateChannel(ctx, org.id, a.id, { archived: true });
    const visible = await listChannels(ctx, org.id, { limit: 10, offset: 0, includeArchived: false });
    expect(visible.total).toBe(1);
    expect(visible.rows.map((r) => r.name)).toEqual(['bb']);
    const all = await listChannels(ctx, org.id, { limit: 10, offset: 0, includeArchived: true });
    expect(all.rows.map((r) => r.name)).toEqual(['bb', 'aa']);
    expect(all.rows[1]).not.toHaveProperty('document');
    expect(all.rows[1].archived).toBe(1);
    expect((await listChannels(ctx, org.id, { limit: 1, offset: 1, includeArchived: true })).rows.map((r) => r.name)).toEqual(['aa']);
  });

  it('pages messages by id cursors with exact results', async () => {
    const channel = await createChannel(ctx, org.id, { name: 'paging' });
    const other = await createChannel(ctx, org.id, { name: 'other' });
    await ctx.store.db.transaction().execute(async (trx) => {
      // Interleave two channels so ids of one channel are not contiguous.
      for (let i = 0; i < 10; i++) {
        await messages.insertMessages(trx, rows(channel.id, 1, i));
        await messages.insertMessages(trx, rows(other.id, 1, 100 + i));
      }
    });
    const page = async (p: Omit<messages.MessagePage, 'limit'> & { limit?: number }) =>
      (await messages.listMessages(ctx.store.db, channel.id, { limit: 50, ...p })).map((m) => m.content);
    const all = await messages.listMessages(ctx.store.db, channel.id, { limit: 50 });
    const id = (n: number) => all.find((m) => m.content === `m${n}`)!.id;
    expect(all.map((m) => m.content)).toEqual(['m10', 'm9', 'm8', 'm7', 'm6', 'm5', 'm4', 'm3', 'm2', 'm1']);
    expect(await page({ limit: 2, before: id(5) })).toEqual(['m4', 'm3']);
    expect(await page({ limit: 2, after: id(5) })).toEqual(['m7', 'm6']);
    expect(await page({ after: id(2), before: id(6) })).toEqual(['m5', 'm4', 'm3']);
    expect(await page({ before: id(1) })).toEqual([]);
  });

  it('records sender types: api from an API key, system from the service; refuses archived channels and foreign pods', async () => {
    const channel = await createChannel(ctx, org.id, { name: 'senders' });
    const principal: Principal = { kind: 'api_key', keyId: 1, keyName: 'k', user: null, org, scopes: ['channels:write'] };
    const api = await postMessage(ctx, principal, channel.id, { content: 'hello' });
    expect(api).toMatchObject({ sender_type: 'api', pod_key: null, channel_id: channel.id, org_id: org.id });
    await expect(postMessage(ctx, principal, channel.id, { content: 'x', pod_key: 'p-1' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      message: 'pod_key must be a pod of this organization',
    });
    const system = await postSystemMessage(ctx, org.id, channel.id, 'pod p-1 finished', 'p-1');
    expect(system).toMatchObject({ sender_type: 'system', pod_key: 'p-1' });
    await expect(postSystemMessage(ctx, org.id, channel.id, '')).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await updateChannel(ctx, org.id, channel.id, { archived: true });
    await expect(postSystemMessage(ctx, org.id, channel.id, 'late')).rejects.toMatchObject({ code: 'CHANNEL_ARCHIVED' });
    await expect(postMessage(ctx, principal, channel.id, { content: 'late' })).rejects.toMatchObject({ code: 'CHANNEL_ARCHIVED' });
    const other = await admin.createOrg(ctx, { slug: 'other', name: 'Other' });
    await expect(postSystemMessage(ctx, other.id, channel.id, 'wrong org')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await messages.listMessages(ctx.store.db, channel.id, { limit: 10 })).toHaveLength(2);
  });

  /** The plan of the page query, as text, from the database's own EXPLAIN. */
  async function plan(page: messages.MessagePage, channelId: number): Promise<string> {
    const compiled = messages.messagePageQuery(ctx.store.db, channelId, page);
    const prefix = kind === 'sqlite' ? 'EXPLAIN QUERY PLAN ' : 'EXPLAIN ';
    const result = await ctx.store.db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(prefix + compiled.sql, [...compiled.parameters]));
    return result.rows.map((r) => String(kind === 'sqlite' ? r.detail : r['QUERY PLAN'])).join('\n');
  }

  it('reads every page by a range scan of the (channel_id, id) index: no full scan, no sort, no offset', async () => {
    const big = await createChannel(ctx, org.id, { name: 'big' });
    const small = await createChannel(ctx, org.id, { name: 'small' });
    await ctx.store.db.transaction().execute(async (trx) => {
      await messages.insertMessages(trx, rows(big.id, 19_900));
      await messages.insertMessages(trx, rows(small.id, 100, 19_900));
    });
    await sql`analyze`.execute(ctx.store.db);
    const newest = await messages.listMessages(ctx.store.db, big.id, { limit: 1 });
    const middle = newest[0].id - 10_000;

    for (const channelId of [big.id, small.id]) {
      for (const page of [{ limit: 50 }, { limit: 50, before: middle }, { limit: 50, after: middle }, { limit: 100, after: 5, before: middle }]) {
        const text = await plan(page, channelId);
        expect(text, JSON.stringify(page)).toContain('channel_messages_page');
        if (kind === 'sqlite') {
          // Both cursors bound the index range: the scan starts at the page, however deep.
          expect(text).toMatch(/SEARCH channel_messages USING INDEX channel_messages_page \(channel_id=\? AND id>\? AND id<\?\)/);
          expect(text).not.toMatch(/SCAN channel_messages|TEMP B-TREE/);
        } else {
          expect(text).toMatch(/Index Scan( Backward)? using channel_messages_page on channel_messages/);
          expect(text).toMatch(/Index Cond: \(\(ROW\(channel_id, id\) > ROW\(.*\)\) AND \(ROW\(channel_id, id\) < ROW\(.*\)\)\)/);
          expect(text).not.toMatch(/Seq Scan|Sort|Bitmap|Filter/);
        }
      }
    }
    expect(messages.messagePageQuery(ctx.store.db, big.id, { limit: 50, before: middle }).sql).not.toMatch(/offset|count/i);
    const deep = await messages.listMessages(ctx.store.db, big.id, { limit: 3, before: middle });
    expect(deep.map((m) => m.id)).toEqual([middle - 1, middle - 2, middle - 3]);
  });
});
