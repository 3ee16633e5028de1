/**
 * Starting, reading, following and cancelling executions: what execute, run and the execution
 * routes share (and later webhooks, schedules and chat). Back-pressure lives here: `inflight`
 * counts executions running in the engine plus those still being started.
 */
import type { Logger } from 'pino';
import type { TriggerInfo } from '../blocks/types.js';
import { checkStarterInput } from '../blocks/starter.js';
import { TroupeError, ValidationError } from '../errors.js';
import type { Engine, ExecutionHandle } from '../engine/engine.js';
import type { CompiledWorkflow } from '../model/graph.js';
import type { ExecutionEvent, ExecutionResult, StartRequest } from '../runtime/types.js';
import type { BlockLog, ExecutionListOptions, ExecutionRecord, Page, Store } from '../store/types.js';
import type { LoadedWorkflow } from './compiled-cache.js';
import { LiveExecutions, type SeqEvent } from './live.js';
import { newExecutionId } from '../runtime/ids.js';
import { needsRecord, replayEvents } from '../runtime/stored-events.js';
import { withTimeout } from './background.js';
import { cancelParked } from './parked.js';
import { childNudgeKey } from './child-keys.js';

/** Metrics hooks (the HTTP layer plugs its Prometheus registry in here). */
export interface ExecutionObserver {
  blockSettled(blockType: string, status: string, durationMs: number | null): void;
  executionEnded(status: string, trigger: string): void;
}

export interface ExecutionServiceOptions {
  store: Store;
  engine: Engine;
  logger: Logger;
  maxInflight: number;
  observer?: ExecutionObserver;
  newId?: () => string;
  /** how often a follower polls the store for an execution not running here */
  pollMs?: number;
  /** how long cancel waits for a local execution to end before answering */
  cancelWaitMs?: number;
}

export const TERMINAL_STATUSES: readonly string[] = ['completed', 'failed', 'cancelled'];
const RETRY_AFTER_OVERLOADED_SEC = 1;

export interface StartOptions {
  awaitRecord?: boolean;
  /**
   * Chosen by the caller when starting must happen at most once (a webhook event): with
   * `awaitRecord`, a second start with the same id rejects with CONFLICT and runs nothing.
   */
  executionId?: string;
  /** a chat conversation: the starter's `conversationId` (SPEC §4.4) */
  conversationId?: string;
}

export type ExecutionDetail = ExecutionRecord & { logs: BlockLog[] };

/** Where async executions go in a cluster (src/server/cluster/work-queue.ts): one instance takes each. */
export interface ExecutionQueue {
  /**
   * resolves once the queue holds the execution of this `queued` record; `dedupeKey` (the
   * Nats-Msg-Id, the execution id by default) makes a repeated publish of one piece of work a no-op
   */
  enqueue(executionId: string, dedupeKey?: string): Promise<void>;
}

export class ExecutionService {
  readonly live = new LiveExecutions();
  private starting = 0;
  private queue: ExecutionQueue | undefined;

  constructor(private readonly opts: ExecutionServiceOptions) {}

  /** From now on async executions are queued for whichever instance takes them (a cluster). */
  useQueue(queue: ExecutionQueue | undefined): void {
    this.queue = queue;
  }

  /** Whether async executions are queued rather than started here. */
  get queued(): boolean {
    return this.queue !== undefined;
  }

  /**
   * An async execution in a cluster: its record is written `queued` (the 202 points at it),
   * then the queue gets it; the instance that takes it starts it under this id. Without a
   * queue it starts here, as `start` does. Resolves with the execution id; CONFLICT when a
   * record of `executionId` exists already.
   */
  async enqueue(loaded: LoadedWorkflow, input: unknown, trigger: TriggerInfo, executionId?: string, dedupeKey?: string): Promise<string> {
    const queue = this.queue;
    const id = executionId ?? this.opts.newId?.() ?? newExecutionId();
    if (queue === undefined) return (await this.start(loaded, input, trigger, { awaitRecord: true, executionId: id })).id;
    await this.opts.store.executions.create({
      id, workflowId: loaded.workflowId, version: loaded.version, status: 'queued', trigger, input,
      output: null, error: null, startedAt: null, endedAt: null, durationMs: null,
    });
    try {
      await queue.enqueue(id, dedupeKey);
    } catch (err) {
      // not queued: the record must not wait for a start that will never come
      const error = { code: 'BUS_UNAVAILABLE', message: 'the work queue did not take the execution', blockId: null };
      await this.opts.store.executions.update(id, { status: 'failed', error, endedAt: new Date().toISOString(), durationMs: 0 }).catch(() => undefined);
      throw new TroupeError('BUS_UNAVAILABLE', 'the work queue (NATS JetStream) is not reachable; retry later', { cause: err, retryable: true, details: { retryAfterSec: 1 } });
    }
    return id;
  }

