import type { Store } from '../store/db.ts';
import { eventsAfter, latestEventId, prunedThrough } from '../store/events.ts';
import type { EventRow } from '../store/schema.ts';
import { FanOutPacer } from './pacing.ts';
import { RecentEvents, type FetchedEvent } from './recent.ts';

/** One SSE client: what it wants and how to write to it. */
export interface Subscriber {
  /** Subscribers with the same key want the same events: the frames of a new batch are built once per key. */
  readonly filterKey: string;
  readonly wants: (event: EventRow) => boolean;
  /** Writes SSE frames; false when the client has not yet taken what it was sent (write more after `onDrain`). */
  readonly write: (frames: Uint8Array) => boolean;
  /** Calls `listener` once, when the client has taken what it was sent. */
  readonly onDrain: (listener: () => void) => void;
  /** Ends the stream: the log could not be read for it (the client resumes with Last-Event-ID). */
  readonly end: () => void;
}

export interface Subscription {
  close(): void;
}

interface Member extends Subscriber {
  /** The newest event id this subscriber has been given (or skipped as not wanted). */
  cursor: number;
  /**
   * `live`: the pump hands it each new batch. `behind`: replaying, or waiting for its socket to
   * drain, or catching up after that; it reads the log (or the feed's recent events) itself until
   * it reaches the feed's cursor again.
   */
  state: 'live' | 'behind';
  closed: boolean;
}

/** One organization's live subscribers, the newest event id fetched for them and the events fetched lately. */
interface Feed {
  orgId: number;
  cursor: number;
  recent: RecentEvents;
  members: Set<Member>;
  pumping: Promise<void> | null;
  again: boolean;
  /** How long its new events wait for others. */
  pacer: FanOutPacer;
}

/** Events read from the log at a time. */
const PAGE = 500;
/** A subscriber catching up is sent at most about this much per write (then it waits for its socket to drain). */
const CATCH_UP_BYTES = 64 * 1024;

/** The SSE frame of one event: `id:`, `event:` and one JSON line (docs/events.md). */
export function eventFrame(event: EventRow): string {
  const id = Number(event.id);
  const line = `{"id":${id},"type":${JSON.stringify(event.type)},"created_at":"${new Date(Number(event.created_at)).toISOString()}","actor":${event.actor ?? 'null'},"data":${event.payload}}`;
  return `id: ${id}\nevent: ${event.type}\ndata: ${line}\n\n`;
}

function fetched(row: EventRow): FetchedEvent {
  return { id: Number(row.id), row, frame: eventFrame(row) };
}

/**
 * The frames of the events after `after` that `member` wants, as one buffer (null: none), up to
 * about `maxBytes`; `through` is the id of the last event looked at.
 */
function framesFor(member: Member, events: readonly FetchedEvent[], after: number, maxBytes = Infinity): { frames: Buffer | null; through: number } {
  let out = '';
  let through = after;
  for (const event of events) {
    if (event.id <= after) continue;
    if (out.length >= maxBytes) break;
    through = event.id;
    if (member.wants(event.row)) out += event.frame;
  }
  return { frames: out === '' ? null : Buffer.from(out), through };
}

/**
 * Fans the event log out to this process's subscribers. Per organization one reader follows the
 * log (woken by NOTIFY on PostgreSQL, by the writer itself on SQLite) and hands each new batch to
 * every live subscriber that wants it: one query per wake-up however many subscribers, the frames
 * built and encoded once per distinct filter, one write per subscriber.
 *
 * A subscriber whose socket is full is not written to until it drains; it then catches up by
 * itself, from the feed's recent events (or the log, when it fell further behind), and rejoins
 * the live feed at the id the feed has reached, with no await in between: no gap, no duplicate.
 * A resuming subscriber replays the same way. So a slow client costs the server writes at the
 * pace it reads (in larger batches), never the pace events are written.
 */
export class EventHub {
  private readonly feeds = new Map<number, Feed>();
  private readonly opening = new Map<number, Promise<Feed>>();

  constructor(
    private readonly store: Store,
    private readonly onError: (error: unknown) => void = () => {},
    private readonly onCount: (delta: number) => void = () => {},
    /** How many of the newest events each feed keeps for subscribers catching up. */
    private readonly recentEvents = 2_000,
  ) {}

  /** New events of the organization may have been committed. */
  wake(orgId: number): void {
    const feed = this.feeds.get(orgId);
    if (feed) this.pump(feed);
  }

