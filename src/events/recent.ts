import type { EventRow } from '../store/schema.ts';

/** One event as a feed fetched it: the row (for subscribers' filters) and its SSE frame. */
export interface FetchedEvent {
  readonly id: number;
  readonly row: EventRow;
  readonly frame: string;
}

/**
 * The newest events a feed has fetched, so that a subscriber that fell behind (its socket was
 * full) catches up from memory rather than with a query of its own. Holds every event of the
 * organization with an id in (`from`, newest fetched], at most `maxEvents` of them and about
 * `maxBytes` of frames: the oldest go first, and `from` moves up with them.
 */
export class RecentEvents {
  private events: FetchedEvent[] = [];
  /** Index of the oldest event kept (the array is compacted now and then, not on every drop). */
  private head = 0;
  private bytes = 0;

  constructor(
    /** Every event after this id (up to the newest fetched) is held. */
    public from: number,
    private readonly maxEvents = 2_000,
    private readonly maxBytes = 4 * 1024 * 1024,
  ) {}

  /** Adds newly fetched events (ids increasing, all after those held). */
  push(fetched: readonly FetchedEvent[]): void {
    for (const event of fetched) {
      this.events.push(event);
      this.bytes += event.frame.length;
    }
    while (this.events.length - this.head > this.maxEvents || (this.bytes > this.maxBytes && this.events.length - this.head > 1)) {
      const dropped = this.events[this.head++];
      this.bytes -= dropped.frame.length;
      this.from = dropped.id;
    }
    if (this.head > 1024 && this.head * 2 > this.events.length) {
      this.events = this.events.slice(this.head);
      this.head = 0;
    }
  }

  /** Up to `limit` held events after id `cursor`, oldest first; null when some of them are no longer held. */
  after(cursor: number, limit: number): FetchedEvent[] | null {
    if (cursor < this.from) return null;
    let low = this.head;
    let high = this.events.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.events[mid].id <= cursor) low = mid + 1;
      else high = mid;
    }
    return this.events.slice(low, low + limit);
  }
}
