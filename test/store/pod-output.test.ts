/**
 * Pod output stored append-only (docs/api.md "Pods"; docs/decisions.md "Pod output storage"): each chunk is a row at its byte offset;
 * what falls before the kept 1 MiB is trimmed now and then. Reads must give exactly what the
 * former one-row store gave (the last 1 MiB cut on a character boundary, total_bytes counting
 * everything), and a write must never read or rewrite stored output (a pod writing 200 MB used to
 * rewrite a 1 MiB row per chunk, slowing every other organization down).
 */
import fc from 'fast-check';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as admin from '../../src/domain/admin/service.ts';
import type { DomainContext } from '../../src/domain/context.ts';
import { OUTPUT_COALESCE_MS, PodOutputSink } from '../../src/domain/pods/output.ts';
import { DEFAULT_QUOTAS } from '../../src/domain/quotas/model.ts';
import type { Store } from '../../src/store/db.ts';
import { migrateTo, migrateToLatest } from '../../src/store/migrate.ts';
import { OUTPUT_KEEP_BYTES, keepTail, readPodOutput, readPodOutputFrom } from '../../src/store/pod-output.ts';
import type { PodRow } from '../../src/store/schema-runners.ts';
import { DATABASES, createTestDatabase, createTestStore } from '../helpers/databases.ts';
import { insertPodRow } from '../helpers/pods.ts';
import { insertRunner } from '../helpers/runners.ts';

const MiB = 1024 * 1024;
/** No output quota: these tests are about storage. */
const UNLIMITED = { ...DEFAULT_QUOTAS, pod_output_bytes_per_sec: 0 };

/** The former one-row store, as a reference: every chunk re-cut the kept tail. */
function reference(chunks: string[]): { data: string; total: number } {
  let data = '';
  let total = 0;
  for (const chunk of chunks) {
    data = keepTail(data + chunk);
    total += Buffer.byteLength(chunk);
  }
  return { data, total };
}

/** Text of about `bytes` bytes mixing 1-, 2-, 3- and 4-byte characters, different for each seed. */
function text(bytes: number, seed: number): string {
  const alphabet = ['a', 'é', '€', '😀', '\n', 'Z', 'ß', '中'];
  let out = '';
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const ch = alphabet[(i * 7 + seed) % alphabet.length];
    out += ch;
    size += Buffer.byteLength(ch);
  }
  return out;
}

