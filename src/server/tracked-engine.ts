import type { CompiledWorkflow } from '../model/graph.js';
import { Engine, type ExecutionHandle, type RunListener } from '../engine/engine.js';
import type { StartRequest } from '../runtime/types.js';

/**
 * The engine plus the handles of the executions this process runs, so a shutdown can wait for
 * them and cancel the ones that outlive the grace period (they are then recorded `cancelled`
 * instead of being found `running` by the next start).
 */
export class TrackedEngine extends Engine {
  private readonly handles = new Map<string, ExecutionHandle>();

  override async start(workflow: CompiledWorkflow, req: StartRequest, listener?: RunListener): Promise<ExecutionHandle> {
    const handle = await super.start(workflow, req, listener);
    this.handles.set(handle.id, handle);
    const forget = (): void => {
      this.handles.delete(handle.id);
    };
    handle.done.then(forget, forget);
    return handle;
  }

  /** ids of the executions running in this process */
  get localIds(): string[] {
    return [...this.handles.keys()];
  }

  /** Resolves true when every local execution has ended, false when `timeoutMs` passed first. */
  async whenIdle(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.handles.size > 0) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      const pending = [...this.handles.values()].map((h) => h.done.then(noop, noop));
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
    const handle = this.handles.get(id);
    handle?.cancel();
    return handle !== undefined;
  }

  /** Cancels every local execution; returns how many were asked to stop. */
  cancelAll(): number {
    const handles = [...this.handles.values()];
    for (const h of handles) h.cancel();
    return handles.length;
  }
}

function noop(): void {
  // settled either way
}
