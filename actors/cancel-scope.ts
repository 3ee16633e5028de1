import { setMaxListeners } from 'node:events';

/**
 * Where the blocks of an execution (or of a container's iterations) learn that their scope has
 * ended. The AbortSignal behind it is made only when something asks for it: most blocks never
 * look at it (a starter, a condition, a response), and making, tuning and aborting a signal was
 * several microseconds of every execution. A scope ended before its signal was made hands out a
 * signal already aborted with the same reason.
 */
export class CancelScope {
  private controller: AbortController | null = null;
  private ended = false;
  private why: unknown = undefined;

  get aborted(): boolean {
    return this.ended;
  }

  get signal(): AbortSignal {
    if (this.controller === null) {
      const controller = new AbortController();
      // every running block of the scope may listen on it: many listeners are expected
      setMaxListeners(0, controller.signal);
      if (this.ended) controller.abort(this.why);
      this.controller = controller;
    }
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.why = reason;
    this.controller?.abort(reason);
  }

  /** A scope that also ends when this one does (a container's iterations inside the execution). */
  child(): CancelScope {
    const child = new CancelScope();
    if (this.ended) {
      child.abort(this.why);
      return child;
    }
    const parent = this.signal;
    parent.addEventListener('abort', () => child.abort(parent.reason), { once: true });
    return child;
  }
}