  /**
   * Publishes a `queued` record's execution again (its first publisher may have died between
   * writing the record and publishing): the same `dedupeKey` within JetStream's window is
   * dropped, and the taker starts only a record still `queued`. False when it is not queued.
   */
  async requeue(executionId: string, dedupeKey?: string): Promise<boolean> {
    const rec = await this.opts.store.executions.get(executionId);
    if (this.queue === undefined || rec?.status !== 'queued') return false;
    await this.queue.enqueue(executionId, dedupeKey);
    return true;
  }

  get inflight(): number {
    return this.opts.engine.inflight + this.starting;
  }

  /** Whether this execution is running in this process. */
  runsHere(id: string): boolean {
    return this.opts.engine.local(id) !== undefined;
  }

  /** Whether another execution may start now (background starters wait rather than fail). */
  hasCapacity(): boolean {
    return this.inflight < this.opts.maxInflight;
  }

  /** 503 OVERLOADED (details.retryAfterSec) when no more executions may start. */
  ensureCapacity(): void {
    if (!this.hasCapacity()) {
      throw new TroupeError('OVERLOADED', 'too many executions in flight; retry later', {
        details: { retryAfterSec: RETRY_AFTER_OVERLOADED_SEC },
        retryable: true,
      });
    }
  }

  /** 422 INVALID_INPUT when the input does not match the starter's inputFormat. */
  validateInput(loaded: LoadedWorkflow, input: unknown): void {
    const { issues } = checkStarterInput(loaded.starterConfig, input);
    if (issues.length > 0) {
      throw new ValidationError('INVALID_INPUT', "the input does not match the starter's inputFormat", issues);
    }
  }

  /**
   * Resolves once the record exists (status running), or at once with `awaitRecord: false` (see
   * StartRequest); `done` resolves when it has ended and its record is written.
   */
  start(loaded: LoadedWorkflow, input: unknown, trigger: TriggerInfo, opts: StartOptions = {}): Promise<ExecutionHandle> {
    // one literal of a fixed shape, optional fields set after: no spread of temporaries per execute
    const req: StartRequest & { executionId: string } = {
      workflowId: loaded.workflowId, version: loaded.version, input, trigger, executionId: opts.executionId ?? this.opts.newId?.() ?? newExecutionId(),
    };
    if (opts.awaitRecord !== undefined) req.awaitRecord = opts.awaitRecord;
    if (opts.conversationId !== undefined) req.conversationId = opts.conversationId;
    return this.launch(loaded.compiled, req);
  }

  /**
   * Starts an execution from a whole request, with the bookkeeping of `start` (live events,
   * cancel, metrics, capacity): restart recovery resumes and re-runs recorded executions here.
   */
  async launch(compiled: CompiledWorkflow, req: StartRequest & { executionId: string }): Promise<ExecutionHandle> {
    const id = req.executionId;
    const trigger = req.trigger;
    if (this.live.has(id)) throw new TroupeError('CONFLICT', `execution ${id} is already running here`, { details: { executionId: id } });
    const listener = this.live.open(id, this.observeBlock, req.resume?.lastSeq ?? 0);
    this.starting += 1;
    let handle: ExecutionHandle;
    try {
      handle = await this.opts.engine.start(compiled, req, listener);
    } catch (err) {
      this.live.close(id);
      throw err;
    } finally {
      this.starting -= 1;
    }
    handle.done.then(
      (result) => {
        this.opts.observer?.executionEnded(result.status, trigger.type);
        if (trigger.type === 'workflow' && result.status !== 'waiting') this.nudgeParent(id, trigger);
      },
      (err: unknown) => {
        this.live.close(id);
        this.opts.logger.error({ err, executionId: id }, 'execution ended abnormally');
      },
    );
    return handle;
  }

  /**
   * A workflow block's child has ended: its parent is woken through the waits index if it parked
   * (one kept in memory finds the end itself). Not awaited: the child is recorded either way.
   */
  private nudgeParent(id: string, trigger: TriggerInfo): void {
    const parent = trigger['parentExecutionId'];
    if (typeof parent !== 'string') return;
    const at = new Date().toISOString();
    this.opts.store.waits.begin({ executionId: parent, key: childNudgeKey(id), workflowId: '', since: at, dueAt: at })
      .catch((err: unknown) => this.opts.logger.error({ err, executionId: id }, 'the parent of a child execution could not be nudged'));
  }

  async get(id: string): Promise<ExecutionDetail> {
    const rec = await this.opts.store.executions.get(id);
    if (rec === null) throw new TroupeError('NOT_FOUND', `execution ${id} not found`, { details: { executionId: id } });
    return rec;
  }

  async list(workflowId: string, opts: ExecutionListOptions): Promise<Page<ExecutionRecord>> {
    return this.opts.store.executions.list(workflowId, opts);
  }

