/** Small helpers for background work that retries: per-key backoff, and a time cap on a promise. */

const FIRST_DELAY_MS = 1_000;
const MAX_DELAY_MS = 5 * 60_000;

/** Doubling delays per key (1 s up to 5 min), so one item that keeps failing is retried rarely. */
export class RetryBackoff {
  private readonly entries = new Map<string, { until: number; delayMs: number }>();

  waiting(key: string, now: number): boolean {
    const e = this.entries.get(key);
    return e !== undefined && now < e.until;
  }

  /** records a failure; returns how long until the next attempt */
  failed(key: string, now: number): number {
    const delayMs = Math.min(MAX_DELAY_MS, (this.entries.get(key)?.delayMs ?? FIRST_DELAY_MS / 2) * 2);
    this.entries.set(key, { until: now + delayMs, delayMs });
    return delayMs;
  }

  forget(key: string): void {
    this.entries.delete(key);
  }
}

/** Rejects when `p` has not settled within `ms`. */
export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
