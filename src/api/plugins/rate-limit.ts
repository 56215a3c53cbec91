import { AppError } from '../../errors.ts';

/**
 * A token bucket per API key, per replica: `perMinute` requests a minute with bursts up to the
 * same number. 0 disables it.
 */
export class RateLimiter {
  private readonly buckets = new Map<number, { tokens: number; at: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  take(keyId: number): void {
    if (this.perMinute === 0) return;
    const now = this.now();
    const refillPerMs = this.perMinute / 60_000;
    const bucket = this.buckets.get(keyId) ?? { tokens: this.perMinute, at: now };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * refillPerMs);
    bucket.at = now;
    this.buckets.set(keyId, bucket);
    if (bucket.tokens < 1) {
      const retryAfterSeconds = Math.max(1, Math.ceil((1 - bucket.tokens) / refillPerMs / 1000));
      throw new AppError('RATE_LIMITED', `rate limit of ${this.perMinute} requests per minute exceeded`, { retryAfterSeconds });
    }
    bucket.tokens -= 1;
  }
}
