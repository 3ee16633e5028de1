import { assign, setup } from 'xstate';
import type { Subscription } from '../src/bus/types.js';
import { TroupeError } from '../src/errors.js';
import { executionControl, executionSubjects } from '../src/bus/subjects.js';
import { ExecutionBudget } from '../src/runtime/budget.js';
import { ROOT_SCOPE } from '../src/model/block-run.js';
import { startDecision } from '../src/model/readiness.js';
import type { CancelTimer } from '../src/model/clock.js';
import { buildResult, ExecutionLedger, finalOutput, type ExecutionContextData } from '../src/runtime/execution-state.js';
import type { ExecutionError, ExecutionResult } from '../src/runtime/types.js';
import { blockAtRest, blockLogic } from './block.js';
import type { BlockActorInput } from './block-input.js';
import { CancelScope } from './cancel-scope.js';
import { PARKED } from '../src/blocks/types.js';
import { ActorGroup } from './group.js';
import { replayResume, resumeDecision } from './resume.js';
import { activeAtPark, clearWaiting, waitingList } from './waiting.js';
import type { ExecutionActorInput, ExecutionContext, ExecutionEnd, ExecutionEventIn, ExecutionMachineContext } from './execution-context.js';
import { reporter } from './execution-reports.js';
import { blockOfInboxKey, inboxKey, SCOPE_ENDED, type InboxMessage } from './messages.js';

export type { ExecutionActorInput, ExecutionSink } from './execution-context.js';

function blockInput(ctx: ExecutionContext, blockId: string, report: BlockActorInput['report']): BlockActorInput {
  const block = ctx.workflow.blocks.get(blockId);
  if (block === undefined) throw new Error(`unknown block ${blockId}`);
  return {
    bus: ctx.bus,
    prefix: ctx.prefix,
    scopeKey: ROOT_SCOPE,
    workflow: ctx.workflow,
    block,
    run: ctx.blockRun,
    blockTypes: ctx.blockTypes,
    variables: ctx.workflow.variables,
    iteration: null,
    group: ctx.group,
    cancel: ctx.cancel,
    budget: ctx.budget,
    report,
  };
}


/**
 * A block actor whose logic threw fails the execution with what it threw: a Troupe error keeps
 * its code and message (BUS_CLOSED when the bus refused a publish); anything else is INTERNAL,
 * without its message, which may describe our internals.
 */
function blockActorFailed(self: { send(e: ExecutionEventIn): void }): (key: string, error: unknown) => void {
  return (key, error) => {
    const blockId = blockOfInboxKey(key);
    const failure = error instanceof TroupeError
      ? { code: error.code, message: error.message, blockId }
      : { code: 'INTERNAL', message: `the actor of block ${blockId} failed unexpectedly`, blockId };
    self.send({ type: 'BLOCK.FAILED', error: failure });
  };
}

/**
 * One subscription per execution: the control subject (cancel), and every block inbox of the
 * execution, each message going to the block actor it names, wherever it sits (top level or
 * inside a container iteration). A plain subscription opened on entry and closed by stopBlocks,
 * not an invoked callback actor: every execution ends through stopBlocks, and the invoked actor
 * cost about as much as the rest of the machine's start.
 */
function openChannel(ctx: ExecutionContext, self: { send(e: ExecutionEventIn): void }): Subscription {
  const control = executionControl(ctx.prefix, ctx.executionId);
  const group = ctx.group;
  return ctx.bus.subscribe<InboxMessage>(executionSubjects(ctx.prefix, ctx.executionId), (m) => {
    if (m.subject === control) self.send({ type: 'CANCEL' });
    else group.send(inboxKey(m.data.s, m.data.b), { type: 'INPUT', msg: m.data });
  });
}

/**
 * Aborts running blocks and stops every block actor; their logs still running become cancelled.
 * Reports still queued happened before this end (a cancel, the time limit, a crashed actor) and
 * are applied first.
 */
function stopBlocks({ context: { exec } }: { context: ExecutionMachineContext }): void {
  releaseBlocks(exec);
  exec.ledger.cancelRunning(exec.clock.now());
}

/** What ending and parking share: the timers, the subscription and the block actors go. */
function releaseBlocks(context: ExecutionContext, reason: unknown = SCOPE_ENDED): void {
  context.deadline?.();
  context.deadline = null;
  clearWaiting(context);
  context.channel?.unsubscribe();
  context.reports?.drain();
  context.cancel.abort(reason);
  context.group.stopAll(blockAtRest);
}

/**
 * Parks the execution (waiting.ts): the waiting blocks' logs stay `waiting` and the blocks not
 * yet run stay pending; a later run resumes from the stored logs. What it waits for was assigned
 * by the PARK transition, before the blocks go.
 */
function park({ context }: { context: ExecutionMachineContext }): void {
  releaseBlocks(context.exec, PARKED);
}

/**
 * The execution's time limit as one plain timer on the execution's clock sending TIMEOUT, not an
 * XState `after`: a delayed transition cost a scheduled-event entry, its key and its cancel action
 * on every execution, several percent of a short one's start.
 */
function startDeadline(ctx: ExecutionContext, self: { send(e: ExecutionEventIn): void }): CancelTimer {
  ctx.deadlineAt = ctx.clock.now() + ctx.timeoutMs;
  return ctx.clock.setTimer(ctx.timeoutMs, () => self.send({ type: 'TIMEOUT' }));
}

