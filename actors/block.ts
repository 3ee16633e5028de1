import type { ActorLogic, ActorScope, AnyActorRef, Snapshot } from 'xstate';
import { isContainerType, type AnyBlockType, type BlockType } from '../src/blocks/types.js';
import { assignOwn } from '../src/model/own.js';
import { capabilitiesOf } from '../src/model/capabilities.js';
import { readinessFromCounts, type InputState } from '../src/model/readiness.js';
import type { ReferenceScope } from '../src/model/references.js';
import { runBlock, type BlockOutcome, type BlockRunInput } from '../src/runtime/run-block.js';
import { activatedBy, handleFailure, publishDownstream, settledReport } from './block-effects.js';
import type { BlockActorInput, BlockContext } from './block-input.js';
import { containerTask } from './container-task.js';
import { typeOfName } from './iteration.js';
import { inboxKey, type BlockReport, type InboxMessage } from './messages.js';

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
  | { type: 'xstate.stop' };

export type BlockSnapshot = Snapshot<undefined> & {
  phase: BlockPhase;
  /** never written in place: a transition that changes it returns a new one */
  context: BlockContext;
};

type Scope = ActorScope<BlockSnapshot, BlockEvent>;

/** A settled or skipped block actor ignores every event: stopping it would change nothing. */
export function blockAtRest(actor: AnyActorRef): boolean {
  const phase = (actor.getSnapshot() as Partial<BlockSnapshot>).phase;
  return phase === 'settled' || phase === 'skipped';
}

function inPhase(phase: BlockPhase, context: BlockContext): BlockSnapshot {
  return { status: 'active', output: undefined, error: undefined, phase, context };
}

function typeOf(input: BlockActorInput): AnyBlockType {
  const type = input.blockTypes[input.block.type];
  if (type === undefined) throw new Error(`no block type "${input.block.type}" registered`);
  return type;
}

export function scopeOf(ctx: BlockContext): ReferenceScope {
  const { input } = ctx;
  return { outputs: ctx.known, blockNames: input.workflow.blockNames, variables: input.variables, loop: input.loop, parallel: input.parallel };
}

/**
 * Puts a block's recorded input (resolved config, secrets masked) in its running log, stored and
 * in the ledger: a block cancelled mid-run (or cut off by a crash) never reports an outcome, and
 * its log would say input null. Reported in the turn of its BLOCK.STARTED, right after it, so
 * the two are applied together or (after the execution's end was decided) not at all.
 */
function noteInput(input: BlockActorInput, recorded: unknown): void {
  input.report({ type: 'BLOCK.INPUT', blockId: input.block.id, iteration: input.iteration, input: recorded });
}

/**
 * Settles with the task's outcome: the transition decides what it activates (an error connection
 * may take a failure); publishing downstream, then reporting to the owner, are its effects.
 */
function settle(context: BlockContext, outcome: BlockOutcome, scope: Scope): BlockSnapshot {
  const handled = handleFailure(context.input, outcome);
  const activated = handled.kind === 'completed' ? activatedBy(context.input, handled.handles) : [];
  scope.defer(() => {
    if (handled.kind === 'completed') publishDownstream(context, activated, handled.live ?? handled.output);
    context.input.report(settledReport(context, handled, activated));
  });
  return inPhase('settled', context);
}

/**
 * The block's task: its type's run, or for a container block one attempt of its container machine
 * (container-task.ts). Either goes through runBlock, which applies the block's time limit and
 * whole-block retry once for both.
 */
function taskOf(context: BlockContext, type: AnyBlockType): BlockType<any> {
  // its children start from what reached the container block
  return isContainerType(type) ? containerTask(type, { ...context.input, known: context.known }, blockLogic) : type;
}

/**
 * Runs the block's task. A plain promise rather than an invoked promise actor (one actor less per
 * block); cancellation comes from the scope's signal, and a result that arrives after the actor
 * stopped is dropped.
 */