describe.each(DATABASES)('pod output store on %s', (kind) => {
  let store: Store;
  let ctx: DomainContext;
  let cleanup: () => Promise<void>;
  let orgId: number;
  let runnerId: number;

  beforeEach(async () => {
    const created = await createTestStore(kind);
    store = created.store;
    cleanup = created.cleanup;
    ctx = { store, now: Date.now, quotas: UNLIMITED };
    orgId = (await admin.createOrg(ctx, { slug: 'acme', name: 'Acme' })).id;
    runnerId = await insertRunner(store, orgId);
  });
  afterEach(async () => cleanup());

  const newPod = () => insertPodRow(store, orgId, runnerId);

  /** A sink on a clock of its own: each write moves it on by `gap` ms (0: all at once). */
  function sink(gap: number | (() => number) = 0, on: DomainContext = ctx): PodOutputSink {
    let now = 1_000_000;
    return new PodOutputSink(on, { id: runnerId, org_id: orgId }, () => (now += typeof gap === 'number' ? gap : gap()));
  }

  /** Writes the chunks, then whatever still waits. */
  async function write(pod: PodRow, chunks: string[], into = sink()): Promise<void> {
    for (const chunk of chunks) await into.write(pod.key, chunk);
    await into.flushAll();
  }

  it('reads exactly what the one-row store gave, whatever the chunking and pace: the last 1 MiB on a character boundary, total_bytes counting everything', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 256 * 1024 }), { minLength: 1, maxLength: 24 }),
        fc.integer({ min: 0, max: 7 }),
        fc.array(fc.integer({ min: 0, max: 250 }), { minLength: 1, maxLength: 10 }),
        async (sizes, seed, gaps) => {
        const pod = await newPod();
        const chunks = sizes.map((size, i) => text(size, seed + i));
        let g = 0;
        // Some writes come within the coalescing window of the last one, some after it.
        await write(pod, chunks, sink(() => gaps[g++ % gaps.length]));
        const expected = reference(chunks);
        const stored = await readPodOutput(store.db, pod.id);
        expect(stored.totalBytes).toBe(expected.total);
        expect(stored.data === expected.data, `${sizes.length} chunks of ${sizes.join(',')} bytes`).toBe(true);
        expect(Buffer.byteLength(stored.data)).toBeLessThanOrEqual(OUTPUT_KEEP_BYTES);
        },
      ),
      { numRuns: 12 },
    );
  });

  it('keeps only about the tail: after 5 MiB in 64 KiB chunks, less than 2 MiB + a chunk is stored, and the read is whole', async () => {
    const pod = await newPod();
    const chunks = Array.from({ length: 80 }, (_, i) => text(64 * 1024, i));
    await write(pod, chunks);
    const rows = await store.db.selectFrom('pod_output_chunks').select(['data', 'start_offset', 'end_offset']).where('pod_id', '=', pod.id).execute();
    const stored = rows.reduce((sum, r) => sum + Buffer.byteLength(r.data), 0);
    expect(stored).toBeLessThan(2 * MiB + 64 * 1024 + 8);
    for (const row of rows) expect(Number(row.end_offset) - Number(row.start_offset)).toBe(Buffer.byteLength(row.data));
    const expected = reference(chunks);
    const read = await readPodOutput(store.db, pod.id);
    expect(read.totalBytes).toBe(expected.total);
    expect(read.data === expected.data).toBe(true);
  });

  /** The statements a sink sends, by kind and table. */
  function recorded(gap: number) {
    const seen: { kind: string; table: string }[] = [];
    const recorder: KyselyPlugin = {
      transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
        seen.push({ kind: args.node.kind, table: tableOf(args.node) });
        return args.node;
      },
      async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
        return args.result;
      },
    };
    return { seen, into: sink(gap, { ...ctx, store: { ...store, db: store.db.withPlugin(recorder) } }) };
  }

  it('a write never reads or rewrites stored output: output coming now and then is one INSERT per chunk, no UPDATE, a trim per MiB', async () => {
    const pod = await newPod();
    const { seen, into } = recorded(OUTPUT_COALESCE_MS);
    const chunks = Array.from({ length: 48 }, (_, i) => text(64 * 1024, i)); // 3 MiB
    await write(pod, chunks, into);
    expect(seen.filter((q) => q.kind === 'UpdateQueryNode')).toEqual([]);
    expect(seen.filter((q) => q.kind === 'InsertQueryNode' && q.table === 'pod_output_chunks')).toHaveLength(48);
    // The pod and where its output ends are read once, not per chunk (the org's quota every 10 s).
    const selects = seen.filter((q) => q.kind === 'SelectQueryNode');
    expect(selects.filter((q) => q.table === 'pods')).toHaveLength(1);
    expect(selects.filter((q) => q.table === 'pod_output_chunks')).toHaveLength(1);
    expect(selects.filter((q) => q.table !== 'org_quotas')).toHaveLength(2);
    const trims = seen.filter((q) => q.kind === 'DeleteQueryNode');
    expect(trims.length).toBeGreaterThanOrEqual(1);
    expect(trims.length).toBeLessThanOrEqual(2);
    expect((await readPodOutput(store.db, pod.id)).data === reference(chunks).data).toBe(true);
  });

  it('output arriving fast is written together, and what it supersedes is never written: 3 MiB at once → 2 INSERTs of at most 1 MiB + a chunk', async () => {
    const pod = await newPod();
    const { seen, into } = recorded(0);
    const chunks = Array.from({ length: 48 }, (_, i) => text(64 * 1024, i));
    await write(pod, chunks, into);
    expect(seen.filter((q) => q.kind === 'UpdateQueryNode')).toEqual([]);
    expect(seen.filter((q) => q.kind === 'InsertQueryNode' && q.table === 'pod_output_chunks')).toHaveLength(2); // the first at once, the rest together
    const rows = await store.db.selectFrom('pod_output_chunks').select('data').where('pod_id', '=', pod.id).execute();
    expect(rows.reduce((sum, r) => sum + Buffer.byteLength(r.data), 0)).toBeLessThanOrEqual(OUTPUT_KEEP_BYTES + 2 * 64 * 1024 + 8);
    const expected = reference(chunks);
    expect(await readPodOutput(store.db, pod.id)).toEqual({ data: expected.data, totalBytes: expected.total });
  });

  it('output waiting to be written is written by itself within the coalescing window', async () => {
    const pod = await newPod();
    const into = new PodOutputSink(ctx, { id: runnerId, org_id: orgId });
    await into.write(pod.key, 'first\n'); // written at once
    await into.write(pod.key, 'second\n'); // waits
    expect((await readPodOutput(store.db, pod.id)).data).toBe('first\n');
    await new Promise((resolve) => setTimeout(resolve, OUTPUT_COALESCE_MS + 150));
    expect(await readPodOutput(store.db, pod.id)).toEqual({ data: 'first\nsecond\n', totalBytes: 13 });
  });

  it('two writers of one pod (a runner that moved to another replica while the first still applied its messages) continue each other', async () => {
    const pod = await newPod();
    const first = sink(1_000);
    const second = sink(1_000);
    await first.write(pod.key, 'one\n');
    await second.write(pod.key, 'two\n');
    await first.write(pod.key, 'three\n'); // its offset is taken: it continues after "two"
    await second.write(pod.key, 'four\n');
    expect(await readPodOutput(store.db, pod.id)).toEqual({ data: 'one\ntwo\nthree\nfour\n', totalBytes: 19 });
  });

  it('output of a pod on another runner is ignored (a runner writes only its own pods)', async () => {
    const other = await insertRunner(store, orgId);
    const pod = await insertPodRow(store, orgId, other);
    await write(pod, ['not mine']);
    expect(await readPodOutput(store.db, pod.id)).toEqual({ data: '', totalBytes: 0 });
  });

  describe('readPodOutputFrom (the output stream reads through it)', () => {
    it('from 0, from the middle, at the end, past the end', async () => {
      const pod = await newPod();
      await write(pod, ['hello ', 'world\n']);
      expect(await readPodOutputFrom(store.db, pod.id, 0)).toEqual({ offset: 0, data: 'hello world\n', next: 12, totalBytes: 12 });
      expect(await readPodOutputFrom(store.db, pod.id, 3)).toEqual({ offset: 3, data: 'lo world\n', next: 12, totalBytes: 12 });
      expect(await readPodOutputFrom(store.db, pod.id, 12)).toEqual({ offset: 12, data: '', next: 12, totalBytes: 12 });
      expect(await readPodOutputFrom(store.db, pod.id, 99)).toEqual({ offset: 12, data: '', next: 12, totalBytes: 12 });
    });

    it('an offset inside a character moves to the next one; maxBytes ends on a character boundary', async () => {
      const pod = await newPod();
      await write(pod, ['a€', 'b😀c']); // a(0) €(1-3) b(4) 😀(5-8) c(9)
      expect(await readPodOutputFrom(store.db, pod.id, 2)).toMatchObject({ offset: 4, data: 'b😀c', next: 10 });
      expect(await readPodOutputFrom(store.db, pod.id, 0, 3)).toMatchObject({ offset: 0, data: 'a', next: 1 });
      expect(await readPodOutputFrom(store.db, pod.id, 4, 4)).toMatchObject({ offset: 4, data: 'b', next: 5 });
      const pages: string[] = [];
      for (let offset = 0; offset < 10; ) {
        const page = await readPodOutputFrom(store.db, pod.id, offset, 4);
        expect(page.next).toBeGreaterThan(offset);
        pages.push(page.data);
        offset = page.next;
      }
      expect(pages.join('')).toBe('a€b😀c');
    });

    it('an offset before the kept tail starts at the tail', async () => {
      const pod = await newPod();
      const chunks = Array.from({ length: 40 }, (_, i) => text(100 * 1024, i));
      await write(pod, chunks);
      const total = reference(chunks).total;
      const page = await readPodOutputFrom(store.db, pod.id, 0);
      expect(page.offset).toBeGreaterThanOrEqual(total - OUTPUT_KEEP_BYTES);
      expect(page.offset).toBeLessThan(total - OUTPUT_KEEP_BYTES + 4);
      expect(page.data).toBe(reference(chunks).data);
      expect(page.next).toBe(total);
    });
  });
});

