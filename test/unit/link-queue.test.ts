import { describe, expect, it } from 'vitest';
import { LinkQueue } from '../../src/gateway/link-queue.ts';

/**
 * The order of a runner link's work (src/gateway/link-queue.ts): steps about distinct single pods
 * run side by side, a pod's own steps and steps about no single pod keep their order.
 */

/** A step that records its start and end, and ends only when released. */
function gate() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  return { release, released };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('runner link queue', () => {
  it('runs steps about distinct pods side by side: a burst of reports waits for none of the others', async () => {
    const queue = new LinkQueue((error) => {
      throw error;
    });
    const started: string[] = [];
    const gates = new Map(['a', 'b', 'c'].map((pod) => [pod, gate()]));
    for (const [pod, g] of gates) {
      queue.push(async () => {
        started.push(pod);
        await g.released;
      }, pod);
    }
    await tick();
    // All three started before any ended (one after another, only `a` would have).
    expect(started).toEqual(['a', 'b', 'c']);
    for (const g of gates.values()) g.release();
    await queue.idle();
  });

  it("keeps a pod's own steps in order: its second step starts after its first ended, and so do the steps after it", async () => {
    const queue = new LinkQueue((error) => {
      throw error;
    });
    const events: string[] = [];
    const first = gate();
    queue.push(async () => {
      events.push('a1 start');
      await first.released;
      events.push('a1 end');
    }, 'a');
    queue.push(async () => void events.push('b1'), 'b');
    queue.push(async () => void events.push('a2'), 'a');
    queue.push(async () => void events.push('c1'), 'c');
    await tick();
    expect(events).toEqual(['a1 start', 'b1']);
    first.release();
    await queue.idle();
    expect(events).toEqual(['a1 start', 'b1', 'a1 end', 'a2', 'c1']);
  });

  it('a step about no single pod waits for everything before it and holds back everything after it', async () => {
    const queue = new LinkQueue((error) => {
      throw error;
    });
    const events: string[] = [];
    const slow = gate();
    queue.push(async () => {
      await slow.released;
      events.push('a');
    }, 'a');
    queue.push(async () => void events.push('barrier'));
    queue.push(async () => void events.push('b'), 'b');
    await tick();
    expect(events).toEqual([]);
    slow.release();
    await queue.idle();
    expect(events).toEqual(['a', 'barrier', 'b']);
  });

  it('a failing step is reported and the next ones still run', async () => {
    const errors: unknown[] = [];
    const queue = new LinkQueue((error) => errors.push(error));
    const events: string[] = [];
    queue.push(async () => {
      throw new Error('boom');
    }, 'a');
    queue.push(async () => void events.push('b'), 'b');
    queue.push(async () => void events.push('after'));
    await queue.idle();
    expect(errors.map((e) => (e as Error).message)).toEqual(['boom']);
    expect(events).toEqual(['b', 'after']);
  });

  it('idle() also waits for steps pushed while the queue was running', async () => {
    const queue = new LinkQueue((error) => {
      throw error;
    });
    const events: string[] = [];
    queue.push(async () => {
      await tick();
      queue.push(async () => void events.push('late'));
      events.push('first');
    });
    await queue.idle();
    expect(events).toEqual(['first', 'late']);
  });
});
