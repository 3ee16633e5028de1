import type { BoundaryBatch, ExecutionRecord, ExecutionRepo, LogIdentity, ExecutionEvent as StoredEvent } from '../store/types.js';
import { logKey } from '../model/block-run.js';
import type { Clock } from '../model/clock.js';
import { systemClock } from './clock.js';
import { isoAt } from './iso.js';
import type { BlockLogEntry, IterationRef } from './types.js';

interface Waiter {
  resolve(): void;
  reject(err: Error): void;
}

interface Pending {
  create: ExecutionRecord | undefined;
  patch: Partial<ExecutionRecord> | undefined;
  drops: LogIdentity[];
  logs: Map<string, BlockLogEntry>;
  events: StoredEvent[];
  /** callers of `commit` for this execution, told when this batch is in the store */
  waiters: Waiter[];
  /** a held creation (see `create`): written by HOLD_CREATE_MS at the latest; undefined once it may go */
  heldUntil: number | undefined;
  /** something was recorded for it since the last write was taken: its run is busy in this burst */
  stirred: boolean;
}

/**
 * The longest a busy run's record is held back (see `create`): a run that keeps working turn
 * after turn (a long loop) is then written as running like any other, and shows in the list.
 */
export const HOLD_CREATE_MS = 100;

/**
 * Persists execution progress at block boundaries in batches: everything that happened in one
 * turn of the event loop, for every execution, goes to the store as one saveBoundaries call (one
 * transaction on SQLite), not one write per message or per execution (DESIGN budgets). Creating
 * a record and committing an execution's end ride the same batches, so executions starting or
 * ending in the same turn share one transaction.
 */
export class BoundaryPersister {
  private readonly pending = new Map<string, Pending>();
  private scheduled = false;
  private inflight: Promise<void> = Promise.resolve();

  constructor(
    private readonly repo: ExecutionRepo,
    private readonly onError: (err: unknown) => void,
    /** stamps the events (the engine's clock) */
    private readonly clock: Clock = systemClock,
  ) {}

  /**
   * Writes the record with the next batch; resolves once it is in the store (CONFLICT when the id
   * exists). `hold` (an execution whose starter answers only at its end: nobody is told of it
   * before its record is written): the record and everything after it wait while the run keeps
   * working, so a short run is inserted once, already ended, instead of an insert and then an
   * update in two transactions. The hold ends at the run's end (its `commit`), a waiting block,
   * the first write taken while nothing was recorded for it since the one before (the run waits
   * for something outside this process: an API call, a timer, the sandbox), or HOLD_CREATE_MS.
   * A run that waits is thus on record within two writes of going quiet, later than a record
   * created at once (its first API call may be out before it): never held in a cluster, where
   * another instance resumes what is recorded when this one dies (RuntimeDeps.resumedElsewhere).
   */
  create(record: ExecutionRecord, hold = false): Promise<void> {
    const entry = this.entry(record.id);
    entry.create = record;
    if (hold) entry.heldUntil = this.clock.now() + HOLD_CREATE_MS;
    return this.waitFor(entry);
  }

  log(executionId: string, log: BlockLogEntry): void {
    const key = logKey(log.blockId, log.iteration);
    const entry = this.entry(executionId);
    entry.logs.set(key, log);
    // a waiting block can be decided from outside (an approval), which reads the record
    if (log.status === 'waiting') entry.heldUntil = undefined;
    this.schedule();
  }

  /** Removes a log already written (or about to be): a container's earlier attempt left it. */
  dropLog(executionId: string, log: LogIdentity): void {
    const entry = this.entry(executionId);
    entry.logs.delete(logKey(log.blockId, log.iteration as IterationRef | null));
    entry.drops.push({ blockId: log.blockId, iteration: log.iteration });
    this.schedule();
  }

  /** `seq` is the run's number for the event (ExecutionRun counts them, for the store and the live feed alike). */
  event(executionId: string, seq: number, event: string, data: unknown): void {
    this.entry(executionId).events.push({ executionId, seq, event, data, at: isoAt(this.clock.now()) });
    this.schedule();
  }

