/**
 * Per-key token buckets (SPEC §4.2 429): `perMinute` tokens, refilled continuously, so a key
 * may burst up to its minute's worth and then proceeds at the steady rate. The clock is injected.
 */
export type TakeResult = { ok: true } | { ok: false; retryAfterSec: number };

interface Bucket {
  tokens: number;
  at: number;
}

const MAX_BUCKETS = 50_000;

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;

  constructor(private readonly perMinute: number, private readonly now: () => number) {
    this.perMs = perMinute / 60_000;
  }

  take(key: string): TakeResult {
    const now = this.now();
    const bucket = this.refilled(key, now);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true };
    }
    const waitMs = (1 - bucket.tokens) / this.perMs;
    return { ok: false, retryAfterSec: Math.max(1, Math.ceil(waitMs / 1000)) };
  }

  private refilled(key: string, now: number): Bucket {
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      if (this.buckets.size >= MAX_BUCKETS) this.evictFull(now);
      bucket = { tokens: this.perMinute, at: now };
      this.buckets.set(key, bucket);
      return bucket;
    }
    const elapsed = Math.max(0, now - bucket.at);
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + elapsed * this.perMs);
    bucket.at = now;
    return bucket;
  }

  // a full bucket holds no state worth keeping: dropping it is the same as a fresh one
  private evictFull(now: number): void {
    for (const [key, b] of this.buckets) {
      if (b.tokens + (now - b.at) * this.perMs >= this.perMinute) this.buckets.delete(key);
    }
  }
}
