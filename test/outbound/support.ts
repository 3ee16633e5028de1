import type { Clock } from '../../src/blocks/types.js';
import { expect } from 'chai';
import { TroupeError } from '../../src/errors.js';
import type { OutboundRequest } from '../../src/outbound/types.js';

/** A clock whose sleeps return at once (time jumps ahead) and are recorded. */
export class InstantClock implements Clock {
  readonly sleeps: number[] = [];
  private offset = 0;

  constructor(private readonly base = Date.now()) {}

  now(): number {
    return this.base + this.offset;
  }

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw new TroupeError('CANCELLED', 'cancelled');
    this.sleeps.push(ms);
    this.offset += ms;
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (signal?.aborted) throw new TroupeError('CANCELLED', 'cancelled');
  }

  /** fires on the next turn, time jumping ahead as a sleep's does */
  setTimer(ms: number, fire: () => void): () => void {
    const controller = new AbortController();
    this.sleep(ms, controller.signal).then(fire, () => undefined);
    return () => controller.abort();
  }
}

interface Timer {
  at: number;
  resolve(): void;
}

/** A clock that only moves when the test says so. */
export class ManualClock implements Clock {
  private t = 0;
  private timers: Timer[] = [];

  now(): number {
    return this.t;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(new TroupeError('CANCELLED', 'cancelled'));
      const timer: Timer = {
        at: this.t + ms,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = (): void => {
        this.timers = this.timers.filter((x) => x !== timer);
        reject(new TroupeError('CANCELLED', 'cancelled'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.timers.push(timer);
    });
  }

  setTimer(ms: number, fire: () => void): () => void {
    const controller = new AbortController();
    this.sleep(ms, controller.signal).then(fire, () => undefined);
    return () => controller.abort();
  }

  get pending(): number {
    return this.timers.length;
  }

  /** Moves time forward, firing due sleeps in time order, letting promise callbacks run between. */
  async advance(ms: number): Promise<void> {
    const target = this.t + ms;
    for (;;) {
      await flush();
      const due = this.timers.filter((x) => x.at <= target).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.t = Math.max(this.t, due.at);
      this.timers = this.timers.filter((x) => x !== due);
      due.resolve();
    }
    this.t = target;
    await flush();
  }
}

export async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A request with test-friendly defaults: short backoff, a generous timeout. */
export function outboundRequest(url: string, over: Partial<OutboundRequest> = {}): OutboundRequest {
  return {
    url,
    method: 'GET',
    headers: {},
    timeoutMs: 2000,
    retries: 3,
    retryBaseMs: 4,
    retryMaxMs: 1000,
    maxResponseBytes: 1024 * 1024,
    ...over,
  };
}

export async function rejection(p: Promise<unknown>): Promise<TroupeError> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(TroupeError);
    return err as TroupeError;
  }
  throw new Error('expected a rejection');
}
