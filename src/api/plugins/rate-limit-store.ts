import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../../store/db.ts';
import { addRateLimitHits, deleteExpiredRateLimitHits, type BucketHits } from '../../store/rate-limits.ts';

type Callback = (error: Error | null, result?: { current: number; ttl: number }) => void;

interface Bucket {
  windowStart: number;
  timeWindow: number;
  /** The limit of the bucket's limiter (as the plugin passes it with each hit). */
  max: number;
  /** The total over all replicas as of this replica's last flush (its own flushed hits included). */
  shared: number;
  /** Hits counted here since then. */
  pending: number;
}

/** How often expired rows are deleted (by whichever replica flushes). */
const PURGE_EVERY_MS = 60_000;
/** Rows per statement. */
const FLUSH_BATCH = 500;

/**
 * A `@fastify/rate-limit` store shared by every replica of one PostgreSQL database.
 *
 * Counting stays off the request path: a hit is counted in memory and judged against the shared
 * total last read plus this replica's hits since, and the local hits are added to the database in
 * one statement per flush (every `flushIntervalMs`, only while there is something to add), which
 * answers the new totals. Windows are fixed (aligned to the epoch), so replicas agree on them.
 * Between flushes each replica may admit what it has not yet heard of from the others: the limit
 * holds across replicas to within one flush interval of traffic. A database that cannot be
 * reached leaves every replica limiting on its own counts until it can.
 */
export class SharedRateLimitStore {
  private readonly buckets = new Map<string, Bucket>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private lastPurge = 0;
  private closed = false;
  /** Told when a flush shows a bucket at or over its limit (counted by other replicas too). */
  onOverLimit: ((key: string, untilMs: number) => void) | null = null;

  constructor(
    private readonly store: Store,
    private readonly flushIntervalMs: number,
    private readonly log: FastifyBaseLogger,
    private readonly now: () => number = Date.now,
  ) {}

  /** The class `@fastify/rate-limit` instantiates (it calls `new Store(options)`); every instance is this one. */
  asStoreClass(): new () => SharedRateLimitStore {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const shared = this;
    return function SharedStore() {
      return shared;
    } as unknown as new () => SharedRateLimitStore;
  }

  /** Every limiter shares the counters; their keys carry their own namespace. */
  child(): SharedRateLimitStore {
    return this;
  }

  incr(key: string, callback: Callback, timeWindow: number, max: number): void {
    const bucket = this.bucket(key, timeWindow);
    bucket.max = max;
    bucket.pending++;
    this.schedule();
    callback(null, { current: bucket.shared + bucket.pending, ttl: bucket.windowStart + timeWindow - this.now() });
  }

  read(key: string, callback: Callback, timeWindow: number): void {
    const bucket = this.bucket(key, timeWindow);
    callback(null, { current: bucket.shared + bucket.pending, ttl: bucket.windowStart + timeWindow - this.now() });
  }

  /** Adds what is pending now; resolves when the database has answered (or failed). */
  flush(): Promise<void> {
    this.flushing ??= this.flushNow().finally(() => {
      this.flushing = null;
      if (this.hasPending()) this.schedule();
    });
    return this.flushing;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flushing;
    if (this.hasPending()) await this.flushNow();
  }

  private bucket(key: string, timeWindow: number): Bucket {
    const now = this.now();
    const windowStart = now - (now % timeWindow);
    let bucket = this.buckets.get(key);
    if (!bucket || bucket.windowStart !== windowStart) {
      // A new window starts from zero here; the flush brings in what other replicas counted.
      if (bucket && bucket.pending > 0 && bucket.windowStart < windowStart) void this.flush();
      bucket = { windowStart, timeWindow, max: Number.POSITIVE_INFINITY, shared: 0, pending: 0 };
      this.buckets.set(key, bucket);
    }
    return bucket;
  }

  private hasPending(): boolean {
    for (const bucket of this.buckets.values()) if (bucket.pending > 0) return true;
    return false;
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, this.flushIntervalMs);
    this.timer.unref();
  }

  private async flushNow(): Promise<void> {
    const now = this.now();
    const sent: { key: string; bucket: Bucket; hits: number }[] = [];
    for (const [key, bucket] of this.buckets) {
      if (bucket.pending > 0) {
        sent.push({ key, bucket, hits: bucket.pending });
        bucket.shared += bucket.pending;
        bucket.pending = 0;
      } else if (bucket.windowStart + bucket.timeWindow <= now) {
        this.buckets.delete(key);
      }
    }
    let done = 0;
    try {
      for (; done < sent.length; done += FLUSH_BATCH) {
        const part = sent.slice(done, done + FLUSH_BATCH);
        const rows: BucketHits[] = part.map(({ key, bucket, hits }) => ({
          bucket: key,
          window_start: bucket.windowStart,
          expires_at: bucket.windowStart + bucket.timeWindow,
          hits,
        }));
        const totals = new Map((await addRateLimitHits(this.store.db, rows)).map((r) => [`${r.bucket}\n${r.window_start}`, Number(r.hits)]));
        for (const { key, bucket } of part) {
          const total = totals.get(`${key}\n${bucket.windowStart}`);
          if (total === undefined || this.buckets.get(key) !== bucket) continue;
          bucket.shared = Math.max(bucket.shared, total);
          if (bucket.shared + bucket.pending >= bucket.max) this.onOverLimit?.(key, bucket.windowStart + bucket.timeWindow);
        }
      }
      if (now - this.lastPurge >= PURGE_EVERY_MS) {
        this.lastPurge = now;
        await deleteExpiredRateLimitHits(this.store.db, now);
      }
    } catch (error) {
      // Not lost: what was not added is counted again at the next flush. Meanwhile this replica
      // limits on its own counts.
      for (const { key, bucket, hits } of sent.slice(done)) {
        if (this.buckets.get(key) !== bucket) continue;
        bucket.shared -= hits;
        bucket.pending += hits;
      }
      this.log.warn({ err: error }, 'rate limits: could not share counts through the database');
    }
  }
}
