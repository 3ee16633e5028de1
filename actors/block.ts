import { assign, setup } from 'xstate';
import { isContainerType, type AnyBlockType, type BlockType } from '../src/blocks/types.js';
import type { Bus } from '../src/bus/types.js';
import type { CompiledBlock, CompiledWorkflow } from '../src/model/graph.js';
import { readinessFromCounts, type InputState } from '../src/model/readiness.js';
import type { IterationScope, ReferenceScope } from '../src/model/references.js';
import { prepareConfig, runBlock, type BlockOutcome, type BlockRunInput } from '../src/runtime/run-block.js';
import type { IterationRef } from '../src/runtime/types.js';
import { containerOutcome, handleFailure, publishDownstream, settledReport } from './block-effects.js';
import type { ContainerActorInput, ContainerEvent } from './iteration.js';
import { loopMachine } from './loop.js';
import type { ActorGroup } from './group.js';
import type { BlockReport, InboxMessage } from './messages.js';
import { parallelMachine } from './parallel.js';

/** What a parent hands a block actor: the static parts of its run plus where to talk. */
export interface BlockActorInput {
  bus: Bus;
  prefix: string;
  /** scope this actor lives in: "root", or a container iteration (`root/loop1/3`) */
  scopeKey: string;
  workflow: CompiledWorkflow;
  block: CompiledBlock;
  run: Omit<BlockRunInput, 'block' | 'scope' | 'emitChunk' | 'type'>;
  blockTypes: Readonly<Record<string, AnyBlockType>>;
  variables: Readonly<Record<string, unknown>>;
  loop?: IterationScope;
  parallel?: IterationScope;
  iteration: IterationRef | null;
  /** outputs known before any input arrives (a container's children get what reached the container) */
  known?: Record<string, unknown>;
  /** the actors of this execution (containers spawn their iterations into it) */
  group: ActorGroup;
  /** aborted when the scope ends: the execution, or the container iteration set this block is in */
  signal: AbortSignal;
  /** how this actor tells its parent (execution or container actor) what happened */
  report(event: BlockReport | ContainerEvent): void;
}

export interface BlockContext extends BlockActorInput {
  /** per incoming connection; mutated in place as messages arrive (the actor's private state) */
  inputs: Map<number, InputState>;
  pending: number;
  active: number;
  known: Record<string, unknown>;
  startedAt: number | null;
  /** a container's resolved config (or the error resolving it) */
  prepared: { config: Record<string, unknown>; recorded: unknown } | { error: unknown } | null;
}

type BlockEvent =
  | { type: 'INPUT'; msg: InboxMessage }
  | { type: 'START' }
  | { type: 'SKIP' }
  | { type: 'CHUNK'; text: string }
  | { type: 'RUN.DONE'; outcome: BlockOutcome };

function typeOf(ctx: BlockContext): AnyBlockType {
  const type = ctx.blockTypes[ctx.block.type];
  if (type === undefined) throw new Error(`no block type "${ctx.block.type}" registered`);
  return type;
}

export function scopeOf(ctx: BlockContext): ReferenceScope {
  return {
    outputs: ctx.known,
    blockNames: ctx.workflow.blockNames,
    variables: ctx.variables,
    ...(ctx.loop ? { loop: ctx.loop } : {}),
    ...(ctx.parallel ? { parallel: ctx.parallel } : {}),
  };
}

function prepareContainer(ctx: BlockContext): BlockContext['prepared'] {
  try {
    const prepared = prepareConfig({ block: ctx.block, scope: scopeOf(ctx), secrets: ctx.run.secrets, type: typeOf(ctx) });
    return { config: prepared.config as Record<string, unknown>, recorded: prepared.recorded };
  } catch (error) {
    return { error };
  }
}

function containerInput(ctx: BlockContext): ContainerActorInput {
  const prepared = ctx.prepared !== null && 'config' in ctx.prepared ? ctx.prepared.config : {};
  return { owner: { ...ctx, known: ctx.known }, config: prepared, blockLogic: blockMachine };
}

/** Publishes downstream, then returns the report for the parent. */
function settleWith(context: BlockContext, outcome: BlockOutcome): BlockReport {
  const handled = handleFailure(context, outcome);
  const activated = handled.kind === 'completed' ? publishDownstream(context, handled.handles, handled.output) : [];
  return settledReport(context, handled, activated);
}

/**
 * Runs the block's task. A plain promise rather than an invoked promise actor (one actor less per
 * block); cancellation comes from the scope's signal, and a result that arrives after the actor
 * stopped is dropped.
 */
