import { TroupeError } from '../errors.js';
import type { CancelTimer, Clock, TimerOptions } from '../model/clock.js';
import { MAX_TIMER_MS } from '../model/schema.js';

/** a longer delay would fire at once (Node clamps it to 1 ms): a longer timer fires at the longest it can */
const timerMs = (ms: number): number => Math.min(MAX_TIMER_MS, Math.max(0, ms));

/** The real clock; tests inject their own (DESIGN example 3; test/helpers/fake-clock.ts). */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(new TroupeError('CANCELLED', 'cancelled while waiting'));
        return;
      }
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, timerMs(ms));
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(new TroupeError('CANCELLED', 'cancelled while waiting'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
  setTimer(ms: number, fire: () => void, options?: TimerOptions): CancelTimer {
    const timer = setTimeout(fire, timerMs(ms));
    if (options?.background === true) timer.unref();
    return () => clearTimeout(timer);
  },
};
