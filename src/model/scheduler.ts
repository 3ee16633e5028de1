/**
 * The scheduler actor's timing decisions (actors/scheduler.ts), free of effects. Due times come
 * from cron-next.ts; whether a leader lease may be taken is lease.ts.
 */

/** a timer may fire a millisecond early by the wall clock: land safely past the boundary */
const ALIGN_MARGIN_MS = 5;

/** how often the leading scheduler looks for due times: they are whole seconds */
export const SCHEDULER_TICK_MS = 1_000;

/**
 * Milliseconds from `nowMs` to just past the next multiple of `intervalMs`: a scheduler ticking
 * at whole seconds fires a due second as it begins, where a tick at the phase the process
 * happened to start in would fire it up to a whole interval late.
 */
export function delayToNextTick(nowMs: number, intervalMs: number): number {
  return intervalMs - (((nowMs % intervalMs) + intervalMs) % intervalMs) + ALIGN_MARGIN_MS;
}
