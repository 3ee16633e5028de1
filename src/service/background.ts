/** Helpers for background work: a periodic job run one at a time, per-key retry backoff, a time cap on a promise. */
import { delayToNextTick } from '../model/scheduler.js';

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
    // it only decides a race: it must not keep the process alive
    timer.unref();
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Work run every interval once started, one run at a time (a run asked for while one is in
 * progress is skipped and counts 0); `stop()` waits for the run in progress, which checks
 * `stopped` between its items.
 */
export class PeriodicWork {
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<number> | undefined;
  stopped = false;

  constructor(private readonly onError: (err: unknown) => void) {}

  run(work: () => Promise<number>): Promise<number> {
    if (this.current !== undefined) return Promise.resolve(0);
    this.current = work().finally(() => {
      this.current = undefined;
    });
    return this.current;
  }

  /**
   * Runs `work` now, then every interval. With `alignTo` (a clock), each later run is timed
   * just after the clock's next multiple of the interval instead of at the start's phase.
   */
  start(intervalMs: number, work: () => Promise<number>, alignTo?: () => number): void {
    if (this.timer !== undefined) return;
    this.stopped = false;
    const tick = (): void => {
      this.run(work).catch(this.onError);
    };
    if (alignTo === undefined) {
      this.timer = setInterval(tick, intervalMs);
      this.timer.unref();
    } else {
      const next = (): void => {
        this.timer = setTimeout(() => {
          if (this.stopped) return;
          next();
          tick();
        }, delayToNextTick(alignTo(), intervalMs));
        this.timer.unref();
      };
      next();
    }
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    // clearInterval clears a timeout too (one timer kind in Node)
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.current?.catch(() => undefined);
  }
}
