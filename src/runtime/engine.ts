import { createActor, type ActorRefFrom } from 'xstate';
import { executionMachine, type ExecutionActorInput } from '../../actors/execution.js';
import { executionControl, executionEvents, type ExecutionEventKind } from '../bus/subjects.js';
import type { CompiledWorkflow } from '../model/graph.js';
import { findSecretNames, redactSecrets } from '../model/references.js';
import type { ExecutionContextData } from './execution-state.js';
import { BoundaryPersister } from './persister.js';
import { redactionValues } from './run-block.js';
import type { ExecutionRecord } from '../store/types.js';
import type { ExecutionEvent, ExecutionResult, RuntimeDeps, StartRequest } from './types.js';
import { newExecutionId } from './ids.js';

export interface ExecutionHandle {
  id: string;
  /** resolves once the execution has ended and its record is in the store */
  done: Promise<ExecutionResult>;
  /** resolves once the record (status running) is in the store */
  recorded: Promise<void>;
  cancel(): void;
  subscribe(listener: (event: ExecutionEvent) => void): () => void;
}

/** Starts executions: resolves secrets, records, spawns the execution actor, reports the end. */
export class Engine {
  private readonly running = new Map<string, ActorRefFrom<typeof executionMachine>>();
  private readonly persister: BoundaryPersister | undefined;

  constructor(private readonly deps: RuntimeDeps, private readonly onError: (err: unknown) => void = () => undefined) {
    this.persister = deps.executions ? new BoundaryPersister(deps.executions, onError) : undefined;
  }

  get inflight(): number {
    return this.running.size;
  }

  /** `listener` is attached before the first event, so it sees every one of them. */
  async start(workflow: CompiledWorkflow, req: StartRequest, listener?: (event: ExecutionEvent) => void): Promise<ExecutionHandle> {
    const id = req.executionId ?? this.deps.newId?.() ?? newExecutionId();
    const secrets = await this.loadSecrets(workflow);
    const secretValues = redactionValues(secrets);
    const listeners = new Set<(event: ExecutionEvent) => void>(listener ? [listener] : []);
    // a resumed run's record exists already; its events go on after the stored ones
    if (req.resume !== undefined) this.persister?.continueFrom(id, req.resume.lastSeq);
    const recorded = req.resume !== undefined ? Promise.resolve() : this.createRecord(runningRecord(id, req, secretValues));
    if (req.awaitRecord !== false) await recorded;
    const notify = (event: ExecutionEvent): void => {
      this.record(id, event);
      for (const l of listeners) l(event);
    };
    const actor = createActor(executionMachine, { input: this.machineInput(id, workflow, req, secrets, notify) });
    const done = this.whenDone(id, actor, notify, secretValues, req.trigger, recorded);
    this.running.set(id, actor);
    this.announce('started', { executionId: id, workflowId: req.workflowId, trigger: req.trigger, status: 'running', durationMs: 0 });
    actor.start();
    // nothing runs on unrecorded: a record that could not be written stops the run (done then fails with why)
    recorded.catch(() => actor.send({ type: 'CANCEL' }));
    return {
      id,
      done,
      recorded,
      cancel: () => actor.send({ type: 'CANCEL' }),
      subscribe: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
  }

  private machineInput(
    id: string,
    workflow: CompiledWorkflow,
    req: StartRequest,
    secrets: Map<string, string>,
    notify: (event: ExecutionEvent) => void,
  ): ExecutionActorInput {
    return {
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
        ...(req.conversationId === undefined ? {} : { conversationId: req.conversationId }),
        services: this.deps.services,
      },
      blockTypes: this.deps.blockTypes,
      notify,
      forgetLogs: (logs) => {
        for (const log of logs) this.persister?.dropLog(id, log);
      },
      ...(req.resume === undefined
        ? {}
        : { resume: req.resume.plan, startedAt: req.resume.startedAt, limitMs: req.resume.limitMs }),
    };
  }

  /** Cancels an execution wherever it runs: the control subject reaches its actor on any process. */
  cancel(executionId: string): void {
    const local = this.running.get(executionId);
    if (local) local.send({ type: 'CANCEL' });
    else this.deps.bus.publish(executionControl(this.deps.busPrefix, executionId), { cancel: true });
  }

