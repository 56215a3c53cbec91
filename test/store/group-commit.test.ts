/**
 * `Store.transaction` (src/store/db.ts) and SQLite's group commit (src/store/group-commit.ts).
 *
 * On every database: transactions started together all commit, each caller gets its own value; a
 * transaction whose work throws rejects with that very error and leaves none of its writes while
 * the others are kept; a transaction started while others run completes too; a commit that fails
 * on a deferred foreign key rejects only the transaction that broke it. On SQLite, where the
 * transactions arriving in one turn of the event loop share one database transaction (a savepoint
 * each) and one commit, also: that they really do (a later one reads the earlier ones' rows, a
 * second connection sees none of them until all are committed), that after a failed shared commit
 * (or SQLITE_FULL) each runs again alone so only the culprit fails, and that transactions queued
 * while a group runs run in a later group. Finally 200 tickets created at once through
 * `createTicket` get the numbers 1..200; creates started together of which some fail (before
 * writing, or after their first writes) answer each on its own, leave dense numbers and one event
 * per ticket in number order; a unique violation inside a shared transaction is the store's
 * conflict error (on SQLite those statements run straight on the connection: src/store/direct.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as admin from '../../src/domain/admin/service.ts';
import type { DomainContext } from '../../src/domain/context.ts';
import { createTicket, createTicketWithJson, type CreatedTicket } from '../../src/domain/tickets/service.ts';
import { directStatements } from '../../src/store/direct.ts';
import { eventsAfter } from '../../src/store/events.ts';
import { insertTicket, nextTicketNumber } from '../../src/store/tickets.ts';
import { isUniqueViolation, type Executor, type Store } from '../../src/store/db.ts';
import { DATABASES, createTestStore, type TestDatabase } from '../helpers/databases.ts';

// Tables of this suite only (not part of the schema): `label` is the primary key, so a row is
// named by its label on both databases; `gc_children.parent_id` is a foreign key checked at COMMIT.
async function createTables(store: Store): Promise<void> {
  await sql`create table gc_items (label varchar(100) primary key)`.execute(store.db);
  await sql`create table gc_parents (id integer primary key)`.execute(store.db);
  await sql`create table gc_children (id integer primary key, parent_id integer not null references gc_parents (id) deferrable initially deferred)`.execute(
    store.db,
  );
}

const insertItem = (db: Executor, label: string) => sql`insert into gc_items (label) values (${label})`.execute(db);

async function countItems(db: Executor, like = '%'): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`select count(*) as n from gc_items where label like ${like}`.execute(db);
  return Number(rows[0].n);
}

async function itemLabels(db: Executor): Promise<string[]> {
  const { rows } = await sql<{ label: string }>`select label from gc_items order by label`.execute(db);
  return rows.map((r) => r.label);
}

async function childIds(db: Executor): Promise<number[]> {
  const { rows } = await sql<{ id: number }>`select id from gc_children order by id`.execute(db);
  return rows.map((r) => Number(r.id));
}

/** What a second connection (another store on the same data) sees: only committed rows. */
async function withPeer<T>(database: TestDatabase, use: (peer: Store) => Promise<T>): Promise<T> {
  const peer = database.open();
  try {
    return await use(peer);
  } finally {
    await peer.close();
  }
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe.each(DATABASES)('Store.transaction on %s', (kind) => {
  let store: Store;
  let database: TestDatabase;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ store, database, cleanup } = await createTestStore(kind));
    await createTables(store);
  });
  afterEach(async () => cleanup());

  it('20 transactions started at once all commit, and each caller gets its own return value', async () => {
    const results = await Promise.all(
      range(20).map((i) =>
        store.transaction(async (trx) => {
          await insertItem(trx, `item-${String(i).padStart(2, '0')}`);
          return { i, mine: `value of ${i}` };
        }),
      ),
    );
    expect(results).toEqual(range(20).map((i) => ({ i, mine: `value of ${i}` })));
    await withPeer(database, async (peer) => {
      expect(await itemLabels(peer.db)).toEqual(range(20).map((i) => `item-${String(i).padStart(2, '0')}`));
    });
  });

  it("each transaction's work runs in its own caller's async context (who acts), even when it shares a commit with others", async () => {
    const acting = new AsyncLocalStorage<string>();
    const seen = await Promise.all(
      range(10).map((i) =>
        acting.run(`caller-${i}`, () =>
          store.transaction(async (trx) => {
            await insertItem(trx, `item-${i}`);
            return acting.getStore();
          }),
        ),
      ),
    );
    expect(seen).toEqual(range(10).map((i) => `caller-${i}`));
  });

  it('a transaction whose work throws rejects with that error and loses its writes; the others started with it are kept', async () => {
    const errors = new Map([3, 7].map((i) => [i, new Error(`work ${i} failed`)]));
    const results = await Promise.allSettled(
      range(10).map((i) =>
        store.transaction(async (trx) => {
          await insertItem(trx, `item-${i}`);
          const error = errors.get(i);
          if (error) throw error;
          return i;
        }),
      ),
    );
    for (const i of range(10)) {
      const result = results[i];
      if (errors.has(i)) {
        expect(result.status).toBe('rejected');
        expect((result as PromiseRejectedResult).reason).toBe(errors.get(i)); // the very object thrown
      } else {
        expect(result).toEqual({ status: 'fulfilled', value: i });
      }
    }
    const kept = range(10).filter((i) => !errors.has(i)).map((i) => `item-${i}`);
    expect(await itemLabels(store.db)).toEqual(kept);
    await withPeer(database, async (peer) => expect(await itemLabels(peer.db)).toEqual(kept));
  });

  it('work that throws after several writes (inserts, an update, a delete) leaves none of them', async () => {
    await insertItem(store.db, 'existing-1');
    await insertItem(store.db, 'existing-2');
    const failure = new Error('failed after five writes');
    let seenByLater: number | null = null;
    const [before, failed, after] = await Promise.allSettled([
      store.transaction(async (trx) => {
        await insertItem(trx, 'before');
        return 'before';
      }),
      store.transaction(async (trx) => {
        await insertItem(trx, 'failed-1');
        await insertItem(trx, 'failed-2');
        await insertItem(trx, 'failed-3');
        await sql`update gc_items set label = 'failed-renamed' where label = 'existing-1'`.execute(trx);
        await sql`delete from gc_items where label = 'existing-2'`.execute(trx);
        expect(await countItems(trx, 'failed-%')).toBe(4); // its own writes are visible to itself
        throw failure;
      }),
      store.transaction(async (trx) => {
        // Started with the failed one: never sees any of its writes.
        seenByLater = await countItems(trx, 'failed-%');
        await insertItem(trx, 'after');
        return 'after';
      }),
    ]);
    expect(before).toEqual({ status: 'fulfilled', value: 'before' });
    expect(failed).toEqual({ status: 'rejected', reason: failure });
    expect(after).toEqual({ status: 'fulfilled', value: 'after' });
    expect(seenByLater).toBe(0);
    expect(await itemLabels(store.db)).toEqual(['after', 'before', 'existing-1', 'existing-2']);
  });

  it('a unique violation inside one transaction rejects it with an error isUniqueViolation recognises; the others commit', async () => {
    await insertItem(store.db, 'taken');
    const results = await Promise.allSettled([
      store.transaction(async (trx) => insertItem(trx, 'a').then(() => 'a')),
      store.transaction(async (trx) => {
        await insertItem(trx, 'b-first-write');
        await insertItem(trx, 'taken');
        return 'b';
      }),
      store.transaction(async (trx) => insertItem(trx, 'c').then(() => 'c')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(isUniqueViolation((results[1] as PromiseRejectedResult).reason)).toBe(true);
    expect(await itemLabels(store.db)).toEqual(['a', 'c', 'taken']);
  });

  it('a deferred foreign-key violation that its own work rolls back (by throwing) does not fail the commit of the others', async () => {
    await sql`insert into gc_parents (id) values (1)`.execute(store.db);
    const failure = new Error('changed my mind');
    const results = await Promise.allSettled([
      store.transaction(async (trx) => sql`insert into gc_children (id, parent_id) values (1, 1)`.execute(trx).then(() => 1)),
      store.transaction(async (trx) => {
        await sql`insert into gc_children (id, parent_id) values (2, 999)`.execute(trx); // violation, deferred to COMMIT
        throw failure;
      }),
      store.transaction(async (trx) => sql`insert into gc_children (id, parent_id) values (3, 1)`.execute(trx).then(() => 3)),
    ]);
    expect(results).toEqual([
      { status: 'fulfilled', value: 1 },
      { status: 'rejected', reason: failure },
      { status: 'fulfilled', value: 3 },
    ]);
    expect(await childIds(store.db)).toEqual([1, 3]);
  });

  it('a commit failing on a deferred foreign key fails only the transaction that broke it; the others are kept', async () => {
    await sql`insert into gc_parents (id) values (1)`.execute(store.db);
    const results = await Promise.allSettled(
      range(5).map((i) =>
        store.transaction(async (trx) => {
          // The second one points at a parent that does not exist: its work succeeds, its COMMIT cannot.
          await sql`insert into gc_children (id, parent_id) values (${i + 1}, ${i === 1 ? 999 : 1})`.execute(trx);
          await insertItem(trx, `item-${i}`);
          return i;
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: kind === 'sqlite' ? 'SQLITE_CONSTRAINT_FOREIGNKEY' : '23503' });
    expect(results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<number>).value)).toEqual([0, 2, 3, 4]);
    expect(await childIds(store.db)).toEqual([1, 3, 4, 5]);
    expect(await itemLabels(store.db)).toEqual(['item-0', 'item-2', 'item-3', 'item-4']);
    // The store is still usable: the failed transaction was rolled back and its connection released.
    expect(await store.transaction(async (trx) => insertItem(trx, 'afterwards').then(() => 'ok'))).toBe('ok');
    await withPeer(database, async (peer) => expect(await countItems(peer.db, 'afterwards')).toBe(1));
  });

  it('transactions started from inside a running transaction (not awaited by it) complete as well', async () => {
    const later: Promise<string>[] = [];
    const first = await Promise.all(
      range(5).map((i) =>
        store.transaction(async (trx) => {
          await insertItem(trx, `first-${i}`);
          if (i === 0) {
            for (const j of range(3)) later.push(store.transaction(async (inner) => insertItem(inner, `later-${j}`).then(() => `later ${j}`)));
          }
          return i;
        }),
      ),
    );
    expect(first).toEqual(range(5));
    expect(await Promise.all(later)).toEqual(['later 0', 'later 1', 'later 2']);
    expect(await itemLabels(store.db)).toEqual([...range(5).map((i) => `first-${i}`), ...range(3).map((j) => `later-${j}`)]);
  });

  it('200 tickets created at once through createTicket get the numbers 1..200 exactly once', async () => {
    const ctx: DomainContext = { store, now: Date.now };
    const org = await admin.createOrg(ctx, { slug: 'race', name: 'Race', ticket_prefix: 'RACE' });
    // One invalid request in the middle: it fails alone, and takes no number.
    const results = await Promise.allSettled(
      range(201).map((i) =>
        i === 100
          ? createTicket(ctx, org, { type: 'task', title: 'invalid parent', parent_slug: 'RACE-999999' })
          : createTicket(ctx, org, { type: 'task', title: `ticket ${i}`, labels: [`l${i % 7}`] }),
      ),
    );
    const invalid = results[100];
    expect(invalid.status).toBe('rejected');
    expect((invalid as PromiseRejectedResult).reason).toMatchObject({ code: 'VALIDATION_FAILED' });
    const others = results.filter((_, i) => i !== 100);
    expect(others.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []))).toEqual([]);
    const slugs = others.map((r) => (r as PromiseFulfilledResult<{ slug: string }>).value.slug);
    const numbers = slugs.map((s) => Number(/^RACE-(\d+)$/.exec(s)![1])).sort((a, b) => a - b);
    expect(numbers).toEqual(range(200).map((i) => i + 1));

    await withPeer(database, async (peer) => {
      const db = peer.db;
      const stored = await db.selectFrom('tickets').select('slug').where('org_id', '=', org.id).execute();
      expect(stored.map((t) => t.slug).sort()).toEqual([...slugs].sort());
      const counts = await db.selectFrom('ticket_counts').select(['status', 'n']).where('org_id', '=', org.id).execute();
      expect(counts.map((c) => [c.status, Number(c.n)])).toEqual([['backlog', 200]]);
      const sequence = await db.selectFrom('ticket_sequences').select('last_number').where('org_id', '=', org.id).executeTakeFirstOrThrow();
      expect(Number(sequence.last_number)).toBe(200);
      const labelled = await db.selectFrom('ticket_labels').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', org.id).executeTakeFirstOrThrow();
      expect(Number(labelled.n)).toBe(200);
    });
  });

  it('concurrent creates where some fail after their first writes: each gets its own answer, the numbers stay dense, every ticket has one event, in number order', async () => {
    const ctx: DomainContext = { store, now: Date.now };
    const org = await admin.createOrg(ctx, { slug: 'mixed', name: 'Mixed', ticket_prefix: 'MIX' });
    // Refuses the ticket row itself: the sequence, the version and nothing else of that create were written before.
    if (kind === 'sqlite') {
      await sql`create trigger refuse_ticket before insert on tickets when new.title like 'refused%' begin select raise(abort, 'refused by the test'); end`.execute(store.db);
    } else {
      await sql`create function refuse_ticket() returns trigger language plpgsql as $$ begin if new.title like 'refused%' then raise exception 'refused by the test'; end if; return new; end $$`.execute(store.db);
      await sql`create trigger refuse_ticket before insert on tickets for each row execute function refuse_ticket()`.execute(store.db);
    }
    const refused = new Set([0, 7, 8, 29]);
    const results = await Promise.allSettled(
      range(30).map((i) =>
        i === 15
          ? createTicketWithJson(ctx, org, { type: 'task', title: `unknown assignee ${i}`, assignee_id: 999_999 })
          : createTicketWithJson(ctx, org, { type: 'task', title: refused.has(i) ? `refused ${i}` : `ticket ${i}`, labels: ['a', 'b'] }),
      ),
    );
    for (const i of range(30)) {
      const result = results[i];
      if (i === 15) expect((result as PromiseRejectedResult).reason).toMatchObject({ code: 'VALIDATION_FAILED' });
      else if (refused.has(i)) expect(String((result as PromiseRejectedResult).reason)).toContain('refused by the test');
      else expect((result as PromiseFulfilledResult<CreatedTicket>).value.ticket.title).toBe(`ticket ${i}`);
    }
    const created = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    expect(created.map((c) => JSON.parse(c.json).ticket.slug)).toEqual(created.map((c) => c.ticket.slug));
    const numberOf = (slug: string) => Number(/^MIX-(\d+)$/.exec(slug)![1]);
    expect(created.map((c) => numberOf(c.ticket.slug)).sort((a, b) => a - b)).toEqual(range(25).map((i) => i + 1));
    await withPeer(database, async (peer) => {
      const events = await eventsAfter(peer.db, org.id, 0, 1000);
      expect(events.map((e) => e.type)).toEqual(range(25).map(() => 'ticket.created'));
      // In the order of the commits (event ids) the numbers only grow: 1..25, each once.
      expect(events.map((e) => numberOf(e.ticket_slug!))).toEqual(range(25).map((i) => i + 1));
      expect(events.map((e) => e.payload).sort()).toEqual(created.map((c) => c.json).sort());
      const sequence = await peer.db.selectFrom('ticket_sequences').select('last_number').where('org_id', '=', org.id).executeTakeFirstOrThrow();
      expect(Number(sequence.last_number)).toBe(25);
      const counts = await peer.db.selectFrom('ticket_counts').select(['status', 'n']).where('org_id', '=', org.id).execute();
      expect(counts.map((c) => [c.status, Number(c.n)])).toEqual([['backlog', 25]]);
    });
  });

  it('a create whose ticket row breaks a unique index throws the store conflict error, and only its own writes are undone', async () => {
    const ctx: DomainContext = { store, now: Date.now };
    const org = await admin.createOrg(ctx, { slug: 'dup', name: 'Dup', ticket_prefix: 'DUP' });
    const { id, parent_slug: parentSlug, ...first } = await createTicket(ctx, org, { type: 'task', title: 'first' });
    expect([id, parentSlug]).toEqual([expect.any(Number), null]);
    const [duplicate, other] = await Promise.allSettled([
      store.transaction(async (trx) => {
        await nextTicketNumber(trx, org.id, 'DUP');
        return insertTicket(trx, { ...first, title: 'same slug' }, ['x']);
      }),
      createTicket(ctx, org, { type: 'task', title: 'second' }),
    ]);
    expect(isUniqueViolation((duplicate as PromiseRejectedResult).reason)).toBe(true);
    // The number the failed one took was given back.
    expect((other as PromiseFulfilledResult<{ slug: string }>).value.slug).toBe('DUP-2');
    await withPeer(database, async (peer) => {
      const stored = await peer.db.selectFrom('tickets').select('title').where('org_id', '=', org.id).orderBy('id').execute();
      expect(stored.map((t) => t.title)).toEqual(['first', 'second']);
    });
    // On SQLite the group's transactions run the hot statements straight on the connection they hold.
    expect(await store.transaction(async (trx) => directStatements(trx) !== undefined)).toBe(kind === 'sqlite');
    expect(directStatements(store.db)).toBeUndefined();
  });
});

