/**
 * Where execution writes run. A file database gets a writer thread with its own connection:
 * the transaction, its commit and the WAL checkpoints then cost the service's event loop only
 * a message, and the second core does the SQLite work (they were about a third of the execute
 * endpoint's time). An in-memory database cannot be shared between connections, so its writes
 * run inline on the caller's connection. Both run the same write-ops.cjs, in submission order.
 */
import { Worker } from 'node:worker_threads';
import { TroupeError } from '../../errors.js';
import { connectionPragmas, type Db } from './db.js';
import { runItems } from './write-ops.cjs';
import type { ItemResult, StatementCache, WriteOp } from './write-ops.cjs';

export type { ItemResult, WriteOp };

export interface Writer {
  /** One transaction for the batch, a failing item leaving the others written; resolves once committed. */
  run(items: readonly (readonly WriteOp[])[]): Promise<ItemResult[]>;
  /** Waits for submitted batches, then releases the connection. */
  stop(): Promise<void>;
}

export function inlineWriter(db: Db): Writer {
  const cache: StatementCache = new Map();
  return {
    run: async (items) => runItems(db, cache, items),
    stop: async () => undefined,
  };
}

export interface ThreadWriterOptions {
  synchronous: 'NORMAL' | 'FULL';
  /**
   * How often the thread checkpoints the WAL (ms, default 500). A checkpoint copies each page the
   * WAL holds once, however often it was written since, and syncs both files: under S1 the same
   * few pages at the right edge of each B-tree are rewritten by every commit, and checkpointing
   * every 100 ms cost ~10 % more of the writer's CPU per execution than every 500 ms
   * (bench/peers/record-probe.ts, CHECKPOINT_EVERY 20 against 100 commits).
   */
  checkpointMs?: number;
  /** a WAL longer than this (pages) after a checkpoint gets a RESTART checkpoint */
  restartPages?: number;
  onWarning?: (message: string) => void;
}

interface Waiting {
  resolve(results: ItemResult[]): void;
  reject(err: Error): void;
}

type FromThread = { id: number; results: ItemResult[] } | { id: number; error: string } | { warning: string };

/** The writer thread, started on the first write; it holds the process open only while writes are pending. */
export class ThreadWriter implements Writer {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly waiting = new Map<number, Waiting>();
  private drained: (() => void) | null = null;
  private stopped = false;
  /** statements the current thread knows by number */
  private sqlIds = new Map<string, number>();
  private nextSqlId = 0;

  constructor(private readonly path: string, private readonly opts: ThreadWriterOptions) {}

  run(items: readonly (readonly WriteOp[])[]): Promise<ItemResult[]> {
    if (this.stopped) return Promise.reject(new TroupeError('STORE_ERROR', 'the SQLite store is closed', { retryable: false }));
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    return new Promise<ItemResult[]>((resolve, reject) => {
      try {
        const sqls: [number, string][] = [];
        const flat = this.flat(items, sqls);
        try {
          worker.postMessage({ id, flat, sqls });
        } catch (err) {
          // not sent: the thread did not learn these numbers
          for (const [, sql] of sqls) this.sqlIds.delete(sql);
          throw err;
        }
      } catch (err) {
        // a value the structured clone refuses: nothing was sent, nothing waits
        reject(new TroupeError('STORE_ERROR', `cannot send the write to the SQLite writer: ${(err as Error).message}`));
        return;
      }
      this.waiting.set(id, { resolve, reject });
      if (this.waiting.size === 1) worker.ref();
    });
  }

  /**
   * The items as the thread receives them (write-ops.cjs `unflatten`): one flat array, per item
   * its op count, per op its statement's number (the text is sent once per thread: it was about
   * a third of a boundary batch's bytes), a kind (0; 1 followed by expect, code and message; 2
   * the same and exec), the parameter count and the parameters. The structured clone pays for
   * every object and array on both threads: an object per op cost it its property names, and
   * an array per op and per op's parameters still ~1.5 µs per S1 execution to send and as much
   * to receive.
   */
  flat(items: readonly (readonly WriteOp[])[], sqls: [number, string][]): unknown[] {
    const flat: unknown[] = [items.length];
    for (const ops of items) {
      flat.push(ops.length);
      for (const op of ops) {
        flat.push(this.sqlNumber(op.sql, sqls));
        if (op.exec === true) flat.push(2, op.expect, op.code, op.message);
        else if (op.expect !== undefined) flat.push(1, op.expect, op.code, op.message);
        else flat.push(0);
        flat.push(op.params.length);
        for (const p of op.params) flat.push(p);
      }
    }
    return flat;
  }

  /** The statement's number, learned by the thread with this message when it is new. */
  private sqlNumber(sql: string, sqls: [number, string][]): number {
    let n = this.sqlIds.get(sql);
    if (n === undefined) {
      n = this.nextSqlId++;
      this.sqlIds.set(sql, n);
      sqls.push([n, sql]);
    }
    return n;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.waiting.size > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    const worker = this.worker;
    if (worker === null) return;
    this.worker = null;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    // held until it has closed its connection: an unref'd worker would let the process end first
    worker.ref();
    worker.postMessage({ stop: true });
    await exited;
  }

  private start(): Worker {
    const worker = new Worker(new URL('./writer-thread.cjs', import.meta.url), {
      workerData: {
        path: this.path,
        pragmas: connectionPragmas(this.opts.synchronous),
        checkpointMs: this.opts.checkpointMs ?? 500,
        restartPages: this.opts.restartPages ?? 16_384,
      },
    });
    worker.on('message', (m: FromThread) => this.received(m));
    worker.on('error', (err) => this.lost(worker, err));
    worker.on('exit', (code) => this.lost(worker, new Error(`exit code ${code}`)));
    // after the listeners: adding one refs the worker again
    worker.unref();
    this.worker = worker;
    this.sqlIds = new Map();
    return worker;
  }

  private received(m: FromThread): void {
    if ('warning' in m) {
      this.opts.onWarning?.(m.warning);
      return;
    }
    const waiting = this.waiting.get(m.id);
    if (waiting === undefined) return;
    this.waiting.delete(m.id);
    if ('error' in m) waiting.reject(new TroupeError('STORE_ERROR', `SQLite write failed: ${m.error}`, { retryable: true }));
    else waiting.resolve(m.results);
    if (this.waiting.size === 0) this.idle();
  }

  /** The thread died: its pending batches are reported failed (not known written); the next write starts a new one. */
  private lost(worker: Worker, err: Error): void {
    if (this.worker !== worker) return;
    this.worker = null;
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of waiting) w.reject(new TroupeError('STORE_ERROR', `SQLite writer thread stopped: ${err.message}`, { retryable: true }));
    this.idle();
  }

  private idle(): void {
    this.worker?.unref();
    this.drained?.();
    this.drained = null;
  }
}
