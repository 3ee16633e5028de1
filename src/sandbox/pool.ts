import ivm from 'isolated-vm';
import { TroupeError } from '../errors.js';

export const SLEEP_GLOBAL = '__troupeSleep';

/** Longest wait a timer may ask for (setTimeout's own limit). */
const MAX_SLEEP_MS = 2 ** 31 - 1;
/**
 * Isolates one pool may hold when calls sleep: past its size, a pool adds an isolate only while
 * fewer than `size` of its calls are computing (the others wait on timers), up to this.
 */
const MAX_ISOLATES = 32;

/** Compiled runner scripts kept per isolate: a block's code is compiled once, not per call. */
const SCRIPT_CACHE_SIZE = 256;

/**
 * One isolate, used by one call at a time. isolated-vm runs an isolate on one thread, so
 * concurrent calls on it would only queue inside the native layer; queueing them here instead
 * bounds what a disposal (timeout, abort, memory blow-up) can take down to the running call.
 */
export class IsolateSlot {
  private isolate: ivm.Isolate | undefined;
  /** a context created ahead of time, off the critical path of the next call */
  private spare: Promise<ivm.Context> | undefined;
  private readonly scripts = new Map<string, ivm.Script>();
  /** the running call's pending timers */
  private readonly timers = new Set<NodeJS.Timeout>();
  /**
   * The host's timer, handed to each function call's context as SLEEP_GLOBAL (the runner turns
   * it into setTimeout and removes it): the only host capability user code gets, and it can only
   * wait. Its timers are unref'd (a run's end does not wait for them) and cleared with the call.
   */
  readonly sleepRef = new ivm.Reference((ms: unknown) => this.sleep(ms));
  /** told when the running call starts waiting on a timer (the pool may then add an isolate) */
  onSleep: (() => void) | undefined;

  constructor(private readonly memoryMb: number) {}

  /** The running call waits on a timer: its isolate's thread is free. */
  get asleep(): boolean {
    return this.timers.size > 0;
  }

  /** The call is over: timers it left pending never fire. */
  endCall(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private sleep(ms: unknown): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, Math.min(Math.max(0, Number(ms) || 0), MAX_SLEEP_MS));
      timer.unref();
      this.timers.add(timer);
      this.onSleep?.();
    });
  }

  /** The compiled script for this source, from the cache when the same code ran before. */
  async script(source: string, filename: string, lineOffset: number): Promise<ivm.Script> {
    const cached = this.scripts.get(source);
    if (cached !== undefined) {
      // refresh its place: the map's order is the eviction order
      this.scripts.delete(source);
      this.scripts.set(source, cached);
      return cached;
    }
    const isolate = this.live();
    const script = await isolate.compileScript(source, { filename, lineOffset });
    if (isolate !== this.isolate) return script;
    this.scripts.set(source, script);
    if (this.scripts.size > SCRIPT_CACHE_SIZE) this.evictOldest();
    return script;
  }

  get alive(): boolean {
    return this.isolate !== undefined && !this.isolate.isDisposed;
  }

  /** A fresh Context: every call gets its own globals and builtins. */
  async takeContext(): Promise<ivm.Context> {
    const spare = this.spare;
    this.spare = undefined;
    if (spare !== undefined) {
      try {
        return await spare;
      } catch {
        // the isolate died while the spare was being made; fall through to a new isolate
      }
    }
    return this.newContext();
  }

  /** Starts building the next call's context while the host does other work. */
  prewarm(): void {
    if (!this.alive || this.spare !== undefined) return;
    const spare = this.newContext();
    spare.catch(() => undefined);
    this.spare = spare;
  }

  private newContext(): Promise<ivm.Context> {
    return this.live().createContext();
  }

  /** Throws the isolate away (a runaway call, or dispose); the next call gets a new one. */
  kill(): void {
    const isolate = this.isolate;
    this.isolate = undefined;
    this.spare = undefined;
    this.scripts.clear();
    if (isolate !== undefined && !isolate.isDisposed) {
      try {
        isolate.dispose();
      } catch {
        // already disposed by isolated-vm itself (memory limit)
      }
    }
  }

  private live(): ivm.Isolate {
    if (this.isolate === undefined || this.isolate.isDisposed) {
      this.spare = undefined;
      this.scripts.clear();
      this.isolate = new ivm.Isolate({ memoryLimit: this.memoryMb });
    }
    return this.isolate;
  }

  private evictOldest(): void {
    const oldest = this.scripts.keys().next();
    if (oldest.done === true) return;
    const script = this.scripts.get(oldest.value);
    this.scripts.delete(oldest.value);
    try {
      script?.release();
    } catch {
      // released with its isolate already
    }
  }
}

interface Waiter {
  resolve(slot: IsolateSlot): void;
  reject(err: unknown): void;
}

/**
 * A few isolates for one memory limit, created lazily, handed out one call at a time. A call
 * that waits on a timer keeps its isolate (its context lives there), so waiting calls would
 * hold every slot and queue the rest, however idle the threads: past its size the pool adds
 * isolates while fewer than `size` calls compute, so ready blocks run concurrently (SPEC §2).
 */
export class IsolatePool {
  private readonly idle: IsolateSlot[] = [];
  private readonly waiters: Waiter[] = [];
  private created = 0;
  private closed = false;
  private readonly slots: IsolateSlot[] = [];
  private readonly busy = new Set<IsolateSlot>();

  constructor(
    private readonly memoryMb: number,
    private readonly size: number,
  ) {}

  acquire(signal?: AbortSignal): Promise<IsolateSlot> {
    if (this.closed) return Promise.reject(new TroupeError('INTERNAL', 'the sandbox has been disposed'));
    const slot = this.idle.pop() ?? this.create();
    if (slot !== undefined) {
      this.busy.add(slot);
      return Promise.resolve(slot);
    }
    return new Promise<IsolateSlot>((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(cancelled());
      };
      const waiter: Waiter = {
        resolve: (s) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(s);
        },
        reject,
      };
      this.waiters.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  release(slot: IsolateSlot): void {
    slot.endCall();
    this.busy.delete(slot);
    if (this.closed) {
      slot.kill();
      return;
    }
    const waiter = this.waiters.shift();
    if (waiter !== undefined) {
      this.busy.add(slot);
      waiter.resolve(slot);
      return;
    }
    slot.prewarm();
    this.idle.push(slot);
  }

  close(): void {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) waiter.reject(new TroupeError('INTERNAL', 'the sandbox has been disposed'));
    for (const slot of this.slots) slot.kill();
    this.idle.length = 0;
  }

  private create(): IsolateSlot | undefined {
    if (this.created >= MAX_ISOLATES) return undefined;
    if (this.created >= this.size && this.computing() >= this.size) return undefined;
    this.created += 1;
    const slot = new IsolateSlot(this.memoryMb);
    slot.onSleep = () => this.serveWaiters();
    this.slots.push(slot);
    return slot;
  }

  private computing(): number {
    let n = 0;
    for (const slot of this.busy) if (!slot.asleep) n += 1;
    return n;
  }

  /** A call went to sleep: a queued call may now get an isolate of its own. */
  private serveWaiters(): void {
    while (this.waiters.length > 0 && !this.closed) {
      const slot = this.create();
      if (slot === undefined) return;
      this.busy.add(slot);
      this.waiters.shift()?.resolve(slot);
    }
  }
}

export function cancelled(): TroupeError {
  return new TroupeError('CANCELLED', 'cancelled');
}
