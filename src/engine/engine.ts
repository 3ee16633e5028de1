import { createActor } from 'xstate';
import { executionMachine, type ExecutionActorInput, type ExecutionSink } from '../../actors/execution.js';
import { ExecutionRun, RECORDED, type ExecutionHandle, type Listener, type RunOwner } from './execution-run.js';
import { executionControl, executionEvents, type ExecutionEventKind } from '../bus/subjects.js';
import type { CompiledWorkflow } from '../model/graph.js';
import { DEFAULT_LIMITS } from '../model/limits.js';
import { redactInput } from '../model/redaction.js';
import type { ExecutionContextData } from '../runtime/execution-state.js';
import { BoundaryPersister } from '../runtime/persister.js';
import { storedEventData } from '../runtime/stored-events.js';
import { redactionValues, withSentCredentials } from '../model/secret-forms.js';
import type { ExecutionRecord } from '../store/types.js';
import type { BlockLogEntry, ExecutionEvent, ExecutionResult, RuntimeDeps, StartRequest } from '../runtime/types.js';
import { newExecutionId } from '../runtime/ids.js';
import { unavailableError } from '../bus/checks.js';
import { EventOutbox } from '../runtime/event-outbox.js';
import { isoAt } from '../runtime/iso.js';
import { NO_SECRET_VALUES, runSecrets, secretNamesOf, unnamedSecrets } from '../runtime/secrets.js';

export type { ExecutionHandle, Listener as RunListener } from './execution-run.js';

/** Starts executions: resolves secrets, records, spawns the execution actor, reports the end. */
export class Engine implements RunOwner {
  /** the executions running in this process: the one registry of them (the services ask it) */
  private readonly running = new Map<string, ExecutionRun>();
  private readonly persister: BoundaryPersister | undefined;
  /** lifecycle events the bus refused while reconnecting, published once it is back */
  private readonly outbox: EventOutbox;
  /** the run secrets shared by workflows that name none, for one snapshot of the stored values */
  private processSecrets: { stored: ReadonlyMap<string, string>; map: Map<string, string> } | undefined;

  constructor(private readonly deps: RuntimeDeps, private readonly onError: (err: unknown) => void = () => undefined) {
    this.persister = deps.executions ? new BoundaryPersister(deps.executions, onError, deps.services.clock) : undefined;
    this.outbox = new EventOutbox(deps.bus, onError, { clock: deps.services.clock });
  }

  get inflight(): number {
    return this.running.size;
  }

  /** `listener` is attached before the first event, so it sees every one of them. */
  async start(workflow: CompiledWorkflow, req: StartRequest, listener?: Listener): Promise<ExecutionHandle> {
    // its blocks talk over the bus: started while NATS is away, the run would hang until its time
    // limit; refused (retryable), a stored trigger (webhook event, schedule fire) starts it later
    if (!this.deps.bus.connected) throw unavailableError('executions cannot start while the bus is reconnecting to its server; retry later');
    const id = req.executionId ?? this.deps.newId?.() ?? newExecutionId(this.deps.services.clock.now());
    const found = this.loadSecrets(workflow);
    const secrets = withSentCredentials(workflow, found instanceof Map ? found : await found);
    const secretValues = redactionValues(secrets);
    // one start time for the record and the run, so the record's durationMs spans its own startedAt
    const startedAt = this.deps.services.clock.now();
    // a starter that answers only at the end lets the record wait while the run works
    // (BoundaryPersister.create), unless another instance may have to resume it (RuntimeDeps)
    const hold = req.awaitRecord === false && this.deps.resumedElsewhere !== true;
    const recorded = req.resume !== undefined ? RECORDED : this.createRecord(runningRecord(id, req, secretValues, startedAt), hold);
    if (req.awaitRecord !== false) await recorded;
    // a resumed run's record exists already; its events go on after the stored ones
    const run = new ExecutionRun(this, id, req.trigger, secretValues, recorded, listener, req.resume?.lastSeq);
    const actor = createActor(executionMachine, { input: this.machineInput(id, workflow, req, secrets, run, startedAt) });
    run.attach(actor);
    this.running.set(id, run);
    this.announce('started', { executionId: id, workflowId: req.workflowId, trigger: req.trigger, status: 'running', durationMs: 0 });
    actor.start();
    return run;
  }