function startTask(context: BlockContext, self: AnyActorRef): void {
  const { input } = context;
  const shared = input.run;
  const type = typeOf(input);
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
    type: taskOf(context, type),
    block: input.block,
    runKey: inboxKey(input.scopeKey, input.block.id),
    scope: scopeOf(context),
    emitChunk(text) {
      if (self.getSnapshot().status === 'active') input.report({ type: 'BLOCK.CHUNK', blockId: input.block.id, text, iteration: input.iteration });
    },
    onPrepared(recorded) {
      noteInput(input, recorded);
    },
  };
  // a wait inside a loop or parallel waits in memory: its container starts over when resumed (docs/waiting.md)
  if (input.iteration === null && capabilitiesOf(input.block.type).parks) {
    run.onWaiting = (info) => {
      if (self.getSnapshot().status === 'active') input.report({ type: 'BLOCK.WAITING', blockId: input.block.id, iteration: null, info });
    };
  }
  // a container's results name its children, whose own fields redaction keeps
  if (isContainerType(type)) run.childTypes = typeOfName(input.workflow);
  void runBlock(run, input.cancel).then((outcome) => {
    if (self.getSnapshot().status === 'active') self.send({ type: 'RUN.DONE', outcome });
  });
}

/** `settled`: the input states of the message that made it run, if one did (one new context per block either way). */
function begin(context: BlockContext, scope: Scope, settled: InputsSettled = context): BlockSnapshot {
  const { input } = context;
  const at = input.run.services.clock.now();
  const running: BlockContext = { input, inputs: settled.inputs, pending: settled.pending, active: settled.active, known: settled.known, startedAt: at };
  scope.defer(() => {
    input.report({ type: 'BLOCK.STARTED', blockId: input.block.id, at, iteration: input.iteration });
    startTask(running, scope.self);
  });
  return inPhase('running', running);
}

function skip(context: BlockContext, scope: Scope): BlockSnapshot {
  scope.defer(() => {
    publishDownstream(context, [], null);
    context.input.report(settledReport(context, null, []));
  });
  return inPhase('skipped', context);
}

type InputsSettled = Pick<BlockContext, 'inputs' | 'known' | 'pending' | 'active'>;

/** Where connection `c` is among the block's incoming ones (-1: not one of them). */
function inputAt(input: BlockActorInput, c: number): number {
  const incoming = input.block.incoming;
  for (let i = 0; i < incoming.length; i++) if (incoming[i]?.index === c) return i;
  return -1;
}

function hasKeys(o: Readonly<Record<string, unknown>>): boolean {
  for (const _ in o) return true;
  return false;
}

/** Folds one inbox message into the input states; runs or skips once every input is settled. */
function onInput(snapshot: BlockSnapshot, msg: InboxMessage, scope: Scope): BlockSnapshot {
  const context = snapshot.context;
  const { c, a, o } = msg;
  const at = inputAt(context.input, c);
  if (context.inputs[at] !== 'pending') return snapshot;
  const inputs = context.inputs.slice();
  inputs[at] = a ? 'active' : 'inactive';
  let known = context.known;
  if (hasKeys(o)) {
    known = { ...known };
    assignOwn(known, o);
  }
  const settled: InputsSettled = { inputs, known, pending: context.pending - 1, active: a ? context.active + 1 : context.active };
  const readiness = readinessFromCounts(inputs.length, settled.pending, settled.active);
  if (readiness === 'run') return begin(context, scope, settled);
  const next: BlockContext = { input: context.input, inputs, pending: settled.pending, active: settled.active, known, startedAt: context.startedAt };
  return readiness === 'skip' ? skip(next, scope) : inPhase('waiting', next);
}

function transition(snapshot: BlockSnapshot, event: BlockEvent, scope: Scope): BlockSnapshot {
  // the actor stops when its execution ends: a task or container result after that is dropped
  if (event.type === 'xstate.stop') {
    return { status: 'stopped', output: undefined, error: undefined, phase: snapshot.phase, context: snapshot.context };
  }
  switch (snapshot.phase) {
    case 'waiting':
      if (event.type === 'INPUT') return onInput(snapshot, event.msg, scope);
      if (event.type === 'START') return begin(snapshot.context, scope);
      if (event.type === 'SKIP') return skip(snapshot.context, scope);
      return snapshot;
    case 'running':
      if (event.type === 'RUN.DONE') return settle(snapshot.context, event.outcome, scope);
      return snapshot;
    default:
      return snapshot;
  }
}

/** The input is kept as it was handed in, not copied: nothing writes it. */
function initialContext(input: BlockActorInput): BlockContext {
  const count = input.block.incoming.length;
  const inputs = new Array<InputState>(count).fill('pending');
  // the parent's object, shared: a transition that adds outputs makes a new one (onInput)
  return { input, inputs, pending: count, active: 0, known: input.known ?? {}, startedAt: null };
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
