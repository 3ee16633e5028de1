import { capabilitiesOf } from '../model/capabilities.js';
import type { ErrorInfo } from '../errors.js';
import { isoAt } from './iso.js';
import { logKey } from '../model/block-run.js';
import type { CompiledWorkflow } from '../model/graph.js';
import { selectFinalOutput } from '../model/output.js';
import { jsonBytes, summarised } from '../model/limits.js';
import { getOwn, setOwn } from '../model/own.js';
import type { ResumePlan, SettledBlock } from '../model/resume.js';
import type { BlockLogEntry, BlockReport, ExecutionError, ExecutionResult, IterationRef, ResponseOutput } from './types.js';

type Settled = Extract<BlockReport, { type: 'BLOCK.SETTLED' }>;

/**
 * The execution context of SPEC §2, kept by the execution actor and visible in the record:
 * block states and outputs, active connections, routing decisions, iteration state, the logs.
 */
export interface ExecutionContextData {
  states: Record<string, BlockLogEntry['status']>;
  outputs: Record<string, Record<string, unknown>>;
  activeConnections: number[];
  decisions: Record<string, string | null>;
  logs: BlockLogEntry[];
  /** loop/parallel iteration state by container block id (the latest run of a nested container) */
  iterations: Record<string, IterationState>;
}

export interface IterationState {
  total: number | null;
  running: number[];
  finished: number;
  results: unknown[];
}

/**
 * The execution actor's ledger. It is mutated in place on purpose: copying states, outputs and
 * logs on every report made each execution O(blocks²) in time and garbage. Its objects are keyed
 * by block id, which may be `__proto__` or `constructor`: written with setOwn, read with getOwn.
 */
export class ExecutionLedger {
  readonly states: Record<string, BlockLogEntry['status']> = {};
  readonly outputs: Record<string, Record<string, unknown>> = {};
  readonly activeConnections: number[] = [];
  readonly decisions: Record<string, string | null> = {};
  readonly iterations: Record<string, IterationState> = {};
  private readonly logs = new Map<string, BlockLogEntry>();
  private nextOrder = 0;
  settledTopLevel = 0;
  /** what the record keeps whole of iterations' logs and results so far (see keptWhole) */
  private iterationBytes = 0;

  /**
   * `maxLogBytes`: the iterations' logs and results a record keeps whole; past it they keep their
   * size instead of their input, output or result, so a long loop's record stays readable.
   */
  constructor(
    private readonly workflow: CompiledWorkflow,
    private readonly maxLogBytes = Number.POSITIVE_INFINITY,
  ) {
    for (const id of workflow.topLevel) setOwn(this.states, id, 'pending');
  }

  started(blockId: string, at: number, iteration: IterationRef | null): BlockLogEntry {
    const log = startedLog(this.workflow, blockId, at, this.nextOrder++, iteration);
    this.logs.set(logKey(blockId, iteration), log);
    if (iteration === null) setOwn(this.states, blockId, 'running');
    return log;
  }

  settled(e: Settled): BlockLogEntry {
    const key = logKey(e.blockId, e.iteration);
    const previous = this.logs.get(key);
    const log = settledLog(this.workflow, e, previous, previous?.order ?? this.nextOrder++);
    if (e.iteration !== null) {
      const kept = this.keptWhole(log);
      this.logs.set(key, kept);
      return kept;
    }
    this.logs.set(key, log);
    this.settleTopLevel(e, log.blockType);
    return log;
  }

  /** What a settled top-level block adds to the context: a live settle and a resumed one alike. */
  private settleTopLevel(s: SettledBlock, blockType: string): void {
    setOwn(this.states, s.blockId, s.status);
    if (s.output !== null) setOwn(this.outputs, s.blockId, s.output);
    for (const c of s.activated) this.activeConnections.push(c);
    const decision = decisionOf(blockType, s.output);
    if (decision !== undefined) setOwn(this.decisions, s.blockId, decision);
    this.settledTopLevel += 1;
  }

  /**
   * Takes over what an interrupted run of this execution had settled (see src/model/resume.ts):
   * the context of its settled top-level blocks. A block that was running (its stored log says
   * `running`, and resumption drops it) simply starts again and writes its log anew.
   */
  resume(plan: ResumePlan): ReadonlySet<string> {
    for (const s of plan.settled) this.settleTopLevel(s, this.workflow.blocks.get(s.blockId)?.type ?? '');
    this.nextOrder = Math.max(this.nextOrder, plan.nextOrder);
    return new Set(plan.settled.map((s) => s.blockId));
  }

