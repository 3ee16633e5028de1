import type { ActorLogic, ActorScope, AnyActorRef, Snapshot } from 'xstate';
import { isContainerType, type AnyBlockType, type BlockType } from '../src/blocks/types.js';
import { errorInfo } from '../src/errors.js';
import { assignOwn } from '../src/model/own.js';
import { readinessFromCounts, type InputState } from '../src/model/readiness.js';
import type { ReferenceScope } from '../src/model/references.js';
import { isPermanentCode, prepareConfig, retryBackoffMs, runBlock, type BlockOutcome, type BlockRunInput } from '../src/runtime/run-block.js';
import { containerOutcome, handleFailure, publishDownstream, settledReport } from './block-effects.js';
import { newClaim, releaseClaim } from '../src/runtime/budget.js';
import type { BlockActorInput, BlockContext, ContainerActorInput, ContainerOutput } from './block-input.js';
import { loopMachine } from './loop.js';
import { containerRunKey } from '../src/model/block-run.js';
import { inboxKey, type BlockReport, type InboxMessage } from './messages.js';
import { parallelMachine } from './parallel.js';

/**
 * The block's lifecycle. `waiting` until its inputs decide; `running` its task or container;
 * then `settled` or `skipped`. Settled actors are not final: the execution stops them all at
 * once when it ends.
 */
export type BlockPhase = 'waiting' | 'running' | 'settled' | 'skipped';

export type BlockEvent =
  | { type: 'INPUT'; msg: InboxMessage }
  | { type: 'START' }
  | { type: 'SKIP' }
  | { type: 'RUN.DONE'; outcome: BlockOutcome }
  | { type: 'CONTAINER.DONE'; output: ContainerOutput }
  | { type: 'CONTAINER.RETRY' }
  | { type: 'xstate.stop' };

export type BlockSnapshot = Snapshot<undefined> & {
  phase: BlockPhase;
  /** mutated in place: only this actor touches it */
  context: BlockContext;
};

type Scope = ActorScope<BlockSnapshot, BlockEvent>;

/** A settled or skipped block actor ignores every event: stopping it would change nothing. */
export function blockAtRest(actor: AnyActorRef): boolean {
  const phase = (actor.getSnapshot() as Partial<BlockSnapshot>).phase;
  return phase === 'settled' || phase === 'skipped';
}

function inPhase(snapshot: BlockSnapshot, phase: BlockPhase): BlockSnapshot {
  return { status: 'active', output: undefined, error: undefined, phase, context: snapshot.context };
}

function typeOf(ctx: BlockContext): AnyBlockType {
  const type = ctx.blockTypes[ctx.block.type];
  if (type === undefined) throw new Error(`no block type "${ctx.block.type}" registered`);
  return type;
}

export function scopeOf(ctx: BlockContext): ReferenceScope {
  return { outputs: ctx.known, blockNames: ctx.workflow.blockNames, variables: ctx.variables, loop: ctx.loop, parallel: ctx.parallel };
}

function prepareContainer(ctx: BlockContext): BlockContext['prepared'] {
  try {
    const prepared = prepareConfig({ block: ctx.block, scope: scopeOf(ctx), secrets: ctx.run.secrets, type: typeOf(ctx) });
    return { config: prepared.config as Record<string, unknown>, recorded: prepared.recorded };
  } catch (error) {
    return { error };
  }
}

/**
 * Puts a block's recorded input (resolved config, secrets masked) in its running log, stored and
 * in the ledger: a block cancelled mid-run (or cut off by a crash) never reports an outcome, and
 * its log would say input null. Reported in the turn of its BLOCK.STARTED, right after it, so
 * the two are applied together or (after the execution's end was decided) not at all.
 */
function noteInput(ctx: BlockContext, recorded: unknown): void {
  ctx.report({ type: 'BLOCK.INPUT', blockId: ctx.block.id, iteration: ctx.iteration, input: recorded });
}

/** Publishes downstream, then returns the report for the parent. */
function settleWith(context: BlockContext, outcome: BlockOutcome): BlockReport {
  const handled = handleFailure(context, outcome);
  const activated = handled.kind === 'completed' ? publishDownstream(context, handled.handles, handled.live ?? handled.output) : [];
  return settledReport(context, handled, activated);
}

/** The key of a container block's container actor in the group (stopped with everything else). */
function containerKey(ctx: BlockContext): string {
  return containerRunKey(inboxKey(ctx.scopeKey, ctx.block.id));
}

/**
 * Runs the block's task. A plain promise rather than an invoked promise actor (one actor less per
 * block); cancellation comes from the scope's signal, and a result that arrives after the actor
 * stopped is dropped.
 */