  private whenDone(
    id: string,
    actor: ActorRefFrom<typeof executionMachine>,
    notify: (event: ExecutionEvent) => void,
    secretValues: string[],
    trigger: StartRequest['trigger'],
    recorded: Promise<void>,
  ): Promise<ExecutionResult> {
    return new Promise<ExecutionResult>((resolve, reject) => {
      actor.subscribe({
        complete: () => {
          const { result, data } = actor.getSnapshot().output ?? { result: null, data: null };
          if (result === null || data === null) {
            reject(new Error(`execution ${id} ended without a result`));
            return;
          }
          const final = redactSecrets(result, secretValues) as ExecutionResult;
          // the end rides the same batch as the creation when that is still pending
          Promise.all([recorded, this.finishRecord(id, final, data)]).then(
            () => {
              this.running.delete(id);
              this.persister?.forget(id);
              try {
                notify({ type: 'done', data: final });
              } catch (err) {
                this.onError(err);
              }
              this.announce(final.status, { executionId: id, workflowId: final.workflowId, trigger, status: final.status, durationMs: final.durationMs });
              resolve(final);
            },
            (err: unknown) => {
              this.running.delete(id);
              reject(err instanceof Error ? err : new Error(String(err)));
            },
          );
        },
        error: (err) => {
          this.running.delete(id);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      });
    });
  }

  private async finishRecord(id: string, result: ExecutionResult, data: ExecutionContextData): Promise<void> {
    const p = this.persister;
    if (p === undefined) return;
    for (const log of data.logs) if (log.status === 'cancelled') p.log(id, log);
    p.patch(id, {
      status: result.status,
      output: result.output,
      error: result.error,
      endedAt: result.endedAt,
      durationMs: result.durationMs,
      context: { states: data.states, outputs: data.outputs, activeConnections: data.activeConnections, decisions: data.decisions, iterations: data.iterations },
    });
    p.event(id, 'done', result);
    await p.commit(id);
  }

  /**
   * SPEC §5's lifecycle events. The execution is decided and recorded whatever becomes of them:
   * a bus that refuses one (closed, or NATS gone for good) is reported, not thrown.
   */
  private announce(kind: ExecutionEventKind, payload: Record<string, unknown>): void {
    try {
      this.deps.bus.publish(executionEvents(this.deps.busPrefix, kind), payload);
    } catch (err) {
      this.onError(err);
    }
  }

  /** Through the group commit when there is a persister: concurrent starts share a transaction. */
  private async createRecord(record: ExecutionRecord): Promise<void> {
    if (this.persister !== undefined) await this.persister.create(record);
    else await this.deps.executions?.create(record);
  }

  private record(id: string, event: ExecutionEvent): void {
    const p = this.persister;
    if (p === undefined || event.type === 'done') return;
    if (event.type !== 'block.started' && event.type !== 'chunk') p.log(id, event.data);
    p.event(id, event.type, event.data);
  }

  private async loadSecrets(workflow: CompiledWorkflow): Promise<Map<string, string>> {
    const names = secretNamesOf(workflow);
    const found = new Map<string, string>();
    // under names no `{{NAME}}` can spell (a ':'), so they are redacted and never readable
    this.deps.redact?.forEach((value, i) => found.set(`process:${i}`, value));
    if (names.length === 0) return found;
    await Promise.all(
      names.map(async (name) => {
        const value = await this.deps.secrets.get(name);
        if (value !== undefined) found.set(name, value);
      }),
    );
    return found;
  }
}

const secretNames = new WeakMap<CompiledWorkflow, string[]>();

/** The `{{NAME}}`s a compiled workflow uses, found once per compiled workflow, not per execution. */
function secretNamesOf(workflow: CompiledWorkflow): string[] {
  let names = secretNames.get(workflow);
  if (names === undefined) {
    const found = new Set<string>(workflow.triggerSecretNames ?? []);
    for (const block of workflow.blocks.values()) for (const n of findSecretNames(block.config)) found.add(n);
    names = [...found];
    secretNames.set(workflow, names);
  }
  return names;
}

/** The record of an execution that has just started, with its secrets redacted. */
function runningRecord(id: string, req: StartRequest, secretValues: string[]): ExecutionRecord {
  return {
    id,
    workflowId: req.workflowId,
    version: req.version,
    status: 'running',
    trigger: redactSecrets(req.trigger, secretValues),
    input: redactSecrets(req.input, secretValues),
    output: null,
    error: null,
    startedAt: new Date().toISOString(),
    endedAt: null,
    durationMs: null,
  };
}
