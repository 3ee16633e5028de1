import { Engine } from '../engine/engine.js';

/**
 * The engine with what a shutdown needs of the executions this process runs (the engine's own
 * registry of them): waiting for them, and cancelling the ones that outlive the grace period
 * (they are then recorded `cancelled` instead of being found `running` by the next start).
 */
export class TrackedEngine extends Engine {
  /** Resolves true when every local execution has ended, false when `timeoutMs` passed first. */
  async whenIdle(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (let handles = this.localHandles(); handles.length > 0; handles = this.localHandles()) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      const pending = handles.map((h) => h.done.then(noop, noop));
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, left);
      });
      await Promise.race([Promise.all(pending), timeout]);
      clearTimeout(timer);
    }
    return true;
  }

  /** Cancels the execution if it runs here (never asks another process, unlike `cancel`). */
  cancelHere(id: string): boolean {
    const handle = this.local(id);
    handle?.cancel();
    return handle !== undefined;
  }

  /** Cancels every local execution; returns how many were asked to stop. */
  cancelAll(): number {
    const handles = this.localHandles();
    for (const h of handles) h.cancel();
    return handles.length;
  }
}

function noop(): void {
  // settled either way
}
