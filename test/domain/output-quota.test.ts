/**
 * The pod output quota (`DROVER_POD_OUTPUT_BYTES_PER_SEC`, overridable per organization;
 * docs/decisions.md "Quotas"), as the server holds a runner to it: output over it is dropped, and the pod's
 * output says so in one line when dropping starts (not one per chunk) and once more, with the
 * count, when the pod ends. The sink runs on an injected clock; the store is real (both databases).
 * The runner's own dropping at the source: test/runner/launcher.test.ts and test/e2e/output-quota.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as admin from '../../src/domain/admin/service.ts';
import type { DomainContext } from '../../src/domain/context.ts';
import { PodOutputSink, serverOutputBurst } from '../../src/domain/pods/output.ts';
import { DEFAULT_QUOTAS } from '../../src/domain/quotas/model.ts';
import { updateQuotas } from '../../src/domain/quotas/service.ts';
import type { Store } from '../../src/store/db.ts';
import { readPodOutput } from '../../src/store/pod-output.ts';
import type { PodRow } from '../../src/store/schema-runners.ts';
import { DATABASES, createTestStore } from '../helpers/databases.ts';
import { insertPodRow } from '../helpers/pods.ts';
import { insertRunner } from '../helpers/runners.ts';

const MARKER = /^\[drover\] output over this organization's limit of (\d+) bytes\/s \(pod_output_bytes_per_sec\): the excess is dropped$/;
const SUMMARY = /^\[drover\] (\d+) bytes of this pod's output were dropped \(over the pod_output_bytes_per_sec quota\)$/;

describe.each(DATABASES)('pod output quota on %s', (kind) => {
  let store: Store;
  let ctx: DomainContext;
  let cleanup: () => Promise<void>;
  let clock: { now: number };

  beforeEach(async () => {
    const created = await createTestStore(kind);
    store = created.store;
    cleanup = created.cleanup;
    clock = { now: Date.parse('2026-05-01T00:00:00.000Z') };
    ctx = { store, now: () => clock.now, quotas: { ...DEFAULT_QUOTAS, pod_output_bytes_per_sec: 1000 } };
  });
  afterEach(async () => cleanup());

  async function setup(slug = 'acme') {
    const org = await admin.createOrg(ctx, { slug, name: slug });
    const runnerId = await insertRunner(store, org.id);
    const pod = await insertPodRow(store, org.id, runnerId);
    const sink = new PodOutputSink(ctx, { id: runnerId, org_id: org.id }, () => clock.now);
    sinks.push(sink);
    return { org, pod, sink };
  }

  const sinks: PodOutputSink[] = [];
  /** The stored output, once what waits to be written is written. */
  const output = async (pod: PodRow) => {
    for (const sink of sinks) await sink.flushAll();
    return (await readPodOutput(store.db, pod.id)).data;
  };
  const lines = (text: string) => text.split('\n').filter((line) => line.startsWith('[drover]'));

  // The server's bucket (a guard behind the runner's own, which drops at the source) holds two
  // seconds and 4 KiB: 6,096 bytes at 1,000 bytes/s.
  const BURST = serverOutputBurst(1000);

  it('keeps its burst at once, drops the excess with one note line, and goes on at the rate', async () => {
    expect(BURST).toBe(6096);
    const { pod, sink } = await setup();
    await sink.write(pod.key, 'a'.repeat(5000));
    expect(await output(pod)).toBe('a'.repeat(5000));
    await sink.write(pod.key, 'b'.repeat(2000)); // 1,096 fit
    await sink.write(pod.key, 'c'.repeat(600)); // nothing fits: dropped, no second note
    clock.now += 500;
    await sink.write(pod.key, 'd'.repeat(600)); // 500 fit; still the same episode of dropping
    const text = await output(pod);
    expect(lines(text)).toHaveLength(1);
    expect(lines(text)[0]).toMatch(MARKER);
    expect(MARKER.exec(lines(text)[0])![1]).toBe('1000');
    expect(text).toBe(`${'a'.repeat(5000)}${'b'.repeat(1096)}\n${lines(text)[0]}\n${'d'.repeat(500)}`);
  });

  it('a drop after a second without any gets a new note; the end of the pod says how much was dropped in all', async () => {
    const { pod, sink } = await setup();
    await sink.write(pod.key, 'x'.repeat(7000)); // 904 dropped
    clock.now += 400;
    await sink.write(pod.key, 'y'.repeat(300)); // fits (400 refilled)
    clock.now += 1_200;
    await sink.write(pod.key, 'z'.repeat(2000)); // 1,300 refilled: 700 dropped, a new episode
    await sink.finished(pod.key);
    const text = await output(pod);
    const notes = lines(text);
    expect(notes).toHaveLength(3);
    expect(notes[0]).toMatch(MARKER);
    expect(notes[1]).toMatch(MARKER);
    expect(SUMMARY.exec(notes[2])?.[1]).toBe('1604');
    expect(text.replace(/\n?\[drover\][^\n]*\n/g, '')).toBe(`${'x'.repeat(6096)}${'y'.repeat(300)}${'z'.repeat(1300)}`);
    expect(text.endsWith('\n')).toBe(true);
  });

  it('a flood gets one note, not one per chunk, and keeps about the burst plus the rate', async () => {
    const { pod, sink } = await setup();
    for (let i = 0; i < 200; i++) {
      clock.now += 10; // 200 chunks of 1 KB in 2 s: 200 KB offered, about 6,096 + 2,000 allowed
      await sink.write(pod.key, `${String(i).padStart(4, '0')}${'.'.repeat(1019)}\n`);
    }
    const text = await output(pod);
    expect(lines(text)).toHaveLength(1);
    const kept = Buffer.byteLength(text.replace(/\n?\[drover\][^\n]*\n/g, ''));
    expect(kept).toBeGreaterThanOrEqual(7_000);
    expect(kept).toBeLessThanOrEqual(8_100);
  });

  it('cuts on a character boundary, and a chunk larger than the bucket is kept in part rather than lost whole', async () => {
    ctx = { ...ctx, quotas: { ...DEFAULT_QUOTAS, pod_output_bytes_per_sec: 1001 } }; // a burst of 6,098 bytes
    const { pod, sink } = await setup();
    await sink.write(pod.key, '€'.repeat(3000)); // 9,000 bytes: 2,032 characters fit
    const text = await output(pod);
    expect(text.startsWith('€'.repeat(2032) + '\n[drover]')).toBe(true);
    expect(text).not.toContain('\ufffd');
  });

  it("the organization's override wins over the default (0: no limit), and a change applies within seconds", async () => {
    const { pod, sink } = await setup('acme');
    const other = await setup('globex');
    await updateQuotas(ctx, 'acme', { pod_output_bytes_per_sec: 0 });
    await sink.write(pod.key, 'a'.repeat(50_000));
    await other.sink.write(other.pod.key, 'b'.repeat(50_000));
    expect(await output(pod)).toBe('a'.repeat(50_000));
    expect((await output(other.pod)).startsWith('b'.repeat(BURST) + '\n[drover]')).toBe(true);

    await updateQuotas(ctx, 'acme', { pod_output_bytes_per_sec: 10 });
    clock.now += 11_000; // the sink reads the org's limit again after 10 s
    await sink.write(pod.key, 'c'.repeat(5_000)); // a burst of 4,116 bytes at 10 bytes/s
    expect((await output(pod)).slice(50_000)).toMatch(/^c{4116}\n\[drover\] output over this organization's limit of 10 bytes\/s/);
  });
});
