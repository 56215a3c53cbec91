import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PodOutputSignals } from '../../src/events/output-signals.ts';
import { streamPodOutput, type OutputStreamSink } from '../../src/events/output-stream.ts';
import { appendOutputChunk } from '../../src/store/pod-output.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { insertPodRow } from '../helpers/pods.ts';
import { insertRunner } from '../helpers/runners.ts';

/**
 * A pod's output stream goes at its client's pace: while the client has not taken what it was
 * sent (its socket full), nothing more is read or written; when it has, the stream goes on where
 * it stopped. The sink stands in for the socket; the output is stored in the real database.
 */
describe.each(DATABASES)('pod output stream pacing (%s)', (kind) => {
  let t: TestApp;

  beforeEach(async () => {
    t = await startTestApp(kind);
  });
  afterEach(async () => {
    await t.close();
  });

  /** A client that takes nothing until `take()` is called; each write waits for it. */
  function slowClient() {
    const frames: string[] = [];
    let taken: (() => void) | null = null;
    let closed = false;
    const sink: OutputStreamSink = {
      write(frame) {
        frames.push(frame);
        return false;
      },
      drained: () => new Promise<void>((resolve) => (taken = resolve)),
      get closed() {
        return closed;
      },
      onClose() {},
    };
    return {
      sink,
      frames,
      waiting: () => taken !== null,
      take() {
        const resolve = taken;
        taken = null;
        resolve?.();
      },
      close() {
        closed = true;
        this.take();
      },
    };
  }

  /** Until the stream waits for the client to take what it was sent (it writes nothing more meanwhile). */
  const blocked = (client: ReturnType<typeof slowClient>) => vi.waitUntil(() => client.waiting(), { timeout: 10_000 });

  it('writes the next part of the output only once the client has taken the last', async () => {
    const runnerId = await insertRunner(t.store, t.org.id);
    const pod = await insertPodRow(t.store, t.org.id, runnerId, { status: 'completed', desired_state: 'stop', finished_at: Date.now(), exit_code: 0 });
    const part = 'x'.repeat(64 * 1024);
    for (let i = 0; i < 3; i++) await appendOutputChunk(t.store.db, pod.id, i * part.length, part);

    const client = slowClient();
    const done = streamPodOutput(t.store, new PodOutputSignals(t.store), pod, 0, client.sink);
    for (let written = 1; written <= 3; written++) {
      await blocked(client);
      expect(client.frames).toHaveLength(written);
      expect(client.waiting()).toBe(true);
      client.take();
    }
    await done;
    const events = client.frames.map((frame) => ({ type: /^event: (\w+)/.exec(frame)![1], data: JSON.parse(frame.slice(frame.indexOf('data: ') + 6)) }));
    expect(events.map((e) => e.type)).toEqual(['output', 'output', 'output', 'end']);
    expect(events.slice(0, 3).map((e) => e.data.offset)).toEqual([0, part.length, 2 * part.length]);
    expect(events.slice(0, 3).map((e) => e.data.data).join('')).toBe(part.repeat(3));
    expect(events[3].data).toEqual({ status: 'completed', exit_code: 0 });
  });

  it('stops when the client goes away while the stream waits for it', async () => {
    const runnerId = await insertRunner(t.store, t.org.id);
    const pod = await insertPodRow(t.store, t.org.id, runnerId);
    const part = 'y'.repeat(64 * 1024);
    for (let i = 0; i < 2; i++) await appendOutputChunk(t.store.db, pod.id, i * part.length, part);

    const client = slowClient();
    const done = streamPodOutput(t.store, new PodOutputSignals(t.store), pod, 0, client.sink);
    await blocked(client);
    expect(client.frames).toHaveLength(1);
    client.close();
    await done;
    expect(client.frames).toHaveLength(1);
  });
});
