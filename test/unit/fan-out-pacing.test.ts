import { describe, expect, it } from 'vitest';
import { BUSY_WINDOW_FACTOR, FanOutPacer, MAX_WINDOW_MS, MIN_WINDOW_MS } from '../../src/events/pacing.ts';

/**
 * The event stream's batching window (src/events/pacing.ts): as long as the last fan-out on an
 * idle server, longer on a busy one (requests get most of its time), never past the cap. The
 * utilization is given directly, except in the last test, where the event loop is really kept
 * busy (by spinning, so a slow machine only makes it busier).
 */
describe('fan-out pacing', () => {
  it('waits the minimum window before any fan-out', () => {
    expect(new FanOutPacer().windowMs()).toBe(MIN_WINDOW_MS);
  });

  it('waits as long as the last fan-out took while the server is otherwise idle', () => {
    const pacer = new FanOutPacer();
    pacer.fannedOut(20);
    for (let i = 0; i < 20; i++) pacer.windowEnded(0.3);
    expect(pacer.windowMs()).toBe(20);
    pacer.fannedOut(2);
    expect(pacer.windowMs()).toBe(MIN_WINDOW_MS);
  });

  it('waits up to BUSY_WINDOW_FACTOR times the fan-out while requests keep the server busy', () => {
    const pacer = new FanOutPacer();
    pacer.fannedOut(20);
    for (let i = 0; i < 50; i++) pacer.windowEnded(1);
    expect(pacer.windowMs()).toBeCloseTo(20 * BUSY_WINDOW_FACTOR, 0);
    // Idle again: the window shrinks back.
    for (let i = 0; i < 50; i++) pacer.windowEnded(0);
    expect(pacer.windowMs()).toBe(20);
  });

  it('does not stretch the window for one busy moment', () => {
    const pacer = new FanOutPacer();
    pacer.fannedOut(20);
    for (let i = 0; i < 20; i++) pacer.windowEnded(0.3);
    pacer.windowEnded(1);
    expect(pacer.windowMs()).toBe(20);
  });

  it('never waits longer than the cap', () => {
    const pacer = new FanOutPacer();
    pacer.fannedOut(MAX_WINDOW_MS * 3);
    expect(pacer.windowMs()).toBe(MAX_WINDOW_MS);
    for (let i = 0; i < 50; i++) pacer.windowEnded(1);
    expect(pacer.windowMs()).toBe(MAX_WINDOW_MS);
  });

  it('measures the event loop while it waits: busy windows lengthen the next, idle ones do not', async () => {
    const idle = new FanOutPacer();
    idle.fannedOut(30);
    for (let i = 0; i < 5; i++) await idle.wait();
    expect(idle.windowMs()).toBe(30);

    const busy = new FanOutPacer();
    busy.fannedOut(30);
    for (let i = 0; i < 5; i++) {
      // Requests stand-in: the loop spins for about the whole window.
      setImmediate(() => {
        const until = performance.now() + 30;
        while (performance.now() < until);
      });
      await busy.wait();
    }
    expect(busy.windowMs()).toBeGreaterThan(30);
  });
});
