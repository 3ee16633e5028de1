import type { ExecutionRecord, ExecutionRepo, ExecutionEvent as StoredEvent } from '../store/types.js';
import type { BlockLogEntry } from './types.js';

interface Pending {
  patch: Partial<ExecutionRecord> | undefined;
  logs: Map<string, BlockLogEntry>;
  events: StoredEvent[];
}

/**
 * Persists execution progress at block boundaries in batches: everything that happened in one
 * turn of the event loop, for every execution, goes to the store as one saveBoundaries call (one
 * transaction on SQLite), not one write per message or per execution (DESIGN budgets).
 */
export class BoundaryPersister {
  private readonly pending = new Map<string, Pending>();
  private readonly seq = new Map<string, number>();
  private scheduled = false;
  private inflight: Promise<void> = Promise.resolve();

  constructor(
    private readonly repo: ExecutionRepo,
    private readonly onError: (err: unknown) => void,
  ) {}

  log(executionId: string, log: BlockLogEntry): void {
    const key = log.iteration === null ? log.blockId : `${log.blockId}@${log.iteration.container}#${log.iteration.index}`;
    this.entry(executionId).logs.set(key, log);
    this.schedule();
  }

  event(executionId: string, event: string, data: unknown): void {
    const seq = (this.seq.get(executionId) ?? 0) + 1;
    this.seq.set(executionId, seq);
    this.entry(executionId).events.push({ executionId, seq, event, data, at: new Date().toISOString() });
    this.schedule();
  }

  patch(executionId: string, patch: Partial<ExecutionRecord>): void {
    const entry = this.entry(executionId);
    entry.patch = { ...entry.patch, ...patch };
    this.schedule();
  }

  /** Writes everything pending; resolves when it is in the store. */
  async flush(): Promise<void> {
    this.scheduled = false;
    const batches = [...this.pending.entries()];
    this.pending.clear();
    const previous = this.inflight;
    const write = previous.then(() => this.write(batches));
    this.inflight = write.catch(() => undefined);
    await write;
  }

  forget(executionId: string): void {
    this.seq.delete(executionId);
  }

  /** Group commit: every execution's batch of this turn in one store call. */
  private async write(batches: [string, Pending][]): Promise<void> {
    if (batches.length === 0) return;
    const items = batches.map(([id, p]) => ({
      id,
      batch: { ...(p.patch ? { patch: p.patch } : {}), logs: [...p.logs.values()], events: p.events },
    }));
    try {
      const results = await this.repo.saveBoundaries(items);
      for (const err of results) if (err !== null) this.onError(err);
    } catch (err) {
      this.onError(err);
    }
  }

  private entry(executionId: string): Pending {
    let entry = this.pending.get(executionId);
    if (entry === undefined) {
      entry = { patch: undefined, logs: new Map(), events: [] };
      this.pending.set(executionId, entry);
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
