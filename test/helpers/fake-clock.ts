/**
 * A simulated clock for runtime tests (DESIGN example 3): time moves only when the test moves it,
 * so a test of a time limit, a retry's backoff or a wait takes no real time and cannot be
 * decided by how loaded the machine is.
 *
 *   const clock = new FakeClock();
 *   const engine = testEngine(bus, { clock });
 *   const result = await clock.runUntil(runWorkflow(engine, doc));   // fires each timer when all else has settled
 *   await clock.advance(150);                                        // or step by hand
 *
 * Between two timers it lets everything else settle: promise callbacks, `setImmediate` turns (the
 * execution's report queue) and, through the `idle` option, the bus (`bus.flush()`: over NATS a
 * message is a socket round trip, which no number of event-loop turns is sure to cover). Work
 * that takes real time outside the bus (the function sandbox's thread) is announced with
 * `hold(promise)`: while some is in flight, `runUntil` waits for it rather than jump ahead
 * (testEngine wraps the sandbox so). Within one instant, timers fire in the order they were set.
 */
import { TroupeError } from '../../src/errors.js';
import type { CancelTimer, Clock } from '../../src/model/clock.js';

interface Timer {
  at: number;
  seq: number;
  fire(): void;
}

export interface FakeClockOptions {
  /** where time starts (ms since the epoch); default the real now, so stored dates look real */
  start?: number;
  /** waits until what was sent has been delivered (e.g. `() => bus.flush()`) */
  idle?: () => Promise<void>;
  /** a count that grows with every step of the work off the clock (e.g. bus messages): settling goes on while it moves */
  activity?: () => number;
}

const turn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: Timer[] = [];
  /** real work in flight (see hold) */
  private busy = 0;
  /** every change a settle must wait out: a timer set, cancelled or fired, real work begun or ended */
  private changes = 0;
  private wake: (() => void) | null = null;
  private readonly idle: (() => Promise<void>) | undefined;
  private readonly activity: () => number;

  constructor(options: FakeClockOptions = {}) {
    this.t = options.start ?? Date.now();
    this.idle = options.idle;
    this.activity = options.activity ?? (() => 0);
  }

  now(): number {
    return this.t;
  }

  setTimer(ms: number, fire: () => void): CancelTimer {
    const timer: Timer = { at: this.t + Math.max(0, ms), seq: this.seq++, fire };
    this.timers.push(timer);
    this.changed();
    return () => {
      const i = this.timers.indexOf(timer);
      if (i < 0) return;
      this.timers.splice(i, 1);
      this.changed();
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(new TroupeError('CANCELLED', 'cancelled while waiting'));
        return;
      }
      const onAbort = (): void => {
        cancel();
        reject(new TroupeError('CANCELLED', 'cancelled while waiting'));
      };
      const cancel = this.setTimer(ms, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** timers set and not yet fired or cancelled */
  get pending(): number {
    return this.timers.length;
  }

  /** Marks real work (not on this clock) in flight until `work` settles; returns it. */
  hold<T>(work: Promise<T>): Promise<T> {
    this.busy += 1;
    this.changed();
    const done = (): void => {
      this.busy -= 1;
      this.changed();
    };
    work.then(done, done);
    return work;
  }

  /**
   * Lets everything that does not wait for time run: event-loop turns (and the bus, see `idle`)
   * until a round changes nothing on this clock. Real work held open is not waited for.
   */
  async settle(): Promise<void> {
    for (let round = 0; round < 100; round += 1) {
      const before = this.changes + this.activity();
      for (let i = 0; i < 4; i += 1) await turn();
      if (this.idle !== undefined) await this.idle();
      await turn();
      if (this.changes + this.activity() === before && round > 0) return;
    }
  }

  /** Moves time forward by `ms`, firing the timers that fall due in order, settling after each. */
  async advance(ms: number): Promise<void> {
    const target = this.t + ms;
    await this.settle();
    for (let next = this.nextDue(); next !== undefined && next.at <= target; next = this.nextDue()) {
      await this.fire(next);
    }
    this.t = Math.max(this.t, target);
    await this.settle();
  }

  /**
   * Drives time until `work` settles: whenever nothing else can happen (everything settled, no
   * real work held), jumps to the earliest timer and fires it. Resolves or rejects with `work`.
   */
  async runUntil<T>(work: Promise<T>): Promise<T> {
    let finished = false;
    const watched = work.finally(() => {
      finished = true;
      this.changed();
    });
    watched.catch(() => undefined);
    for (;;) {
      await this.settle();
      if (finished) return watched;
      const next = this.nextDue();
      if (this.busy > 0 || next === undefined) await this.nextChange();
      else await this.fire(next);
    }
  }

  private nextDue(): Timer | undefined {
    let best: Timer | undefined;
    for (const t of this.timers) if (best === undefined || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    return best;
  }

  private async fire(timer: Timer): Promise<void> {
    this.timers.splice(this.timers.indexOf(timer), 1);
    this.t = Math.max(this.t, timer.at);
    this.changed();
    timer.fire();
    await this.settle();
  }

  private changed(): void {
    this.changes += 1;
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  /** resolves on the next change (a timer set, real work done): what runUntil waits for when it cannot move time */
  private nextChange(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wake = resolve;
    });
  }
}