  /**
   * Cancels a running execution. Here: waits (briefly) for it to end and returns its final
   * status. Elsewhere: asks its process over the bus and returns null (not known yet).
   * CONFLICT when it has already ended.
   */
  async cancel(rec: ExecutionRecord): Promise<ExecutionResult['status'] | null> {
    if (TERMINAL_STATUSES.includes(rec.status)) {
      throw new TroupeError('CONFLICT', `execution ${rec.id} has already ended (${rec.status})`, { details: { status: rec.status } });
    }
    const handle = this.opts.engine.local(rec.id);
    // parked: it runs nowhere, its record is ended here (unless a wake-up claimed it just now)
    if (rec.status === 'waiting' && handle === undefined && 'logs' in rec) {
      if (await cancelParked(this.opts.store, this.opts.engine, rec as ExecutionDetail)) {
        await this.cancelChildren(rec);
        return 'cancelled';
      }
    }
    this.opts.engine.cancel(rec.id);
    if (handle === undefined) return null;
    const result = await withTimeout(handle.done, this.opts.cancelWaitMs ?? 10_000).catch(() => null);
    return result?.status ?? null;
  }

  /** A parked parent's children (its workflow blocks' waiting entries) are cancelled with it. */
  private async cancelChildren(rec: ExecutionRecord): Promise<void> {
    const waiting = ((rec.context as { waiting?: { childExecutionId?: unknown }[] } | null | undefined)?.waiting ?? []);
    for (const w of waiting) {
      if (typeof w.childExecutionId !== 'string') continue;
      const child = await this.opts.store.executions.get(w.childExecutionId);
      if (child !== null && !TERMINAL_STATUSES.includes(child.status)) await this.cancel(child).catch(() => undefined);
    }
  }

  /**
   * Delivers the execution's events in order, replayed then live, until `done` or abort:
   * from this process's live feed when it runs here, else from the store (polled).
   */
  async follow(id: string, onEvent: (e: SeqEvent) => void, signal: AbortSignal): Promise<void> {
    // each number once, in order, wherever it comes from (the store, then the live feed, or back)
    let through = 0;
    const deliver = (e: SeqEvent): void => {
      if (e.seq <= through) return;
      through = e.seq;
      onEvent(e);
    };
    // a resumed run's live feed starts after the events its earlier runs stored
    const before = this.live.before(id) ?? 0;
    if (before > 0) await this.replayStored(id, before, deliver);
    if (await this.followLive(id, deliver, signal)) return;
    await this.pollStore(id, deliver, signal, through);
  }

  /** The stored events numbered up to `until`, as a replay gives them. */
  private async replayStored(id: string, until: number, deliver: (e: SeqEvent) => void): Promise<void> {
    const repo = this.opts.store.executions;
    const stored = (await repo.listEvents(id)).filter((e) => e.seq <= until);
    const events = needsRecord(stored) ? replayEvents(stored, await repo.get(id)) : stored;
    for (const e of events) deliver({ seq: e.seq, event: e.event, data: e.data });
  }

  private followLive(id: string, onEvent: (e: SeqEvent) => void, signal: AbortSignal): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      let unsubscribe: (() => void) | null = null;
      const finish = (): void => {
        unsubscribe?.();
        signal.removeEventListener('abort', finish);
        resolve(true);
      };
      unsubscribe = this.live.follow(id, (e) => {
        onEvent(e);
        if (e.event === 'done' || e.event === 'waiting') finish();
      });
      if (unsubscribe === null) resolve(false);
      else if (signal.aborted) finish();
      else signal.addEventListener('abort', finish, { once: true });
    });
  }

  private async pollStore(id: string, onEvent: (e: SeqEvent) => void, signal: AbortSignal, from = 0): Promise<void> {
    const repo = this.opts.store.executions;
    let after = from;
    let last = '';
    const drain = async (): Promise<boolean> => {
      // a stored event may name the log or record its data is in (lean records): read them after the events
      const stored = await repo.listEvents(id, after);
      const events = needsRecord(stored) ? replayEvents(stored, await repo.get(id)) : stored;
      for (const e of events) {
        after = e.seq;
        last = e.event;
        onEvent({ seq: e.seq, event: e.event, data: e.data });
        if (e.event === 'done') return true;
      }
      return false;
    };
    while (!signal.aborted) {
      if (await drain()) return;
      const rec = await repo.get(id);
      // parked (SPEC §2.1): the stream ends with its `waiting` event, as a live one does
      if (rec?.status === 'waiting' && last === 'waiting') return;
      // the end is written with its `done` event in one transaction: read once more, then stop
      if (rec === null || TERMINAL_STATUSES.includes(rec.status)) {
        await drain();
        return;
      }
      await sleep(this.opts.pollMs ?? 250, signal);
    }
  }

  /** one function for every execution's feed, not a closure per execution */
  private readonly observeBlock = (e: ExecutionEvent): void => {
    const o = this.opts.observer;
    if (o === undefined) return;
    if (e.type === 'block.completed' || e.type === 'block.failed' || e.type === 'block.skipped') {
      o.blockSettled(e.data.blockType, e.data.status, e.data.durationMs);
    }
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
