/**
 * The execution actor's shapes: what it is given, its private context and the events it decides
 * on. Apart from the machine so that the report queue (execution-reports.ts) can use them
 * without importing the machine.
 */
import type { Bus, Subscription } from '../src/bus/types.js';
import type { CancelTimer, Clock } from '../src/model/clock.js';
import type { CompiledWorkflow } from '../src/model/graph.js';
import type { ExecutionLimits } from '../src/model/limits.js';
import type { ResumePlan } from '../src/model/resume.js';
import type { ExecutionBudget } from '../src/runtime/budget.js';
import type { ExecutionLedger } from '../src/runtime/execution-state.js';
import type { BlockLogEntry, ExecutionError, ExecutionEvent, ExecutionResult, ResponseOutput, WaitingEntry } from '../src/runtime/types.js';
import type { BlockActorInput } from './block-input.js';
import type { CancelScope } from './cancel-scope.js';
import type { ActorGroup } from './group.js';
import type { BlockReport } from './messages.js';
import type { WaitingState } from './waiting.js';

/** Where the execution's events go (the engine's run: persistence, SSE, CLI progress). */
export interface ExecutionSink {
  notify(event: ExecutionEvent): void;
  /** a block's log as it starts (status running), for the record; its settle replaces it */
  logStarted(log: BlockLogEntry): void;
  /** logs of a container's earlier attempt, to remove from what is recorded */
  forgetLogs(logs: readonly BlockLogEntry[]): void;
}

export interface ExecutionActorInput {
  executionId: string;
  workflowId: string;
  version: number;
  workflow: CompiledWorkflow;
  bus: Bus;
  prefix: string;
  timeoutMs: number;
  /** the run parameters every block actor shares */
  blockRun: BlockActorInput['run'];
  blockTypes: BlockActorInput['blockTypes'];
  /** observers: persistence, SSE, CLI progress */
  sink: ExecutionSink;
  /**
   * when the execution started (its record's startedAt; for a resumed run, the start of the run
   * it resumes, whose time limit is what that run left); now when absent
   */
  startedAt?: number;
  /** the whole time limit, named in the timeout error (a resumed run's `timeoutMs` is what is left of it) */
  limitMs?: number;
  /** what an interrupted run of this execution had settled (see resume.ts) */
  resume?: ResumePlan;
  /** what the execution may hold and run at once (its containers check them) */
  limits: Readonly<ExecutionLimits>;
  /** a wait falling due further away than this parks the execution (waiting.ts); absent: never parks */
  parkAfterMs?: number;
}

/**
 * The running execution's handles and bookkeeping: built once when the machine starts and held
 * by its context as `exec`, never copied. The machine's context is only `{ exec, end }`: XState
 * copies the whole context on every assign (and builds it through one), so a context of thirty
 * fields cost two copies of them per execution, a tenth of the engine's time on a short run.
 */
export interface ExecutionContext extends ExecutionActorInput {
  startedAt: number;
  /** the engine's clock (its services'): every time the execution reads or waits for */
  clock: Clock;
  /** every block actor of the execution, by inbox key */
  group: ActorGroup;
  /** ends with the execution: cancels running blocks */
  cancel: CancelScope;
  /** the limits' running count, shared by the execution's containers */
  budget: ExecutionBudget;
  /** mutated in place (see ExecutionLedger) */
  ledger: ExecutionLedger;
  /** the block actors' reports not yet applied (see reporter) */
  reports: ReportQueue | null;
  /** the execution's one bus subscription (see openChannel), closed at the end */
  channel: Subscription | null;
  /** cancels the time limit's timer (see startDeadline); called at the end */
  deadline: CancelTimer | null;
  /** when the time limit falls while it runs (paused while only waiting blocks remain) */
  deadlineAt: number;
  /** blocks waiting (waiting.ts); null until one does */
  waits: WaitingState | null;
}

/**
 * The end, as the transition that decides it assigns it; the result is built from it (the
 * machine's output). A parked execution's `parked` says what it waits for and the running time
 * it used, taken before its blocks go.
 */
export interface ExecutionEnd {
  status: ExecutionResult['status'];
  response: ResponseOutput | null;
  error: ExecutionError | null;
  parked: { waiting: WaitingEntry[]; activeMs: number } | null;
}

/** The machine's context: the run's handles (never reassigned) and its end, once decided. */
export interface ExecutionMachineContext {
  exec: ExecutionContext;
  end: ExecutionEnd | null;
}

/**
 * What the execution machine decides on. Block reports that change no decision (starts, chunks,
 * iteration progress, a settle that neither ends nor fails the run) are folded into the ledger
 * by the report callback without a machine event; a settle that decides the run's end arrives
 * as one of the first three events.
 */
export type ExecutionEventIn =
  | { type: 'BLOCK.FAILED'; error: ExecutionError }
  | { type: 'BLOCK.RESPONDED'; response: ResponseOutput }
  | { type: 'ALL.SETTLED' }
  | { type: 'TIMEOUT' }
  | { type: 'CANCEL' }
  | { type: 'PARK' };
export type Settled = Extract<BlockReport, { type: 'BLOCK.SETTLED' }>;

export interface ReportQueue {
  report: BlockActorInput['report'];
  /** at the end: applies what is queued unless a report decided the end (then it is dropped) */
  drain(): void;
}
