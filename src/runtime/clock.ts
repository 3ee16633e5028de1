import { TroupeError } from '../errors.js';
import type { Clock } from '../blocks/types.js';
import { MAX_TIMER_MS } from '../model/schema.js';

/** The real clock; tests inject their own (DESIGN example 3). */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(new TroupeError('CANCELLED', 'cancelled while waiting'));
        return;
      }
      // a longer delay would fire at once (Node clamps it to 1 ms): a backoff doubled past it waits the longest it can
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, Math.min(MAX_TIMER_MS, Math.max(0, ms)));
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(new TroupeError('CANCELLED', 'cancelled while waiting'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};