  private machineInput(
    id: string,
    workflow: CompiledWorkflow,
    req: StartRequest,
    secrets: ReadonlyMap<string, string>,
    sink: ExecutionSink,
    startedAt: number,
  ): ExecutionActorInput {
    const input: ExecutionActorInput = {
      executionId: id,
      workflowId: req.workflowId,
      version: req.version,
      workflow,
      bus: this.deps.bus,
      prefix: this.deps.busPrefix,
      timeoutMs: req.timeoutMs ?? this.deps.executionTimeoutMs,
      blockRun: {
        executionId: id,
        workflowId: req.workflowId,
        secrets,
        input: req.input,
        trigger: req.trigger,
        services: this.deps.services,
      },
      blockTypes: this.deps.blockTypes,
      sink,
      startedAt,
      limits: this.deps.limits ?? DEFAULT_LIMITS,
    };
    if (this.deps.parkAfterMs !== undefined) input.parkAfterMs = this.deps.parkAfterMs;
    if (req.conversationId !== undefined) input.blockRun.conversationId = req.conversationId;
    if (req.resume !== undefined) {
      input.resume = req.resume.plan;
      input.startedAt = req.resume.startedAt;
      input.limitMs = req.resume.limitMs;
    }
    return input;
  }

  /** The handle of an execution running in this process; undefined when it runs elsewhere or has ended. */
  local(executionId: string): ExecutionHandle | undefined {
    return this.running.get(executionId);
  }

  /** ids of the executions running in this process */
  get localIds(): string[] {
    return [...this.running.keys()];
  }

  /** the handles of the executions running in this process */
  protected localHandles(): ExecutionHandle[] {
    return [...this.running.values()];
  }

  /** Cancels an execution wherever it runs: the control subject reaches its actor on any process. */
  cancel(executionId: string): void {
    const local = this.running.get(executionId);
    if (local) local.cancel();
    else this.deps.bus.publish(executionControl(this.deps.busPrefix, executionId), { cancel: true });
  }

  /** @internal the run's end: its record, written with the `done` event */
  async finishRecord(id: string, result: ExecutionResult, data: ExecutionContextData, trigger: StartRequest['trigger'], seq: number): Promise<void> {
    const p = this.persister;
    if (p === undefined) return;
    if (result.status === 'waiting') return this.parkRecord(p, id, result, data, trigger, seq);
    for (const log of data.logs) if (log.status === 'cancelled') p.log(id, log);
    p.patch(id, {
      status: result.status,
      output: result.output,
      error: result.error,
      endedAt: result.endedAt,
      durationMs: result.durationMs,
      // SPEC §2 lists the trigger data in the context; it is the record's `trigger`, as recorded
      context: { states: data.states, outputs: data.outputs, activeConnections: data.activeConnections, decisions: data.decisions, iterations: data.iterations, trigger },
    });
    p.event(id, seq, 'done', storedEventData('done', result));
    await p.commit(id);
  }

  /**
   * A parked execution's record (docs/waiting.md): status `waiting`, not ended; its context lists
   * what it waits for and how much of its time limit it has used, which the wake-up reads.
   */
  private async parkRecord(p: BoundaryPersister, id: string, result: ExecutionResult, data: ExecutionContextData, trigger: StartRequest['trigger'], seq: number): Promise<void> {
    p.patch(id, {
      status: 'waiting',
      context: {
        states: data.states, outputs: data.outputs, activeConnections: data.activeConnections, decisions: data.decisions, iterations: data.iterations, trigger,
        waiting: result.waiting ?? [], parked: { activeMs: result.activeMs ?? 0, at: result.endedAt },
      },
    });
    p.event(id, seq, 'waiting', { executionId: id, status: 'waiting', waiting: result.waiting ?? [] });
    await p.commit(id);
  }