function startTask(context: BlockContext, self: { send(e: BlockEvent): void; getSnapshot(): { status: string } }): void {
  const active = (): boolean => self.getSnapshot().status === 'active';
  const run: BlockRunInput = {
    ...context.run,
    type: typeOf(context) as BlockType<any>,
    block: context.block,
    scope: scopeOf(context),
    emitChunk: (text) => {
      if (active()) context.report({ type: 'BLOCK.CHUNK', blockId: context.block.id, text });
    },
  };
  void runBlock(run, context.signal).then((outcome) => {
    if (active()) self.send({ type: 'RUN.DONE', outcome });
  });
}

export const blockMachine = setup({
  types: { context: {} as BlockContext, input: {} as BlockActorInput, events: {} as BlockEvent },
  actors: {
    loop: loopMachine,
    parallel: parallelMachine,
  },
  actions: {
    prepareContainer: assign({ prepared: ({ context }) => prepareContainer(context) }),
  },
  guards: {
    ready: ({ context }) => readinessFromCounts(context.inputs.size, context.pending, context.active) === 'run',
    readyContainer: ({ context }) => readinessFromCounts(context.inputs.size, context.pending, context.active) === 'run' && isContainerType(typeOf(context)),
    dead: ({ context }) => readinessFromCounts(context.inputs.size, context.pending, context.active) === 'skip',
    container: ({ context }) => isContainerType(typeOf(context)),
    badContainerConfig: ({ context }) => context.prepared !== null && 'error' in context.prepared,
    isLoop: ({ context }) => context.block.type === 'loop',
  },
}).createMachine({
  id: 'block',
  context: ({ input }) => ({
    ...input,
    inputs: new Map(input.block.incoming.map((c) => [c.index, 'pending' as InputState])),
    pending: input.block.incoming.length,
    active: 0,
    known: { ...(input.known ?? {}) },
    startedAt: null,
    prepared: null,
  }),
  initial: 'waiting',
  states: {
    waiting: {
      always: [
        { guard: 'readyContainer', target: '#block.running.container', actions: 'prepareContainer' },
        { guard: 'ready', target: '#block.running.task' },
        { guard: 'dead', target: 'skipped' },
      ],
      on: {
        START: [
          { guard: 'container', target: '#block.running.container', actions: 'prepareContainer' },
          { target: '#block.running.task' },
        ],
        SKIP: 'skipped',
        INPUT: {
          actions: assign(({ context, event }) => {
            const { c, a, o } = event.msg;
            if (context.inputs.get(c) !== 'pending') return {};
            context.inputs.set(c, a ? 'active' : 'inactive');
            Object.assign(context.known, o);
            return { pending: context.pending - 1, active: context.active + (a ? 1 : 0) };
          }),
        },
      },
    },
    running: {
      entry: [
        assign({ startedAt: () => Date.now() }),
        ({ context }) => context.report({ type: 'BLOCK.STARTED', blockId: context.block.id, at: context.startedAt ?? Date.now(), iteration: context.iteration }),
      ],
      // entered only through #block.running.task or #block.running.container
      initial: 'task',
      states: {
        task: {
          entry: ({ context, self }) => startTask(context, self),
          on: { 'RUN.DONE': { target: '#block.settled', actions: ({ context, event }) => context.report(settleWith(context, event.outcome)) } },
        },
        // the container actor reports through context.report (passed on in its input)
        container: {
          initial: 'starting',
          states: {
            starting: {
              always: [
                { guard: 'badContainerConfig', target: 'broken' },
                { guard: 'isLoop', target: 'loop' },
                { target: 'parallel' },
              ],
            },
            broken: {
              always: {
                target: '#block.settled',
                actions: ({ context }) => {
                  const error = context.prepared !== null && 'error' in context.prepared ? context.prepared.error : null;
                  context.report(settleWith(context, containerOutcome(context, { ok: false, results: [], error: null }, error)));
                },
              },
            },
            loop: {
              invoke: {
                src: 'loop',
                input: ({ context }) => containerInput(context),
                onDone: { target: '#block.settled', actions: ({ context, event }) => context.report(settleWith(context, containerOutcome(context, event.output, null))) },
              },
            },
            parallel: {
              invoke: {
                src: 'parallel',
                input: ({ context }) => containerInput(context),
                onDone: { target: '#block.settled', actions: ({ context, event }) => context.report(settleWith(context, containerOutcome(context, event.output, null))) },
              },
            },
          },
        },
      },
    },
    // Settled actors stay alive (not final) until the execution ends and stops them all at
    // once: XState copies the parent's children map on every stop, which made each settle O(n).
    skipped: {
      entry: ({ context }) => {
        publishDownstream(context, [], null);
        context.report(settledReport(context, null, []));
      },
    },
    settled: {},
  },
});

