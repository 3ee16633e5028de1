import { TroupeError } from '../errors.js';
import { IsolateSlot } from './slot.js';

export { IsolateSlot } from './slot.js';

export interface PoolOptions {
  /** isolates kept; calls compute on at most this many at once */
  size: number;
  /** isolates the pool may hold when calls sleep on timers */
  maxIsolates: number;
  /** isolates one caller may hold at once (the rest of its calls wait in its own queue) */
  perCaller: number;
  /** how long an isolate beyond `size` may stay idle before it is disposed */
  idleMs: number;
}

interface Waiter {
  key: string;
  resolve(slot: IsolateSlot): void;
  reject(err: unknown): void;
}

/** the queue key of calls that name no caller */
const ANONYMOUS = '';

/**
 * A few isolates for one memory limit, created lazily, handed out one call at a time, fairly
 * between callers (workflows):
 * - each caller waits in a queue of its own; a free isolate goes to the waiting caller that holds
 *   the fewest, so a workflow with a thousand calls queued delays another's next call by at most
 *   one call, never by its whole queue;
 * - a caller holds at most `perCaller` isolates at once, so sleeping calls of one workflow cannot
 *   take every isolate the pool may add;
 * - past `size`, an isolate is added only while fewer than `size` calls compute (the others wait
 *   on timers, checked on the isolate's CPU time), so CPU-bound work stays bounded by `size`
 *   whatever timers are pending, and ready blocks that sleep still run side by side (SPEC §2);
 * - isolates beyond `size` are disposed once idle for `idleMs`, so their memory comes back.
 */
export class IsolatePool {
  private readonly idle: IsolateSlot[] = [];
  private readonly queues = new Map<string, Waiter[]>();
  private readonly slots = new Set<IsolateSlot>();
  private readonly busy = new Set<IsolateSlot>();
  private readonly held = new Map<string, number>();
  private closed = false;
  private trim: NodeJS.Timeout | undefined;

  constructor(
    private readonly memoryMb: number,
    private readonly options: PoolOptions,
  ) {}

  /** isolates alive now (busy or idle) */
  get isolates(): number {
    return this.slots.size;
  }

  acquire(caller: string | undefined, signal?: AbortSignal): Promise<IsolateSlot> {
    if (this.closed) return Promise.reject(new TroupeError('INTERNAL', 'the sandbox has been disposed'));
    const key = caller ?? ANONYMOUS;
    if (!this.queues.has(key) && this.heldBy(key) < this.options.perCaller) {
      const slot = this.takeIdle(key) ?? this.create(key);
      if (slot !== undefined) return Promise.resolve(this.hand(slot, key));
    }
    return new Promise<IsolateSlot>((resolve, reject) => {
      const onAbort = (): void => {
        const queue = this.queues.get(key);
        const index = queue?.indexOf(waiter) ?? -1;
        if (queue !== undefined && index >= 0) queue.splice(index, 1);
        if (queue?.length === 0) this.queues.delete(key);
        reject(cancelled());
      };
      const waiter: Waiter = {
        key,
        resolve: (s) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(s);
        },
        reject,
      };
      const queue = this.queues.get(key);
      if (queue === undefined) this.queues.set(key, [waiter]);
      else queue.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  release(slot: IsolateSlot): void {
    const key = slot.owner ?? ANONYMOUS;
    slot.endCall();
    this.busy.delete(slot);
    this.held.set(key, this.heldBy(key) - 1);
    if (this.heldBy(key) <= 0) this.held.delete(key);
    if (this.closed) {
      slot.kill();
      return;
    }
    const next = this.nextKey();
    if (next !== undefined) {
      this.dequeue(next)?.resolve(this.hand(slot, next));
      return;
    }
    this.idle.push(slot);
    this.scheduleTrim();
    // a freed quota may let another caller's queue start on a new isolate
    this.serveWaiters();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.trim);
    for (const queue of this.queues.values()) {
      for (const waiter of queue) waiter.reject(new TroupeError('INTERNAL', 'the sandbox has been disposed'));
    }
    this.queues.clear();
    for (const slot of this.slots) slot.kill();
    this.idle.length = 0;
  }

  private hand(slot: IsolateSlot, key: string): IsolateSlot {
    this.busy.add(slot);
    slot.owner = key;
    this.held.set(key, this.heldBy(key) + 1);
    return slot;
  }

  private heldBy(key: string): number {
    return this.held.get(key) ?? 0;
  }

  /** an idle isolate, one that already holds this caller's realm when there is one */
  private takeIdle(key: string): IsolateSlot | undefined {
    const index = this.idle.findIndex((slot) => slot.hasRealm(key));
    if (index >= 0) return this.idle.splice(index, 1)[0];
    return this.idle.pop();
  }

  /** The waiting caller holding the fewest isolates (under its quota), first come among equals. */
  private nextKey(): string | undefined {
    let best: string | undefined;
    for (const key of this.queues.keys()) {
      const held = this.heldBy(key);
      if (held >= this.options.perCaller) continue;
      if (best === undefined || held < this.heldBy(best)) best = key;
    }
    return best;
  }

  /** the caller's first waiter; the caller goes to the back of the order (Map keys keep insertion order) */
  private dequeue(key: string): Waiter | undefined {
    const queue = this.queues.get(key);
    if (queue === undefined) return undefined;
    const waiter = queue.shift();
    this.queues.delete(key);
    if (queue.length > 0) this.queues.set(key, queue);
    return waiter;
  }

  /**
   * Past `size` an isolate is added only while fewer than `size` calls compute, or, for a caller
   * that holds none, while fewer than `size + 1` do: a workflow whose calls compute on every
   * isolate must not make another wait for one of them to end (up to its time limit).
   */
  private canCreate(key: string): boolean {
    if (this.slots.size >= this.options.maxIsolates) return false;
    if (this.slots.size < this.options.size) return true;
    const computing = this.computing();
    return computing < this.options.size || (this.heldBy(key) === 0 && computing < this.options.size + 1);
  }

  private create(key: string): IsolateSlot | undefined {
    if (!this.canCreate(key)) return undefined;
    const slot = new IsolateSlot(this.memoryMb);
    slot.onSleep = () => this.serveWaiters();
    this.slots.add(slot);
    return slot;
  }

  private computing(): number {
    let n = 0;
    for (const slot of this.busy) if (!slot.asleep) n += 1;
    return n;
  }

  /** A call went to sleep or a quota freed: queued calls may now get an isolate. */
  private serveWaiters(): void {
    while (!this.closed) {
      const key = this.nextKey();
      if (key === undefined) return;
      const slot = this.takeIdle(key) ?? this.create(key);
      if (slot === undefined) return;
      this.dequeue(key)?.resolve(this.hand(slot, key));
    }
  }

  /** Disposes isolates beyond `size` that stayed idle for `idleMs`. */
  private scheduleTrim(): void {
    if (this.trim !== undefined || this.slots.size <= this.options.size) return;
    this.trim = setTimeout(() => {
      this.trim = undefined;
      while (this.slots.size > this.options.size && this.idle.length > 0) {
        const slot = this.idle.shift()!;
        this.slots.delete(slot);
        slot.kill();
      }
      this.scheduleTrim();
    }, this.options.idleMs);
    this.trim.unref();
  }
}

export function cancelled(): TroupeError {
  return new TroupeError('CANCELLED', 'cancelled');
}
