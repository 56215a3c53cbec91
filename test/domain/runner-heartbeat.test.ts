/**
 * A runner's heartbeat (src/domain/runners/status.ts): one that changes only the time is one
 * update with no event; one that changes the status (draining, back online after going silent)
 * records `runner.updated`; one from a replaced connection changes nothing (both databases).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as admin from '../../src/domain/admin/service.ts';
import type { DomainContext } from '../../src/domain/context.ts';
import { runnerHeartbeat } from '../../src/domain/runners/status.ts';
import type { Store } from '../../src/store/db.ts';
import { DATABASES, createTestStore } from '../helpers/databases.ts';
import { insertRunner } from '../helpers/runners.ts';

describe.each(DATABASES)('runner heartbeats on %s', (kind) => {
  let store: Store;
  let ctx: DomainContext;
  let cleanup: () => Promise<void>;
  let clock = 0;

  beforeEach(async () => {
    const created = await createTestStore(kind);
    store = created.store;
    cleanup = created.cleanup;
    clock = Date.parse('2026-05-01T00:00:00.000Z');
    ctx = { store, now: () => clock };
  });
  afterEach(async () => cleanup());

  const row = (id: number) => store.db.selectFrom('runners').select(['status', 'last_heartbeat_at', 'updated_at']).where('id', '=', id).executeTakeFirstOrThrow();
  const runnerEvents = async () =>
    (await store.db.selectFrom('events').select(['type', 'payload']).where('type', '=', 'runner.updated').orderBy('id').execute()).map((e) => /"status":"(\w+)"/.exec(e.payload)?.[1]);

  it('a steady heartbeat moves only the time; a change of status records runner.updated; a replaced connection changes nothing', async () => {
    const org = await admin.createOrg(ctx, { slug: 'acme', name: 'Acme' });
    const id = await insertRunner(store, org.id, { connection_id: 'c1', status: 'online' }, clock);

    clock += 10_000;
    expect(await runnerHeartbeat(ctx, id, 'c1', 'online', clock)).toBe(true);
    expect(await row(id)).toMatchObject({ status: 'online', last_heartbeat_at: clock, updated_at: clock });
    expect(await runnerEvents()).toEqual([]);

    clock += 10_000;
    expect(await runnerHeartbeat(ctx, id, 'c1', 'draining', clock)).toBe(true);
    expect(await row(id)).toMatchObject({ status: 'draining', last_heartbeat_at: clock });
    expect(await runnerEvents()).toEqual(['draining']);

    clock += 10_000;
    expect(await runnerHeartbeat(ctx, id, 'c1', 'draining', clock)).toBe(true);
    expect(await runnerEvents()).toEqual(['draining']);

    // Gone silent (offline, keeping its connection id), then heard again: back online, with its event.
    await store.db.updateTable('runners').set({ status: 'offline' }).where('id', '=', id).execute();
    clock += 10_000;
    expect(await runnerHeartbeat(ctx, id, 'c1', 'online', clock)).toBe(true);
    expect(await row(id)).toMatchObject({ status: 'online', last_heartbeat_at: clock });
    expect(await runnerEvents()).toEqual(['draining', 'online']);

    const before = await row(id);
    clock += 10_000;
    expect(await runnerHeartbeat(ctx, id, 'c-old', 'online', clock)).toBe(false);
    expect(await runnerHeartbeat(ctx, id, 'c-old', 'draining', clock)).toBe(false);
    expect(await row(id)).toEqual(before);
    expect(await runnerEvents()).toEqual(['draining', 'online']);
  });
});