  /**
   * SPEC §5's lifecycle events. The execution is decided and recorded whatever becomes of them:
   * one the bus refuses while it reconnects is held and published once it is back, in order
   * (EventOutbox); a bus that refuses for good (closed) is reported, not thrown. The run
   * announces its own end through it (RunOwner), and so does restart recovery.
   */
  announce(kind: ExecutionEventKind, payload: Record<string, unknown>): void {
    try {
      this.outbox.publish(executionEvents(this.deps.busPrefix, kind), payload);
    } catch (err) {
      this.onError(err);
    }
  }

  /** Through the group commit when there is a persister: concurrent starts share a transaction. */
  private createRecord(record: ExecutionRecord, hold: boolean): Promise<void> {
    if (this.persister !== undefined) return this.persister.create(record, hold);
    return this.deps.executions === undefined ? RECORDED : this.deps.executions.create(record).then(nothing);
  }

  /** @internal an event of a run, for the record */
  record(id: string, event: ExecutionEvent, seq: number): void {
    const p = this.persister;
    if (p === undefined || event.type === 'done' || event.type === 'waiting') return;
    if (event.type !== 'block.started' && event.type !== 'chunk') p.log(id, event.data);
    p.event(id, seq, event.type, storedEventData(event.type, event.data));
  }

  /**
   * @internal a block's log as it starts: a record read while it runs shows it `running`. Its
   * settle replaces it, usually in the same batch, so a short run writes each log once.
   */
  recordLog(id: string, log: BlockLogEntry): void {
    this.persister?.log(id, log);
  }

  /**
   * The run's secrets: those its workflow names (read from the store, then the environment), the
   * values of every stored secret (to redact, SPEC §3: every occurrence of a secret's value), and
   * the process's own model keys. A workflow that names none shares one map per snapshot of the
   * stored values and, when that snapshot is at hand, waits for nothing.
   */
  loadSecrets(workflow: CompiledWorkflow): Map<string, string> | Promise<Map<string, string>> {
    const names = secretNamesOf(workflow);
    const stored = this.deps.secrets.values?.() ?? NO_SECRET_VALUES;
    if (names.length === 0 && !(stored instanceof Promise)) return this.sharedSecrets(stored);
    return runSecrets(names, this.deps.secrets, this.deps.redact, stored);
  }

  private sharedSecrets(stored: ReadonlyMap<string, string>): Map<string, string> {
    if (this.processSecrets?.stored !== stored) this.processSecrets = { stored, map: unnamedSecrets(this.deps.redact, stored) };
    return this.processSecrets.map;
  }

  /** @internal a run has ended (or failed to): it no longer counts */
  ended(id: string): void {
    this.running.delete(id);
  }

  /** @internal */
  forgetLog(id: string, log: BlockLogEntry): void {
    this.persister?.dropLog(id, log);
  }

  /** @internal */
  reportError(err: unknown): void {
    this.onError(err);
  }
}

/**
 * The record of an execution that has just started, its input's secrets redacted. The trigger
 * is Troupe's (its type and ids): kept as it is, since a resumed run and the metrics read it back.
 */
function runningRecord(id: string, req: StartRequest, secretValues: string[], startedAt: number): ExecutionRecord {
  return {
    id,
    workflowId: req.workflowId,
    version: req.version,
    status: 'running',
    trigger: req.trigger,
    input: redactInput(req.input, secretValues, req.trigger.type),
    output: null,
    error: null,
    startedAt: isoAt(startedAt),
    endedAt: null,
    durationMs: null,
  };
}

function nothing(): void {
  // the stored record is not needed: only that it was written
}