  /** After a lost LISTEN connection: every feed looks again. */
  wakeAll(): void {
    for (const feed of this.feeds.values()) this.pump(feed);
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
    const member: Member = { ...subscriber, cursor: after ?? feed.cursor, state: 'behind', closed: false };
    feed.members.add(member); // holds the feed open while replaying
    this.onCount(1);
    const subscription = {
      close: () => {
        if (member.closed) return;
        member.closed = true;
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
      await this.catchUp(feed, member);
    } catch (error) {
      subscription.close();
      throw error;
    }
    return subscription;
  }

  /**
   * Brings a member that is behind up to the feed's cursor, a batch per write, and makes it live;
   * or leaves it behind, waiting for its socket to drain. Between the last check of the cursor and
   * going live there is no await: the pump hands it everything after.
   */
  private async catchUp(feed: Feed, member: Member): Promise<void> {
    while (!member.closed) {
      if (member.cursor >= feed.cursor) {
        member.state = 'live';
        return;
      }
      const upTo = feed.cursor;
      const batch = feed.recent.after(member.cursor, PAGE) ?? (await eventsAfter(this.store.db, feed.orgId, member.cursor, PAGE, upTo)).map(fetched);
      const last = batch.length > 0 ? batch[batch.length - 1].id : member.cursor;
      const { frames, through } = framesFor(member, batch, member.cursor, CATCH_UP_BYTES);
      // A short page reached `upTo`; a full one, or a write cut at CATCH_UP_BYTES, only its last event.
      member.cursor = Math.max(member.cursor, through < last ? through : batch.length < PAGE ? upTo : last);
      if (frames !== null && !member.write(frames)) return this.waitForDrain(feed, member);
    }
  }

  private waitForDrain(feed: Feed, member: Member): void {
    member.state = 'behind';
    member.onDrain(() => {
      this.catchUp(feed, member).catch((error) => {
        this.onError(error);
        member.end();
      });
    });
  }

  private async feed(orgId: number): Promise<Feed> {
    const existing = this.feeds.get(orgId);
    if (existing) return existing;
    let opening = this.opening.get(orgId);
    if (!opening) {
      opening = latestEventId(this.store.db, orgId).then((cursor) => {
        const feed: Feed = { orgId, cursor, recent: new RecentEvents(cursor, this.recentEvents), members: new Set(), pumping: null, again: false, pacer: new FanOutPacer() };
        this.feeds.set(orgId, feed);
        this.opening.delete(orgId);
        // A wake-up that came while the cursor was being read found no feed: look once now.
        this.pump(feed);
        return feed;
      });
      opening.catch(() => this.opening.delete(orgId));
      this.opening.set(orgId, opening);
    }
    return opening;
  }

  private pump(feed: Feed): void {
    if (feed.pumping) {
      feed.again = true;
      return;
    }
    feed.pumping = (async () => {
      do {
        // Wake-ups within the window fold into one read and one write per subscriber (pacing.ts).
        await feed.pacer.wait();
        feed.again = false;
        for (;;) {
          const rows = await eventsAfter(this.store.db, feed.orgId, feed.cursor, PAGE);
          if (rows.length > 0) {
            const started = performance.now();
            this.handOut(feed, rows.map(fetched));
            // The writes' completions (ticks each socket queued) are part of the fan-out.
            await new Promise((resolve) => process.nextTick(resolve));
            feed.pacer.fannedOut(performance.now() - started);
          }
          if (rows.length < PAGE) break;
        }
      } while (feed.again);
    })()
      .catch(this.onError)
      .finally(() => {
        feed.pumping = null;
        if (feed.again) this.pump(feed);
      });
  }

  /** A new batch: to every live member, built once per filter among those at the feed's cursor. */
  private handOut(feed: Feed, batch: FetchedEvent[]): void {
    const start = feed.cursor;
    const end = batch[batch.length - 1].id;
    feed.cursor = end;
    feed.recent.push(batch);
    const byFilter = new Map<string, Buffer | null>();
    for (const member of feed.members) {
      if (member.state !== 'live') continue;
      let frames: Buffer | null | undefined;
      if (member.cursor === start) {
        frames = byFilter.get(member.filterKey);
        if (frames === undefined) byFilter.set(member.filterKey, (frames = framesFor(member, batch, start).frames));
      } else {
        frames = framesFor(member, batch, member.cursor).frames; // it started after the feed's cursor
      }
      member.cursor = Math.max(member.cursor, end);
      if (frames !== null && !member.write(frames)) this.waitForDrain(feed, member);
    }
  }
}