/**
 * The run's result, from what its end assigned: computed by the machine's output, once the final
 * state's entry has stopped the blocks (and applied the reports still queued).
 */
function resultOf({ exec: ctx, end }: ExecutionMachineContext): ExecutionResult | null {
  if (end === null) return null;
  const status = end.status;
  const base = { id: ctx.executionId, workflowId: ctx.workflowId, version: ctx.version, startedAt: ctx.startedAt };
  const output = status === 'completed' ? (end.response ?? finalOutput(ctx.workflow, ctx.ledger)) : null;
  const error = status === 'failed' || status === 'cancelled' ? end.error : null;
  const result = buildResult(base, { status, output, error, response: end.response, at: ctx.clock.now() });
  if (end.parked !== null) {
    result.waiting = end.parked.waiting;
    result.activeMs = end.parked.activeMs;
  }
  return result;
}

function ended(status: ExecutionEnd['status'], error: ExecutionError | null, response: ExecutionEnd['response'] = null): ExecutionEnd {
  return { status, response, error, parked: null };
}

const CANCELLED_ERROR: ExecutionError = { code: 'CANCELLED', message: 'execution cancelled', blockId: null };

function timeoutError(ctx: ExecutionContext): ExecutionError {
  return { code: 'EXECUTION_TIMEOUT', message: `execution exceeded its ${ctx.limitMs ?? ctx.timeoutMs} ms time limit`, blockId: null };
}

/** Field by field, not a spread of the input: a fixed shape, built once per execution. */
function executionContext(input: ExecutionActorInput, self: { send(e: ExecutionEventIn): void }): ExecutionContext {
  return {
    executionId: input.executionId,
    workflowId: input.workflowId,
    version: input.version,
    workflow: input.workflow,
    bus: input.bus,
    prefix: input.prefix,
    timeoutMs: input.timeoutMs,
    blockRun: input.blockRun,
    blockTypes: input.blockTypes,
    sink: input.sink,
    limitMs: input.limitMs,
    resume: input.resume,
    limits: input.limits,
    parkAfterMs: input.parkAfterMs,
    startedAt: input.startedAt ?? input.blockRun.services.clock.now(),
    clock: input.blockRun.services.clock,
    group: new ActorGroup(blockActorFailed(self)),
    cancel: new CancelScope(),
    budget: new ExecutionBudget(input.limits),
    ledger: new ExecutionLedger(input.workflow, input.limits.maxLogBytes),
    reports: null,
    channel: null,
    deadline: null,
    deadlineAt: 0,
    waits: null,
  };
}

export const executionMachine = setup({
  types: {
    context: {} as ExecutionMachineContext,
    input: {} as ExecutionActorInput,
    events: {} as ExecutionEventIn,
    output: {} as { result: ExecutionResult | null; data: ExecutionContextData },
  },
}).createMachine({
  id: 'execution',
  context: ({ input, self }) => ({ exec: executionContext(input, self), end: null }),
  initial: 'running',
  states: {
    running: {
      entry: ({ context: { exec: context }, self }) => {
        context.deadline = startDeadline(context, self);
        context.channel = openChannel(context, self);
        context.reports = reporter(context, self);
        const report = context.reports.report;
        const { group, workflow, resume } = context;
        const settled = resume === undefined ? null : context.ledger.resume(resume);
        if (resume !== undefined) {
          // a resumed run whose settled blocks already decide the end starts nothing
          const decided = resumeDecision(context, resume);
          if (decided !== null) {
            queueMicrotask(() => self.send(decided));
            return;
          }
        }
        const toRun = settled === null ? workflow.topLevel : workflow.topLevel.filter((id) => !settled.has(id));
        for (const id of toRun) group.spawn(inboxKey(ROOT_SCOPE, id), blockLogic, blockInput(context, id, report));
        if (resume !== undefined) replayResume(context, resume);
        for (const id of toRun) {
          const decision = startDecision(workflow, id);
          if (decision === 'run') group.send(inboxKey(ROOT_SCOPE, id), { type: 'START' });
          else if (decision === 'skip') group.send(inboxKey(ROOT_SCOPE, id), { type: 'SKIP' });
        }
      },
      // The end, decided: one assign per execution, of `end` alone (the handles in `exec` are
      // never copied); then the final state's entry stops the blocks.
      on: {
        TIMEOUT: { target: 'failed', actions: assign({ end: ({ context }) => ended('failed', timeoutError(context.exec)) }) },
        'BLOCK.FAILED': { target: 'failed', actions: assign({ end: ({ event }) => ended('failed', event.error) }) },
        'BLOCK.RESPONDED': { target: 'completed', actions: assign({ end: ({ event }) => ended('completed', null, event.response) }) },
        'ALL.SETTLED': { target: 'completed', actions: assign({ end: () => ended('completed', null) }) },
        CANCEL: { target: 'cancelled', actions: assign({ end: () => ended('cancelled', CANCELLED_ERROR) }) },
        PARK: {
          target: 'waiting',
          actions: assign({ end: ({ context: { exec } }) => ({ status: 'waiting', response: null, error: null, parked: { waiting: waitingList(exec), activeMs: activeAtPark(exec) } }) }),
        },
      },
    },
    waiting: { type: 'final', entry: park },
    completed: { type: 'final', entry: stopBlocks },
    failed: { type: 'final', entry: stopBlocks },
    cancelled: { type: 'final', entry: stopBlocks },
  },
  output: ({ context }) => ({ result: resultOf(context), data: context.exec.ledger.snapshot() }),
});