  /**
   * Forgets the logs of a container's children (at any depth) from its earlier attempt, and
   * returns them: the new attempt writes those it runs again, and the others must not stay.
   */
  dropAttempt(containerId: string, iteration: IterationRef | null): BlockLogEntry[] {
    const inside = insideContainer(containerId, iteration);
    const dropped: BlockLogEntry[] = [];
    for (const [key, log] of this.logs) {
      if (!inside(key)) continue;
      this.logs.delete(key);
      dropped.push(log);
    }
    // its iteration state, and that of the containers inside it, starts over with the new attempt
    delete this.iterations[logKey(containerId, iteration)];
    for (const key of Object.keys(this.iterations)) if (inside(key)) delete this.iterations[key];
    return dropped;
  }

  /** The running log of the block with its recorded input; null when it is no longer running. */
  runningInput(blockId: string, iteration: IterationRef | null, input: unknown): BlockLogEntry | null {
    const key = logKey(blockId, iteration);
    const log = this.logs.get(key);
    if (log?.status !== 'running') return null;
    const updated = { ...log, input };
    this.logs.set(key, updated);
    return updated;
  }

  /** A block is waiting (SPEC §2.1): its log and state say so; null when it is no longer running. */
  waiting(blockId: string, iteration: IterationRef | null): BlockLogEntry | null {
    const key = logKey(blockId, iteration);
    const log = this.logs.get(key);
    if (log?.status !== 'running') return null;
    const updated: BlockLogEntry = { ...log, status: 'waiting' };
    this.logs.set(key, updated);
    if (iteration === null) setOwn(this.states, blockId, 'waiting');
    return updated;
  }

  /** Whether blocks wait and nothing else runs (a scan of the logs: asked only while a block waits). */
  get onlyWaiting(): boolean {
    let waiting = false;
    for (const log of this.logs.values()) {
      if (log.status === 'running') return false;
      if (log.status === 'waiting') waiting = true;
    }
    return waiting;
  }

  iteration(e: IterationEvent): void {
    // a nested container's state is kept per enclosing iteration: `inner@outer#1`
    const key = logKey(e.containerId, e.outer ?? null);
    const kept = e.result === undefined ? e : { ...e, result: this.within(e.result) };
    setOwn(this.iterations, key, nextIterationState(getOwn(this.iterations, key), kept));
  }

  /**
   * An iteration's log as the record keeps it: whole while the iterations' logs and results fit
   * `maxLogBytes`, then with its input and output summarised (their size), in the record and in
   * the events alike. The container's own `results`, which the run computes on, are not affected.
   */
  private keptWhole(log: BlockLogEntry): BlockLogEntry {
    if (this.maxLogBytes === Number.POSITIVE_INFINITY) return log;
    const input = this.within(log.input);
    const output = this.within(log.output);
    return input === log.input && output === log.output ? log : { ...log, input, output: output as BlockLogEntry['output'] };
  }

  /** `value` while the record's budget for iterations holds it, else its summary. */
  private within(value: unknown): unknown {
    if (value === null || value === undefined || this.maxLogBytes === Number.POSITIVE_INFINITY) return value;
    const bytes = jsonBytes(value);
    this.iterationBytes += bytes;
    return this.iterationBytes <= this.maxLogBytes ? value : summarised(bytes);
  }

  /**
   * Blocks still running become cancelled when the execution ends early, in their logs and in the
   * context's states alike. They had begun their first attempt, whatever its outcome would be.
   * Their logs keep the input they were running with (runningInput), when they got that far.
   * Blocks still pending become cancelled in the states.
   */
  cancelRunning(at: number): void {
    for (const [key, log] of this.logs) {
      if (log.status !== 'running' && log.status !== 'waiting') continue;
      const durationMs = log.startedAt === null ? null : at - Date.parse(log.startedAt);
      this.logs.set(key, { ...log, status: 'cancelled', endedAt: iso(at), durationMs, attempts: Math.max(1, log.attempts) });
      if (log.iteration === null) setOwn(this.states, log.blockId, 'cancelled');
    }
    // those that had not started never will: an ended execution leaves no block pending (they
    // have no log, having never started)
    for (const id of this.workflow.topLevel) if (getOwn(this.states, id) === 'pending') setOwn(this.states, id, 'cancelled');
  }

  get allSettled(): boolean {
    return this.settledTopLevel >= this.workflow.topLevel.length;
  }

