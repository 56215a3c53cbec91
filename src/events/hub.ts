import type { Store } from '../store/db.ts';
import { eventsAfter, latestEventId, prunedThrough } from '../store/events.ts';
import type { EventRow } from '../store/schema.ts';

/** One SSE client: what it wants and how to write to it. */
export interface Subscriber {
  readonly wants: (event: EventRow) => boolean;
  /** Writes one SSE frame. */
  readonly write: (frame: string) => void;
}

export interface Subscription {
  close(): void;
}

interface Member extends Subscriber {
  /** The newest event id this subscriber has been given (or skipped as not wanted). */
  cursor: number;
  /** Caught up: the pump hands it new events (while replaying it reads the log itself). */
  live: boolean;
}

/** One organization's live subscribers and the newest event id fetched for them. */
interface Feed {
  cursor: number;
  members: Set<Member>;
  pumping: Promise<void> | null;
  again: boolean;
}

const PAGE = 500;

/** The SSE frame of one event: `id:`, `event:` and one JSON line (contract §11). */
export function eventFrame(event: EventRow): string {
  const id = Number(event.id);
  const line = `{"id":${id},"type":${JSON.stringify(event.type)},"created_at":"${new Date(Number(event.created_at)).toISOString()}","data":${event.payload}}`;
  return `id: ${id}\nevent: ${event.type}\ndata: ${line}\n\n`;
}

/**
 * Fans the event log out to this process's subscribers. Per organization one reader follows the
 * log (woken by NOTIFY on PostgreSQL, by the writer itself on SQLite) and hands each new event to
 * every live subscriber that wants it: one query per wake-up, however many subscribers. A
 * subscriber that resumes replays the log from its own id first, then joins the live feed at the
 * id the feed has reached, with no await in between: no gap, no duplicate.
 */
export class EventHub {
  private readonly feeds = new Map<number, Feed>();
  private readonly opening = new Map<number, Promise<Feed>>();

  constructor(
    private readonly store: Store,
    private readonly onError: (error: unknown) => void = () => {},
    private readonly onCount: (delta: number) => void = () => {},
  ) {}

  /** New events of the organization may have been committed. */
  wake(orgId: number): void {
    const feed = this.feeds.get(orgId);
    if (feed) this.pump(orgId, feed);
  }

  /** After a lost LISTEN connection: every feed looks again. */
  wakeAll(): void {
    for (const [orgId, feed] of this.feeds) this.pump(orgId, feed);
  }

  get size(): number {
    let n = 0;
    for (const feed of this.feeds.values()) n += feed.members.size;
    return n;
  }

  /**
   * Where a stream that asks for no replay starts: the organization's newest event id (or the
   * newest one retention removed, when none is kept), so it is never taken for a stale resume.
   */
  async latestId(orgId: number): Promise<number> {
    const [latest, pruned] = await Promise.all([latestEventId(this.store.db, orgId), prunedThrough(this.store.db, orgId)]);
    return Math.max(latest, pruned);
  }

  /**
   * Starts a subscription after event `after` (null: from now). When events after `after` have
   * been pruned already, `onReset` is called with the id the subscription goes live from, instead
   * of a replay.
   */
  async subscribe(orgId: number, after: number | null, subscriber: Subscriber, onReset: (liveFrom: number) => void): Promise<Subscription> {
    let feed = await this.feed(orgId);
    // The last member of a feed may have left while this one waited: use the feed now in place.
    while (this.feeds.get(orgId) !== feed) feed = await this.feed(orgId);
    const member: Member = { ...subscriber, cursor: after ?? feed.cursor, live: false };
    let closed = false;
    feed.members.add(member); // holds the feed open while replaying
    this.onCount(1);
    const subscription = {
      close: () => {
        if (closed) return;
        closed = true;
        feed.members.delete(member);
        this.onCount(-1);
        if (feed.members.size === 0 && this.feeds.get(orgId) === feed) this.feeds.delete(orgId);
      },
    };
    try {
      if (after !== null && after < (await prunedThrough(this.store.db, orgId))) {
        member.cursor = Math.max(member.cursor, feed.cursor);
        onReset(member.cursor);
      }
      while (!closed && member.cursor < feed.cursor) {
        const upTo = feed.cursor;
        const rows = await eventsAfter(this.store.db, orgId, member.cursor, PAGE, upTo);
        this.hand(member, rows, rows.map(eventFrame));
        if (rows.length < PAGE) member.cursor = Math.max(member.cursor, upTo);
      }
    } catch (error) {
      subscription.close();
      throw error;
    }
    // Caught up with the feed, and no await since the check: from here the pump hands it every event.
    member.live = true;
    return subscription;
  }

  /** The frames of `rows` this member has not had yet and wants, as one string (one write). */
  private hand(member: Member, rows: readonly EventRow[], frames: readonly string[]): void {
    let out = '';
    for (const [i, row] of rows.entries()) {
      const id = Number(row.id);
      if (id <= member.cursor) continue;
      member.cursor = id;
      if (member.wants(row)) out += frames[i];
    }
    if (out !== '') member.write(out);
  }

  private async feed(orgId: number): Promise<Feed> {
    const existing = this.feeds.get(orgId);
    if (existing) return existing;
    let opening = this.opening.get(orgId);
    if (!opening) {
      opening = latestEventId(this.store.db, orgId).then((cursor) => {
        const feed: Feed = { cursor, members: new Set(), pumping: null, again: false };
        this.feeds.set(orgId, feed);
        this.opening.delete(orgId);
        // A wake-up that came while the cursor was being read found no feed: look once now.
        this.pump(orgId, feed);
        return feed;
      });
      opening.catch(() => this.opening.delete(orgId));
      this.opening.set(orgId, opening);
    }
    return opening;
  }

  private pump(orgId: number, feed: Feed): void {
    if (feed.pumping) {
      feed.again = true;
      return;
    }
    feed.pumping = (async () => {
      do {
        feed.again = false;
        for (;;) {
          const rows = await eventsAfter(this.store.db, orgId, feed.cursor, PAGE);
          if (rows.length > 0) {
            // Each frame is built once and written to every subscriber that wants it, in one write each.
            const frames = rows.map(eventFrame);
            feed.cursor = Math.max(feed.cursor, Number(rows[rows.length - 1].id));
            for (const member of feed.members) if (member.live) this.hand(member, rows, frames);
          }
          if (rows.length < PAGE) break;
        }
      } while (feed.again);
    })()
      .catch(this.onError)
      .finally(() => {
        feed.pumping = null;
        if (feed.again) this.pump(orgId, feed);
      });
  }
}
