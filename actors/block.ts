import { assign, enqueueActions, fromCallback, fromPromise, sendParent, setup } from 'xstate';
import { isContainerType, type AnyBlockType, type BlockType } from '../src/blocks/types.js';
import type { Bus } from '../src/bus/types.js';
import { blockInbox } from '../src/bus/subjects.js';
import type { CompiledBlock, CompiledWorkflow } from '../src/model/graph.js';
import { decideReadiness, type InputState } from '../src/model/readiness.js';
import type { IterationScope, ReferenceScope } from '../src/model/references.js';
import { prepareConfig, runBlock, type BlockOutcome, type BlockRunInput } from '../src/runtime/run-block.js';
import type { IterationRef } from '../src/runtime/types.js';
import { containerOutcome, handleFailure, publishDownstream, settledReport } from './block-effects.js';
import type { ContainerActorInput, ContainerEvent } from './iteration.js';
import { loopMachine } from './loop.js';
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
}

export interface BlockContext extends BlockActorInput {
  inputs: Map<number, InputState>;
  known: Record<string, unknown>;
  startedAt: number | null;
  /** a container's resolved config (or the error resolving it) */
  prepared: { config: Record<string, unknown>; recorded: unknown } | { error: unknown } | null;
}

type BlockEvent = { type: 'INPUT'; msg: InboxMessage } | { type: 'START' } | { type: 'SKIP' } | { type: 'CHUNK'; text: string } | ContainerEvent;

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

function runInput(context: BlockContext, emitChunk: (text: string) => void): { run: BlockRunInput } {
  return { run: { ...context.run, type: typeOf(context) as BlockType<any>, block: context.block, scope: scopeOf(context), emitChunk } };
}

export const blockMachine = setup({
  types: { context: {} as BlockContext, input: {} as BlockActorInput, events: {} as BlockEvent },
  actors: {
    inbox: fromCallback<BlockEvent, { bus: Bus; subject: string }>(({ input, sendBack }) => {
      const sub = input.bus.subscribe<InboxMessage>(input.subject, (m) => sendBack({ type: 'INPUT', msg: m.data }));
      return () => sub.unsubscribe();
    }),
    run: fromPromise<BlockOutcome, { run: BlockRunInput }>(({ input, signal }) => runBlock(input.run, signal)),
    loop: loopMachine,
    parallel: parallelMachine,
  },
  guards: {
    ready: ({ context }) => decideReadiness([...context.inputs.values()]) === 'run',
    dead: ({ context }) => context.inputs.size > 0 && decideReadiness([...context.inputs.values()]) === 'skip',
    container: ({ context }) => isContainerType(typeOf(context)),
    badContainerConfig: ({ context }) => context.prepared !== null && 'error' in context.prepared,
    isLoop: ({ context }) => context.block.type === 'loop',
  },
}).createMachine({
  id: 'block',
  context: ({ input }) => ({ ...input, inputs: new Map(input.block.incoming.map((c) => [c.index, 'pending' as InputState])), known: { ...(input.known ?? {}) }, startedAt: null, prepared: null }),
  invoke: {
    src: 'inbox',
    input: ({ context }) => ({ bus: context.bus, subject: blockInbox(context.prefix, context.run.executionId, context.scopeKey, context.block.id) }),
  },
  initial: 'waiting',
  states: {
    waiting: {
      always: [
        { guard: 'ready', target: 'running' },
        { guard: 'dead', target: 'skipped' },
      ],
      on: {
        START: 'running',
        SKIP: 'skipped',
        INPUT: {
          actions: assign(({ context, event }) => {
            const inputs = new Map(context.inputs);
            if (inputs.get(event.msg.c) === 'pending') inputs.set(event.msg.c, event.msg.a ? 'active' : 'inactive');
            return { inputs, known: { ...context.known, ...event.msg.o } };
          }),
        },
      },
    },
    running: {
      entry: [
        assign({ startedAt: () => Date.now() }),
        sendParent(({ context }) => ({ type: 'BLOCK.STARTED', blockId: context.block.id, at: context.startedAt ?? Date.now(), iteration: context.iteration })),
      ],
      initial: 'choosing',
      states: {
        choosing: {
          always: [
            { guard: 'container', target: 'container', actions: assign({ prepared: ({ context }) => prepareContainer(context) }) },
            { target: 'task' },
          ],
        },
        task: {
          on: { CHUNK: { actions: sendParent(({ context, event }) => ({ type: 'BLOCK.CHUNK', blockId: context.block.id, text: event.text })) } },
          invoke: {
            src: 'run',
            input: ({ context, self }) => runInput(context, (text) => self.send({ type: 'CHUNK', text })),
            onDone: { target: '#block.settled', actions: sendParent(({ context, event }) => settleWith(context, event.output)) },
          },
        },
        container: {
          on: {
            'BLOCK.STARTED': { actions: sendParent(({ event }) => event) },
            'BLOCK.SETTLED': { actions: sendParent(({ event }) => event) },
            'BLOCK.CHUNK': { actions: sendParent(({ event }) => event) },
            'CONTAINER.ITERATION': { actions: sendParent(({ event }) => event) },
          },
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
                actions: sendParent(({ context }) => {
                  const error = context.prepared !== null && 'error' in context.prepared ? context.prepared.error : null;
                  return settleWith(context, containerOutcome(context, { ok: false, results: [], error: null }, error));
                }),
              },
            },
            loop: {
              invoke: {
                src: 'loop',
                input: ({ context }) => containerInput(context),
                onDone: { target: '#block.settled', actions: sendParent(({ context, event }) => settleWith(context, containerOutcome(context, event.output, null))) },
              },
            },
            parallel: {
              invoke: {
                src: 'parallel',
                input: ({ context }) => containerInput(context),
                onDone: { target: '#block.settled', actions: sendParent(({ context, event }) => settleWith(context, containerOutcome(context, event.output, null))) },
              },
            },
          },
        },
      },
    },
    skipped: {
      type: 'final',
      entry: enqueueActions(({ context, enqueue }) => {
        publishDownstream(context, [], null);
        enqueue.sendParent(settledReport(context, null, []));
      }),
    },
    settled: { type: 'final' },
  },
});

