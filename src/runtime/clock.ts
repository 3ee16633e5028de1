import { TroupeError } from '../errors.js';
import type { Clock } from '../blocks/types.js';

/** The real clock; tests inject their own (DESIGN example 3). */
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
      }, Math.max(0, ms));
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(new TroupeError('CANCELLED', 'cancelled while waiting'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};
