/**
 * How long a feed's new events wait for others before they go out together (one write per
 * subscriber carries them all). Each write to a subscriber costs the server a fixed amount plus a
 * little per byte (measured with 1,000 subscribers on loopback: about 15 ms a round plus 0.1 ms an
 * event), so a longer window trades a little latency for the fixed part of many rounds:
 *
 * - at least MIN_WINDOW_MS, and at least as long as the last fan-out took: writing to the
 *   subscribers takes at most half of an otherwise idle server's time;
 * - when requests kept the server busy while the last window lasted (its event loop more than
 *   BUSY_FROM busy, smoothed over rounds), up to BUSY_WINDOW_FACTOR times the last fan-out: a fully
 *   busy server gives its subscribers about a seventh of its time, in fewer, larger writes, and
 *   its requests the rest;
 * - at most MAX_WINDOW_MS, however long fan-out takes.
 */
export const MIN_WINDOW_MS = 5;
export const MAX_WINDOW_MS = 250;
export const BUSY_WINDOW_FACTOR = 6;
export const BUSY_FROM = 0.6;
/** The weight of the last window in the smoothed utilization: one busy moment (a collection, a slow query) does not stretch the window. */
const SMOOTHING = 0.3;

export class FanOutPacer {
  /** How long handing out the last batch took. */
  private fanOutMs = 0;
  /** The event loop's utilization while the windows lasted, smoothed: 0 to 1. */
  private busy = 0;

  windowMs(): number {
    const share = Math.min(1, Math.max(0, (this.busy - BUSY_FROM) / (1 - BUSY_FROM)));
    return Math.min(MAX_WINDOW_MS, Math.max(MIN_WINDOW_MS, this.fanOutMs * (1 + (BUSY_WINDOW_FACTOR - 1) * share)));
  }

  /** A window ended; `utilization` is the event loop's over it (what requests and the rest kept it doing). */
  windowEnded(utilization: number): void {
    this.busy = (1 - SMOOTHING) * this.busy + SMOOTHING * utilization;
  }

  fannedOut(ms: number): void {
    this.fanOutMs = ms;
  }

  /** Waits one window; the event loop's utilization over it is taken into account. */
  async wait(): Promise<void> {
    const start = performance.eventLoopUtilization();
    await new Promise((resolve) => setTimeout(resolve, this.windowMs()));
    this.windowEnded(performance.eventLoopUtilization(start).utilization);
  }
}
