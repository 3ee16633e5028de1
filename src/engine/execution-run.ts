import type { Actor } from 'xstate';
import type { executionMachine, ExecutionSink } from '../../actors/execution.js';
import { redactText } from '../model/redaction.js';
import type { ExecutionContextData } from '../runtime/execution-state.js';
import type { BlockLogEntry, ExecutionEvent, ExecutionResult, StartRequest } from '../runtime/types.js';

/** What a run needs of its engine (the Engine class; kept narrow so the run is not another copy of it). */
export interface RunOwner {
  record(id: string, event: ExecutionEvent, seq: number): void;
  recordLog(id: string, log: BlockLogEntry): void;
  finishRecord(id: string, result: ExecutionResult, data: ExecutionContextData, trigger: StartRequest['trigger'], seq: number): Promise<void>;
  announce(kind: 'waiting' | 'completed' | 'failed' | 'cancelled', payload: Record<string, unknown>): void;
  forgetLog(id: string, log: BlockLogEntry): void;
  ended(id: string): void;
  reportError(err: unknown): void;
}

export interface ExecutionHandle {
  id: string;
  /** resolves once the execution has ended and its record is in the store */
  done: Promise<ExecutionResult>;
  /** resolves once the record (status running) is in the store */
  recorded: Promise<void>;
  cancel(): void;
  subscribe(listener: (event: ExecutionEvent) => void): () => void;
  /** `text` with this run's secret values as `***`, as its record keeps them */
  redactText(text: string): string;
}

/** `seq` numbers the execution's events: the stored ones and the live ones are the same numbers */
export type Listener = (event: ExecutionEvent, seq: number) => void;

/** A record already written (a resumed run's), or none to write. */
export const RECORDED: Promise<void> = Promise.resolve();

/**
 * One running execution as its engine sees it: the handle its starter holds, the sink of its
 * actor's events, and the observer of the actor's end. One object with methods rather than a
 * dozen closures per execution (tsx's keepNames wraps each named closure in a defineProperty
 * call, and each is an allocation on the execute path).
 */
export class ExecutionRun implements ExecutionHandle, ExecutionSink {
  readonly done: Promise<ExecutionResult>;
  private resolveDone!: (result: ExecutionResult) => void;
  private rejectDone!: (err: Error) => void;
  private actor: Actor<typeof executionMachine> | null = null;
  /** most runs have one listener (the service's live feed); more go to the set */
  private readonly first: Listener | undefined;
  private more: Set<Listener> | null = null;
  private final: ExecutionResult | null = null;
  /**
   * The one counter of this execution's event numbers: the store and the live feed both take
   * them from here. A resumed run starts after the last stored one, so its events go on.
   */
  private seq: number;
  /** the number its `done` (or `waiting`) event was stored under */
  private finalSeq = 0;

  constructor(
    private readonly owner: RunOwner,
    readonly id: string,
    private readonly trigger: StartRequest['trigger'],
    private readonly secretValues: string[],
    readonly recorded: Promise<void>,
    listener: Listener | undefined,
    lastSeq = 0,
  ) {
    this.first = listener;
    this.seq = lastSeq;
    this.done = new Promise<ExecutionResult>((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
  }

  /** Observes the actor's end; a record that could not be written stops the run (done then fails with why). */
  attach(actor: Actor<typeof executionMachine>): void {
    this.actor = actor;
    actor.subscribe(this);
    if (this.recorded !== RECORDED) this.recorded.then(undefined, this.cancel.bind(this));
  }

  cancel(): void {
    this.actor?.send({ type: 'CANCEL' });
  }

  subscribe(listener: Listener): () => void {
    const more = (this.more ??= new Set());
    more.add(listener);
    return () => more.delete(listener);
  }

  notify(event: ExecutionEvent): void {
    const seq = ++this.seq;
    this.owner.record(this.id, event, seq);
    this.deliver(event, seq);
  }

  private deliver(event: ExecutionEvent, seq: number): void {
    this.first?.(event, seq);
    if (this.more !== null) for (const l of this.more) l(event, seq);
  }

  logStarted(log: BlockLogEntry): void {
    this.owner.recordLog(this.id, log);
  }

  forgetLogs(logs: readonly BlockLogEntry[]): void {
    for (const log of logs) this.owner.forgetLog(this.id, log);
  }

  /** The actor reached its final state: the end rides the same batch as the creation when that is still pending. */
  complete(): void {
    const { result, data } = this.actor?.getSnapshot().output ?? { result: null, data: null };
    // the actor has stopped: let its graph (machine, block actors, ledger) go while the record
    // commits, or under load it outlives a scavenge and is promoted with every run in flight
    this.actor = null;
    if (result === null || data === null) {
      this.failed(new Error(`execution ${this.id} ended without a result`));
      return;
    }
    this.final = recordedResult(result, this.secretValues);
    this.finalSeq = ++this.seq;
    const written = this.owner.finishRecord(this.id, this.final, data, this.trigger, this.finalSeq);
    // both, one after the other: the creation is written no later than the end (the persister
    // writes in order), so this waits as long as Promise.all did, without its array and resolvers
    const both = this.recorded === RECORDED ? written : written.then(() => this.recorded);
    both.then(this.finished.bind(this), this.failed.bind(this));
  }

  redactText(text: string): string {
    return redactText(text, this.secretValues);
  }

  /** The actor's logic threw: the run has no result to give. */
  error(err: unknown): void {
    this.failed(err);
  }

  private finished(): void {
    const final = this.final as ExecutionResult;
    this.owner.ended(this.id);
    try {
      // a parked execution's run ends with `waiting`: its `done` comes from the run that resumes it
      // stored by finishRecord under the number taken then
      this.deliver(final.status === 'waiting' ? { type: 'waiting', data: final } : { type: 'done', data: final }, this.finalSeq);
    } catch (err) {
      this.owner.reportError(err);
    }
    this.owner.announce(final.status, { executionId: this.id, workflowId: final.workflowId, trigger: this.trigger, status: final.status, durationMs: final.durationMs });
    this.resolveDone(final);
  }

  private failed(err: unknown): void {
    this.owner.ended(this.id);
    this.rejectDone(err instanceof Error ? err : new Error(String(err)));
  }
}

/**
 * The end of a run as it is recorded and answered. Only its error's message is user data left
 * to redact: the output and the response are block outputs, redacted when their blocks settled,
 * and the rest is Troupe's own (status, ids, timestamps), which a stored secret that happens to
 * be an ordinary word ("completed") must not change: clients, the events and the metrics read it.
 */
function recordedResult(result: ExecutionResult, secretValues: readonly string[]): ExecutionResult {
  const error = result.error;
  if (error === null || secretValues.length === 0) return result;
  return { ...result, error: { ...error, message: redactText(error.message, secretValues) } };
}