  snapshot(): ExecutionContextData {
    return {
      states: this.states,
      outputs: this.outputs,
      activeConnections: this.activeConnections,
      decisions: this.decisions,
      logs: [...this.logs.values()].sort((a, b) => a.order - b.order),
      iterations: this.iterations,
    };
  }
}

export interface IterationEvent {
  containerId: string;
  /** the iteration the container itself runs in, when it is nested */
  outer?: IterationRef;
  index: number;
  phase: 'started' | 'finished';
  total: number | null;
  result?: unknown;
}

/** A container's iteration state after one of its iterations started or finished. */
export function nextIterationState(current: IterationState | undefined, e: IterationEvent): IterationState {
  const base: IterationState =
    current === undefined || (e.phase === 'started' && e.index === 0) ? { total: e.total, running: [], finished: 0, results: [] } : current;
  if (e.phase === 'started') return { ...base, total: e.total, running: [...base.running, e.index] };
  const results = [...base.results];
  results[e.index] = e.result ?? null;
  return { ...base, running: base.running.filter((i) => i !== e.index), finished: base.finished + 1, results };
}

/**
 * Whether a log key (or an iteration-state key) belongs inside container `containerId` running
 * in `iteration`: it ends with `@{containerId}#{index}` and then that iteration's own path.
 */
function insideContainer(containerId: string, iteration: IterationRef | null): (key: string) => boolean {
  const tail = `@${containerId}#`;
  const scope = logKey('', iteration);
  return (key) => {
    if (!key.endsWith(scope)) return false;
    const at = key.lastIndexOf(tail, key.length - scope.length);
    return at >= 0 && /^\d+$/.test(key.slice(at + tail.length, key.length - scope.length));
  };
}

const iso = (ms: number | null): string | null => (ms === null ? null : isoAt(ms));

export function startedLog(workflow: CompiledWorkflow, blockId: string, at: number, order: number, iteration: IterationRef | null): BlockLogEntry {
  const block = workflow.blocks.get(blockId);
  return {
    blockId,
    blockName: block?.name ?? blockId,
    blockType: block?.type ?? 'unknown',
    status: 'running',
    order,
    startedAt: iso(at),
    endedAt: null,
    durationMs: null,
    input: null,
    output: null,
    error: null,
    errorHandled: false,
    attempts: 0,
    iteration,
  };
}

/** Log of a settled block; a skipped block never started, so it takes the next order number. */
export function settledLog(workflow: CompiledWorkflow, report: Settled, previous: BlockLogEntry | undefined, order: number): BlockLogEntry {
  const base = previous ?? startedLog(workflow, report.blockId, report.endedAt, order, report.iteration);
  const log: BlockLogEntry = {
    blockId: base.blockId,
    blockName: base.blockName,
    blockType: base.blockType,
    status: report.status,
    order: base.order,
    startedAt: report.status === 'skipped' ? null : base.startedAt,
    endedAt: iso(report.endedAt),
    durationMs: report.startedAt === null ? null : report.endedAt - report.startedAt,
    input: report.input,
    output: report.output,
    error: report.error,
    errorHandled: report.errorHandled,
    attempts: report.attempts,
    iteration: base.iteration,
  };
  if (report.attemptLog !== undefined) log.attemptLog = report.attemptLog;
  // what a resumption after a crash needs to replay this block's decision (src/model/resume.ts)
  if (report.iteration === null) log.activated = report.activated;
  return log;
}

export function decisionOf(blockType: string, output: Record<string, unknown> | null): string | null | undefined {
  if (output === null) return undefined;
  const route = capabilitiesOf(blockType).route;
  return route === null ? undefined : ((output[route] as string | null | undefined) ?? null);
}


export function finalOutput(workflow: CompiledWorkflow, data: Pick<ExecutionContextData, 'outputs' | 'states'>): unknown {
  const completed = new Map<string, Record<string, unknown>>();
  for (const id of workflow.topLevel) {
    const output = getOwn(data.outputs, id);
    if (output !== undefined && getOwn(data.states, id) === 'completed') completed.set(id, output);
  }
  return selectFinalOutput(workflow, completed);
}

export function buildResult(
  base: { id: string; workflowId: string; version: number; startedAt: number },
  end: { status: ExecutionResult['status']; output: unknown; error: ExecutionError | null; response: ResponseOutput | null; at: number },
): ExecutionResult {
  return {
    id: base.id,
    workflowId: base.workflowId,
    version: base.version,
    status: end.status,
    output: end.output,
    error: end.error,
    response: end.response,
    startedAt: isoAt(base.startedAt),
    endedAt: isoAt(end.at),
    durationMs: end.at - base.startedAt,
  };
}