function startTask(context: BlockContext, self: AnyActorRef): void {
  const shared = context.run;
  // Method syntax, not arrow properties: tsx (esbuild keepNames) wraps every named arrow in a
  // defineProperty call, which showed in the per-block profile.
  const run: BlockRunInput = {
    executionId: shared.executionId,
    workflowId: shared.workflowId,
    secrets: shared.secrets,
    input: shared.input,
    trigger: shared.trigger,
    conversationId: shared.conversationId,
    services: shared.services,
    type: typeOf(context) as BlockType<any>,
    block: context.block,
    runKey: inboxKey(context.scopeKey, context.block.id),
    scope: scopeOf(context),
    emitChunk(text) {
      if (self.getSnapshot().status === 'active') context.report({ type: 'BLOCK.CHUNK', blockId: context.block.id, text, iteration: context.iteration });
    },
    onPrepared(recorded) {
      noteInput(context, recorded);
    },
  };
  // a wait inside a loop or parallel waits in memory: its container starts over when resumed (docs/waiting.md)
  if (context.iteration === null) {
    run.onWaiting = (info) => {
      if (self.getSnapshot().status === 'active') context.report({ type: 'BLOCK.WAITING', blockId: context.block.id, iteration: null, info });
    };
  }
  void runBlock(run, context.cancel).then((outcome) => {
    if (self.getSnapshot().status === 'active') self.send({ type: 'RUN.DONE', outcome });
  });
}

/**
 * Starts the loop or parallel actor of a container block; its end comes back as CONTAINER.DONE.
 * It lives in the execution's group, so the execution's end stops it with every other actor.
 * Returns the outcome instead when the config could not be resolved.
 */
function startContainer(context: BlockContext, self: AnyActorRef): BlockOutcome | null {
  context.prepared ??= prepareContainer(context);
  if (context.prepared !== null && 'error' in context.prepared) {
    return containerOutcome(context, { ok: false, results: [], error: null }, context.prepared.error);
  }
  if (context.prepared !== null) noteInput(context, context.prepared.recorded);
  context.attempts += 1;
  context.claim = newClaim();
  const input: ContainerActorInput = { owner: context, config: context.prepared?.config ?? {}, blockLogic, claim: context.claim };
  const logic = context.block.type === 'loop' ? loopMachine : parallelMachine;
  const key = containerKey(context);
  context.group.spawn(key, logic, input, (end) => {
    if (self.getSnapshot().status !== 'active') return;
    const output: ContainerOutput = 'output' in end ? (end.output as ContainerOutput) : { ok: false, results: [], error: errorInfo(end.error) };
    self.send({ type: 'CONTAINER.DONE', output });
  });
  const limit = context.block.timeoutMs;
  if (limit !== undefined) {
    const error = { code: 'BLOCK_TIMEOUT', message: `block "${context.block.name}" exceeded its ${limit} ms time limit` };
    context.deadline = context.run.services.clock.setTimer(limit, () => context.group.send(key, { type: 'CONTAINER.ABORT', error }));
  }
  return null;
}

/**
 * A container attempt has ended. A failure the block's `retry` allows is tried again after its
 * backoff (the same config, every iteration from the start, as a whole-block retry of any
 * block), unless the config alone decided it (`repeats`: another attempt would fail the same
 * way); otherwise the block settles with the outcome, its attempts counted.
 */
function containerDone(snapshot: BlockSnapshot, output: ContainerOutput, self: AnyActorRef): BlockSnapshot {
  const context = snapshot.context;
  clearDeadline(context);
  const outcome = containerOutcome(context, output, null);
  if (outcome.kind === 'failed' && output.repeats !== true && retriesLeft(context, outcome.error.code)) {
    context.run.services.clock.sleep(retryBackoffMs(context.block, context.attempts), context.cancel.signal).then(
      () => {
        if (self.getSnapshot().status === 'active') self.send({ type: 'CONTAINER.RETRY' });
      },
      // cancelled while waiting: the scope has ended, and so has this actor
      () => undefined,
    );
    return snapshot;
  }
  context.report(settleWith(context, { ...outcome, attempts: context.attempts }));
  return inPhase(snapshot, 'settled');
}

function retriesLeft(context: BlockContext, code: string): boolean {
  return context.attempts < (context.block.retry?.maxAttempts ?? 1) && !isPermanentCode(code) && !context.cancel.aborted;
}

function clearDeadline(context: BlockContext): void {
  context.deadline?.();
  context.deadline = null;
}

function begin(snapshot: BlockSnapshot, scope: Scope): BlockSnapshot {
  const context = snapshot.context;
  context.startedAt = context.run.services.clock.now();
  context.report({ type: 'BLOCK.STARTED', blockId: context.block.id, at: context.startedAt, iteration: context.iteration });
  if (!isContainerType(typeOf(context))) {
    startTask(context, scope.self);
    return inPhase(snapshot, 'running');
  }
  return containerAttempt(snapshot, scope.self);
}