  patch(executionId: string, patch: Partial<ExecutionRecord>): void {
    const entry = this.entry(executionId);
    entry.patch = { ...entry.patch, ...patch };
    this.schedule();
  }

  /** Resolves when everything recorded so far for this execution is in the store (a held creation included). */
  commit(executionId: string): Promise<void> {
    const entry = this.entry(executionId);
    entry.heldUntil = undefined;
    return this.waitFor(entry);
  }

  private waitFor(entry: Pending): Promise<void> {
    const done = new Promise<void>((resolve, reject) => entry.waiters.push({ resolve, reject }));
    this.schedule();
    return done;
  }

  /** Writes everything pending now; resolves when it is in the store. */
  async flush(): Promise<void> {
    // what is pending when the previous write ends goes out then, so writes grow with the load
    // instead of queueing up one small transaction per turn
    const write = this.inflight.then(() => this.write(this.take()));
    this.inflight = write.catch(() => undefined);
    await write;
  }

  private take(): [string, Pending][] {
    this.scheduled = false;
    const batches: [string, Pending][] = [];
    let held: [string, Pending][] | undefined;
    let now: number | undefined;
    for (const entry of this.pending) {
      const p = entry[1];
      if (p.heldUntil !== undefined && p.stirred && p.heldUntil > (now ??= this.clock.now())) {
        p.stirred = false;
        (held ??= []).push(entry);
      } else {
        batches.push(entry);
      }
    }
    this.pending.clear();
    if (held !== undefined) {
      for (const [id, p] of held) this.pending.set(id, p);
      // looked at again with the next write: it goes then unless its run did something meanwhile
      this.schedule();
    }
    return batches;
  }

  /**
   * Group commit: every execution's batch of this turn in one store call. Not an async function:
   * while the store commits, only the callers to tell are kept, not the batches (logs, events,
   * records), which an async frame would hold until then.
   */
  private write(batches: [string, Pending][]): Promise<void> {
    if (batches.length === 0) return Promise.resolve();
    const waiters = batches.map(([, p]) => p.waiters);
    const items = batches.map(([id, p]) => ({ id, batch: boundaryBatch(p) }));
    let saved: Promise<(Error | null)[]>;
    try {
      saved = this.repo.saveBoundaries(items);
    } catch (err) {
      saved = Promise.reject(err);
    }
    return saved.then(undefined, (err: unknown) => {
      const error = err instanceof Error ? err : new Error(String(err));
      return waiters.map(() => error);
    }).then((results) => this.settle(waiters, results));
  }

  private settle(waiters: Waiter[][], results: (Error | null)[]): void {
    results.forEach((err, i) => {
      const told = waiters[i] ?? [];
      if (err !== null && told.length === 0) this.onError(err);
      for (const w of told) {
        if (err === null) w.resolve();
        else w.reject(err);
      }
    });
  }

  private entry(executionId: string): Pending {
    let entry = this.pending.get(executionId);
    if (entry === undefined) {
      entry = { create: undefined, patch: undefined, drops: [], logs: new Map(), events: [], waiters: [], heldUntil: undefined, stirred: true };
      this.pending.set(executionId, entry);
    } else {
      entry.stirred = true;
    }
    return entry;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      if (this.scheduled) void this.flush().catch(this.onError);
    });
  }
}

/** A record created and ended in the same batch is written once, already ended (no insert then update). */
function boundaryBatch(p: Pending): BoundaryBatch {
  const logs = [...p.logs.values()];
  const batch: BoundaryBatch = p.create !== undefined
    ? { create: p.patch ? { ...p.create, ...p.patch } : p.create, logs, events: p.events }
    : p.patch ? { patch: p.patch, logs, events: p.events } : { logs, events: p.events };
  if (p.drops.length > 0) batch.dropLogs = p.drops;
  return batch;
}
