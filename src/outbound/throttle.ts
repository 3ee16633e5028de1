import { TroupeError } from '../errors.js';
import type { Clock } from '../blocks/types.js';

/**
 * Per-host politeness shared by every send of one client (one client per process), so parallel
 * branches and concurrent executions do not stampede one API.
 *
 * Rate: each request reserves the next start slot of its host, slots 1/rps apart. Slots are
 * reserved on a virtual timeline, so a late timer does not lower the rate, and an idle host
 * starts again at once (no burst is saved up). A wait under 1 ms is not slept (timer granularity):
 * above 1000 rps requests may start up to 1 ms early, the long-run rate is unchanged. In flight: at most `maxInflight` requests per
 * host, granted first-come first-served; a slot is held until the response body is read.
 */
export interface HostThrottle {
  /** waits for a slot of `host`; resolves with the function that gives it back */
  acquire(host: string, signal: AbortSignal): Promise<() => void>;
  /** for tests and metrics */
  stats(host: string): { inflight: number; queued: number };
}

export interface HostThrottleOptions {
  rps: number;
  maxInflight: number;
  clock: Clock;
}

interface Waiter {
  grant(): void;
}

interface HostState {
  inflight: number;
  queue: Waiter[];
  nextSlot: number;
}

function cancelled(): TroupeError {
  return new TroupeError('CANCELLED', 'cancelled while waiting for the host throttle');
}

export function createHostThrottle(options: HostThrottleOptions): HostThrottle {
  if (!(options.rps > 0) || !(options.maxInflight >= 1)) {
    throw new TroupeError('INVALID_CONFIG', 'host throttle needs rps > 0 and maxInflight >= 1');
  }
  return new TokenTimelineThrottle(1000 / options.rps, options.maxInflight, options.clock);
}

class TokenTimelineThrottle implements HostThrottle {
  private readonly hosts = new Map<string, HostState>();

  constructor(
    private readonly interval: number,
    private readonly maxInflight: number,
    private readonly clock: Clock,
  ) {}

  async acquire(host: string, signal: AbortSignal): Promise<() => void> {
    const state = this.stateOf(host);
    await this.takeInflight(state, signal);
    let released = false;
    const giveBack = (): void => {
      if (released) return;
      released = true;
      this.release(host, state);
    };
    const now = this.clock.now();
    const start = Math.max(now, state.nextSlot);
    state.nextSlot = start + this.interval;
    // timers cannot wait less than ~1 ms; the slot stays reserved, so the rate still holds
    if (start - now >= 1) {
      try {
        await this.clock.sleep(start - now, signal);
      } catch (err) {
        giveBack();
        throw signal.aborted ? cancelled() : err;
      }
    }
    return giveBack;
  }

  stats(host: string): { inflight: number; queued: number } {
    const state = this.hosts.get(host);
    return { inflight: state?.inflight ?? 0, queued: state?.queue.length ?? 0 };
  }

  private stateOf(host: string): HostState {
    let state = this.hosts.get(host);
    if (!state) {
      state = { inflight: 0, queue: [], nextSlot: -Infinity };
      this.hosts.set(host, state);
    }
    return state;
  }

  private takeInflight(state: HostState, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(cancelled());
    if (state.inflight < this.maxInflight && state.queue.length === 0) {
      state.inflight += 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = (): void => {
        const i = state.queue.indexOf(waiter);
        if (i >= 0) state.queue.splice(i, 1);
        reject(cancelled());
      };
      signal.addEventListener('abort', onAbort, { once: true });
      state.queue.push(waiter);
    });
  }

  private release(host: string, state: HostState): void {
    const next = state.queue.shift();
    if (next) {
      next.grant(); // the slot passes straight to the next waiter: inflight is unchanged
      return;
    }
    state.inflight -= 1;
    if (state.inflight === 0 && state.nextSlot <= this.clock.now()) this.hosts.delete(host);
  }
}
