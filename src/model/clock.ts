/**
 * A clock that tests can drive (DESIGN example 3). Declared here, below every layer, so the
 * block contract, the runtime's timers and the outbound client can all name it without importing
 * each other. Every time the runtime reads or waits for goes through one: the engine's deps hold
 * the process's clock and hand it down to the execution, block and container actors.
 */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Calls `fire` once, `ms` from now, unless the returned function is called first (cancelling
   * an already fired or cancelled timer does nothing). A time limit is a timer rather than a
   * sleep: nothing awaits it, and it is cancelled far more often than it fires.
   */
  setTimer(ms: number, fire: () => void, options?: TimerOptions): CancelTimer;
}

export interface TimerOptions {
  /** the timer must not keep the process alive by itself (it waits for something else) */
  background?: boolean;
}

export type CancelTimer = () => void;