/** Starts an attempt of the container: running, or settled at once when its config could not be resolved. */
function containerAttempt(snapshot: BlockSnapshot, self: AnyActorRef): BlockSnapshot {
  const failed = startContainer(snapshot.context, self);
  if (failed === null) return inPhase(snapshot, 'running');
  snapshot.context.report(settleWith(snapshot.context, failed));
  return inPhase(snapshot, 'settled');
}

function skip(snapshot: BlockSnapshot): BlockSnapshot {
  const context = snapshot.context;
  publishDownstream(context, [], null);
  context.report(settledReport(context, null, []));
  return inPhase(snapshot, 'skipped');
}

/** Folds one inbox message into the input states; runs or skips once every input is settled. */
function onInput(snapshot: BlockSnapshot, msg: InboxMessage, scope: Scope): BlockSnapshot {
  const context = snapshot.context;
  const { c, a, o } = msg;
  if (context.inputs.get(c) !== 'pending') return snapshot;
  context.inputs.set(c, a ? 'active' : 'inactive');
  assignOwn(context.known, o);
  context.pending -= 1;
  if (a) context.active += 1;
  const readiness = readinessFromCounts(context.inputs.size, context.pending, context.active);
  if (readiness === 'run') return begin(snapshot, scope);
  if (readiness === 'skip') return skip(snapshot);
  return snapshot;
}

function transition(snapshot: BlockSnapshot, event: BlockEvent, scope: Scope): BlockSnapshot {
  // the actor stops when its execution ends: a task or container result after that is dropped
  if (event.type === 'xstate.stop') {
    clearDeadline(snapshot.context);
    // its container machine is stopped with it, before its end: what that attempt held goes back
    if (snapshot.context.claim !== null) releaseClaim(snapshot.context.budget, snapshot.context.claim, false);
    return { status: 'stopped', output: undefined, error: undefined, phase: snapshot.phase, context: snapshot.context };
  }
  switch (snapshot.phase) {
    case 'waiting':
      if (event.type === 'INPUT') return onInput(snapshot, event.msg, scope);
      if (event.type === 'START') return begin(snapshot, scope);
      if (event.type === 'SKIP') return skip(snapshot);
      return snapshot;
    case 'running':
      if (event.type === 'RUN.DONE') {
        snapshot.context.report(settleWith(snapshot.context, event.outcome));
        return inPhase(snapshot, 'settled');
      }
      if (event.type === 'CONTAINER.DONE') return containerDone(snapshot, event.output, scope.self);
      if (event.type === 'CONTAINER.RETRY') {
        const { block, iteration } = snapshot.context;
        snapshot.context.report({ type: 'CONTAINER.ATTEMPT', blockId: block.id, iteration });
        return containerAttempt(snapshot, scope.self);
      }
      return snapshot;
    default:
      return snapshot;
  }
}

/** Field by field rather than a spread: this runs once per block, and spread copies are slow. */
function initialContext(input: BlockActorInput): BlockContext {
  const inputs = new Map<number, InputState>();
  for (const c of input.block.incoming) inputs.set(c.index, 'pending');
  return {
    bus: input.bus,
    prefix: input.prefix,
    scopeKey: input.scopeKey,
    workflow: input.workflow,
    block: input.block,
    run: input.run,
    blockTypes: input.blockTypes,
    variables: input.variables,
    loop: input.loop,
    parallel: input.parallel,
    iteration: input.iteration,
    group: input.group,
    cancel: input.cancel,
    budget: input.budget,
    report: input.report,
    inputs,
    pending: input.block.incoming.length,
    active: 0,
    known: input.known === undefined ? {} : { ...input.known },
    startedAt: null,
    prepared: null,
    attempts: 0,
    deadline: null,
    claim: null,
  };
}

/**
 * The block actor: XState actor logic written as a transition function over four phases rather
 * than a state machine. A block's lifecycle has no nesting, history or delays, and the machine
 * version cost about as much per block as all the rest of the execution (profile in
 * docs/benchmarks.md); this keeps the actor model (mailbox, snapshots, `createActor`) without
 * the statechart interpreter on the hot path.
 */
export const blockLogic: ActorLogic<BlockSnapshot, BlockEvent, BlockActorInput> = {
  transition,
  getInitialSnapshot: (_scope, input) => ({ status: 'active', output: undefined, error: undefined, phase: 'waiting', context: initialContext(input) }),
  getPersistedSnapshot: (snapshot) => snapshot,
};