describe('SQLite group commit: transactions arriving together share one commit', () => {
  let store: Store;
  let database: TestDatabase;
  let cleanup: () => Promise<void>;
  /** A second connection to the same file: it sees committed rows only. */
  let reader: SQLite.Database;
  const committedItems = () => Number((reader.prepare('select count(*) as n from gc_items').get() as { n: number }).n);

  beforeEach(async () => {
    ({ store, database, cleanup } = await createTestStore('sqlite'));
    await createTables(store);
    reader = new SQLite(`${database.dataDir}/drover.sqlite`, { readonly: true, fileMustExist: true });
  });
  afterEach(async () => {
    reader.close();
    await cleanup();
  });

  it('20 started in one turn run in order in one database transaction: each sees the rows of those before it, no other connection sees any until all are committed', async () => {
    const seen: { inTransaction: number; committed: number }[] = [];
    const visibleWhenSettled: number[] = [];
    await Promise.all(
      range(20).map((i) =>
        store
          .transaction(async (trx) => {
            await insertItem(trx, `item-${String(i).padStart(2, '0')}`);
            seen[i] = { inTransaction: await countItems(trx), committed: committedItems() };
            return i;
          })
          .then((value) => {
            // Settled only after the shared commit: the row is durable and visible to everyone.
            visibleWhenSettled[value] = committedItems();
          }),
      ),
    );
    expect(seen).toEqual(range(20).map((i) => ({ inTransaction: i + 1, committed: 0 })));
    expect(visibleWhenSettled).toEqual(Array(20).fill(20));
    expect(committedItems()).toBe(20);
  });

  it('a shared commit that fails runs each transaction again on its own: nothing of the failed group is kept, the culprit fails alone', async () => {
    await sql`insert into gc_parents (id) values (1)`.execute(store.db);
    const workDone: number[] = [];
    const results = await Promise.allSettled(
      range(6).map((i) =>
        store.transaction(async (trx) => {
          await sql`insert into gc_children (id, parent_id) values (${i + 1}, ${i === 4 ? 999 : 1})`.execute(trx);
          workDone.push(i);
          return i;
        }),
      ),
    );
    // Every work ran in the shared transaction, whose commit failed, then once more alone.
    expect(workDone).toEqual([...range(6), ...range(6)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((results[4] as PromiseRejectedResult).reason).toMatchObject({ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' });
    expect(reader.prepare('select count(*) as n from gc_children').get()).toEqual({ n: 5 });
    expect(await childIds(store.db)).toEqual([1, 2, 3, 4, 6]);
  });

  it('transactions queued while a group runs run in a later group, after its commit', async () => {
    const later: Promise<{ committedBefore: number; inTransaction: number }>[] = [];
    await Promise.all(
      range(20).map((i) =>
        store.transaction(async (trx) => {
          await insertItem(trx, `first-${String(i).padStart(2, '0')}`);
          if (i === 10) {
            // Queued while this group is running: they cannot join it.
            for (const j of range(5)) {
              later.push(
                store.transaction(async (inner) => {
                  const committedBefore = committedItems();
                  await insertItem(inner, `later-${j}`);
                  return { committedBefore, inTransaction: await countItems(inner) };
                }),
              );
            }
          }
          return i;
        }),
      ),
    );
    const outcomes = await Promise.all(later);
    // The first group (20 rows) was committed before any of them ran; they ran in order together.
    expect(outcomes).toEqual(range(5).map((j) => ({ committedBefore: 20, inTransaction: 21 + j })));
    expect(committedItems()).toBe(25);
  });

  /**
   * "Disk full" (max_page_count stands in for a full disk): on SQLITE_FULL SQLite rolls back the whole
   * database transaction, not just the statement, so the group's savepoints are gone.
   */
  async function fillTheDiskDuring<T>(use: () => Promise<T>): Promise<T> {
    const { rows } = await sql<{ page_count: number }>`pragma page_count`.execute(store.db);
    await sql.raw(`pragma max_page_count = ${rows[0].page_count + 2}`).execute(store.db);
    try {
      return await use();
    } finally {
      await sql`pragma max_page_count = 1073741823`.execute(store.db);
    }
  }
  const groupWithOneTooLarge = () =>
    Promise.allSettled(
      range(4).map((i) =>
        store.transaction(async (trx) => {
          await insertItem(trx, `item-${i}`);
          if (i === 1) await insertItem(trx, 'z'.repeat(200_000)); // needs ~50 more pages
          return i;
        }),
      ),
    );

  it('a transaction failing with SQLITE_FULL (SQLite abandons the whole database transaction): every caller is answered, each outcome matches what was kept, the store keeps working', async () => {
    const results = await fillTheDiskDuring(groupWithOneTooLarge);
    expect(results[1].status).toBe('rejected');
    const kept = new Set(await itemLabels(store.db));
    expect(kept.has('item-1')).toBe(false);
    for (const i of range(4)) expect(results[i].status === 'fulfilled', `item-${i}: ${results[i].status}`).toBe(kept.has(`item-${i}`));
    expect(committedItems()).toBe(kept.size);
    expect(await store.transaction(async (trx) => insertItem(trx, 'afterwards').then(() => 'ok'))).toBe('ok');
    expect(committedItems()).toBe(kept.size + 1);
  });

  // SQLITE_FULL (like SQLITE_IOERR, SQLITE_NOMEM or a trigger's RAISE(ROLLBACK)) makes SQLite abandon
  // the whole shared transaction; each of its transactions then runs again on its own, so the one
  // causing it fails alone, with its own error.
  it('a transaction failing with SQLITE_FULL fails alone: the others of its group commit', async () => {
    const results = await fillTheDiskDuring(groupWithOneTooLarge);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(await itemLabels(store.db)).toEqual(['item-0', 'item-2', 'item-3']);
  });

  it('many more transactions than fit one group: all commit, in the order they were started', async () => {
    const seen = await Promise.all(
      range(300).map((i) =>
        store.transaction(async (trx) => {
          await insertItem(trx, `item-${String(i).padStart(3, '0')}`);
          return countItems(trx);
        }),
      ),
    );
    expect(seen).toEqual(range(300).map((i) => i + 1));
    expect(committedItems()).toBe(300);
  });
});