describe.each(DATABASES)('migration 0011 on %s', (kind) => {
  it('moves the one-row output into chunks and keeps webhook deliveries (now several per event)', async () => {
    const database = await createTestDatabase(kind);
    const store = database.open();
    try {
      await migrateTo(store, '0007_ticket_versions');
      const now = Date.now();
      const org = await store.db.insertInto('orgs').values({ slug: 'acme', name: 'Acme', ticket_prefix: 'ACME', created_at: now }).returning('id').executeTakeFirstOrThrow();
      const runnerId = await insertRunner(store, org.id);
      const pod = await insertPodRow(store, org.id, runnerId);
      const empty = await insertPodRow(store, org.id, runnerId);
      const old = store.db as unknown as { insertInto(table: string): { values(v: object): { execute(): Promise<unknown> } } };
      await old.insertInto('pod_output').values({ pod_id: pod.id, data: 'the tail é', total_bytes: 5_000_000 }).execute();
      await old.insertInto('pod_output').values({ pod_id: empty.id, data: '', total_bytes: 0 }).execute();
      const delivery = {
        org_id: org.id,
        event_id: 'msg_1',
        url: 'https://example.com/hook',
        secret_encrypted: 'x',
        payload: '{}',
        status: 'failed' as const,
        attempts: 7,
        next_attempt_at: now,
        last_status_code: 500,
        last_error: 'HTTP 500',
        subject_type: 'loop_run',
        subject_id: 1,
        created_at: now,
        updated_at: now,
      };
      await store.db.insertInto('webhook_deliveries').values(delivery).execute();
      await migrateToLatest(store);
      expect(await readPodOutput(store.db, pod.id)).toEqual({ data: 'the tail é', totalBytes: 5_000_000 });
      expect(await readPodOutput(store.db, empty.id)).toEqual({ data: '', totalBytes: 0 });
      await store.db.insertInto('webhook_deliveries').values({ ...delivery, status: 'pending', attempts: 0 }).execute();
      const rows = await store.db.selectFrom('webhook_deliveries').select(['event_id', 'status', 'last_error']).orderBy('id').execute();
      expect(rows).toEqual([
        { event_id: 'msg_1', status: 'failed', last_error: 'HTTP 500' },
        { event_id: 'msg_1', status: 'pending', last_error: 'HTTP 500' },
      ]);
    } finally {
      await store.close();
      await database.cleanup();
    }
  });
});

function tableOf(node: RootOperationNode): string {
  const named = node as { into?: { table?: { identifier?: { name?: string } } }; from?: { froms?: { table?: { identifier?: { name?: string } } }[] } };
  return named.into?.table?.identifier?.name ?? named.from?.froms?.[0]?.table?.identifier?.name ?? '';
}
