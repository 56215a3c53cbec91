import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventHub, type Subscriber } from '../../src/events/hub.ts';
import { recordEvent } from '../../src/events/writer.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/runner-process.ts';

/**
 * The hub's fan-out with subscribers standing in for sockets: one that stops taking what it is
 * sent (its socket full), one that starts ahead of the feed, and subscribers with different
 * filters on one feed. The event log is the real one, on each database.
 */

interface Sink extends Subscriber {
  /** Each write's frames, as text. */
  writes: string[];
  /** The ids of every event received, in the order received. */
  ids(): number[];
  /** While true, each write answers "full" (the socket has not taken it). */
  full: boolean;
  drain(): void;
  ended: boolean;
}

function sink(types: readonly string[] = ['ticket.created']): Sink {
  let waiting: (() => void) | null = null;
  const s: Sink = {
    filterKey: types.join(','),
    wants: (event) => types.includes(event.type),
    writes: [],
    full: false,
    ended: false,
    write(frames) {
      s.writes.push(Buffer.from(frames).toString());
      return !s.full;
    },
    onDrain(listener) {
      expect(waiting, 'one drain listener at a time').toBeNull();
      waiting = listener;
    },
    end() {
      s.ended = true;
    },
    drain() {
      const listener = waiting;
      waiting = null;
      listener?.();
    },
    ids: () => [...s.writes.join('').matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1])),
  };
  return s;
}

describe.each(DATABASES)('EventHub (%s)', (kind) => {
  let t: TestApp;
  let hub: EventHub;
  const errors: unknown[] = [];

  beforeEach(async () => {
    t = await startTestApp(kind);
    errors.length = 0;
  });
  afterEach(async () => {
    expect(errors).toEqual([]);
    await t.close();
  });

  const write = async (count: number, type: 'ticket.created' | 'channel.created' = 'ticket.created') => {
    const ids: number[] = [];
    for (let i = 0; i < count; i++) {
      ids.push(await t.store.transaction((trx) => recordEvent(t.ctx, trx, t.org.id, type, { title: `e${i}`, pad: 'x'.repeat(200) }, {})));
    }
    return ids;
  };
  // Bounded waits where a test checks that nothing more is written, or lets the feed's own pass
  // run (it has no outside signal of being done).
  const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

  it('writes nothing more to a subscriber whose socket is full until it drains; then it catches up with every event once, in order', async () => {
    hub = new EventHub(t.store, (error) => errors.push(error));
    const slow = sink();
    const fast = sink();
    const subscriptions = [await hub.subscribe(t.org.id, null, slow, () => {}), await hub.subscribe(t.org.id, null, fast, () => {})];
    const first = await write(1);
    hub.wake(t.org.id);
    await waitFor(() => slow.writes.length === 1 && fast.writes.length === 1);
    slow.full = true;
    const more = await write(1);
    hub.wake(t.org.id);
    await waitFor(() => slow.writes.length === 2); // written, answered "full"
    const rest = await write(400);
    hub.wake(t.org.id);
    await waitFor(() => fast.ids().length === 402, { what: 'the fast subscriber to have all 402' });
    await settle();
    expect(slow.writes).toHaveLength(2);
    expect(slow.ids()).toEqual([...first, ...more]);

    slow.full = false;
    slow.drain();
    await waitFor(() => slow.ids().length === 402, { what: 'the slow one to catch up' });
    expect(slow.ids()).toEqual([...first, ...more, ...rest]);
    expect(fast.ids()).toEqual(slow.ids());
    // Caught up in writes of about 64 KB at most (one frame more), not one write per event.
    expect(slow.writes.length).toBeLessThan(2 + 10);
    for (const frames of slow.writes) expect(Buffer.byteLength(frames)).toBeLessThan(64 * 1024 + 1024);
    // Live again: the next event comes with the pump, once.
    const after = await write(1);
    hub.wake(t.org.id);
    await waitFor(() => slow.ids().length === 403);
    expect(slow.ids().slice(-1)).toEqual(after);
    for (const subscription of subscriptions) subscription.close();
    expect(hub.size).toBe(0);
  }, 60_000);

  it('catches a subscriber up from the log when it fell behind further than the recent events kept', async () => {
    hub = new EventHub(t.store, (error) => errors.push(error), () => {}, 50);
    const slow = sink();
    const subscription = await hub.subscribe(t.org.id, null, slow, () => {});
    const first = await write(1);
    hub.wake(t.org.id);
    await waitFor(() => slow.writes.length === 1);
    slow.full = true;
    const rest = await write(300);
    hub.wake(t.org.id);
    await waitFor(() => slow.writes.length === 2);
    await settle(); // the feed reads all 300; it keeps the newest 50
    slow.full = false;
    slow.drain();
    await waitFor(() => slow.ids().length === 301, { what: 'the catch-up from the log' });
    expect(slow.ids()).toEqual([...first, ...rest]);
    subscription.close();
  }, 60_000);

  it('gives subscribers with different filters on one feed each what they want, and one that starts ahead of the feed only what follows', async () => {
    hub = new EventHub(t.store, (error) => errors.push(error));
    const tickets = sink(['ticket.created']);
    const channels = sink(['channel.created']);
    const both = sink(['ticket.created', 'channel.created']);
    const subscriptions = [
      await hub.subscribe(t.org.id, null, tickets, () => {}),
      await hub.subscribe(t.org.id, null, channels, () => {}),
      await hub.subscribe(t.org.id, null, both, () => {}),
    ];
    await settle(); // the feed's first look is done: its cursor stays put until woken
    const [unseen] = await write(1);
    const ahead = sink(['ticket.created', 'channel.created']);
    subscriptions.push(await hub.subscribe(t.org.id, unseen, ahead, () => {}));
    const ticketIds = await write(3);
    const channelIds = await write(2, 'channel.created');
    hub.wake(t.org.id);
    await waitFor(() => both.ids().length === 6 && ahead.ids().length === 5);
    await settle();
    expect(tickets.ids()).toEqual([unseen, ...ticketIds]);
    expect(channels.ids()).toEqual(channelIds);
    expect(both.ids()).toEqual([unseen, ...ticketIds, ...channelIds]);
    expect(ahead.ids()).toEqual([...ticketIds, ...channelIds]);
    for (const subscription of subscriptions) subscription.close();
  }, 60_000);
});
