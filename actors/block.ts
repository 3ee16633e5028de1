import { assign, enqueueActions, fromCallback, fromPromise, sendParent, setup } from 'xstate';
import type { BlockType } from '../src/blocks/types.js';
import type { Bus } from '../src/bus/types.js';
import type { ErrorInfo } from '../src/errors.js';
import { blockInbox } from '../src/bus/subjects.js';
import type { CompiledBlock, CompiledWorkflow } from '../src/model/graph.js';
import { activatedConnections, decideReadiness, type InputState } from '../src/model/readiness.js';
import type { IterationScope, ReferenceScope } from '../src/model/references.js';
import { runBlock, type BlockOutcome, type BlockRunInput } from '../src/runtime/run-block.js';
import type { IterationRef } from '../src/runtime/types.js';
import type { BlockReport, InboxMessage } from './messages.js';

/** What a parent hands a block actor: the static parts of its run plus where to talk. */
export interface BlockActorInput {
  bus: Bus;
  prefix: string;
  /** subject token of the scope this actor lives in: "root", or a container iteration */
  scopeKey: string;
  workflow: CompiledWorkflow;
  block: CompiledBlock;
  run: Omit<BlockRunInput, 'block' | 'scope' | 'emitChunk' | 'type'>;
  blockTypes: Readonly<Record<string, BlockType<any>>>;
  variables: Readonly<Record<string, unknown>>;
  loop?: IterationScope;
  parallel?: IterationScope;
  iteration: IterationRef | null;
  /** outputs known before any input arrives (a container's children get what reached the container) */
  known?: Record<string, unknown>;
}

interface BlockContext extends BlockActorInput {
  inputs: Map<number, InputState>;
  known: Record<string, unknown>;
  startedAt: number | null;
}

type BlockEvent =
  | { type: 'INPUT'; msg: InboxMessage }
  | { type: 'START' }
  | { type: 'CHUNK'; text: string };

function initialInputs(block: CompiledBlock): Map<number, InputState> {
  return new Map(block.incoming.map((c) => [c.index, 'pending' as InputState]));
}

function blockTypeOf(ctx: BlockContext): BlockType<any> {
  const type = ctx.blockTypes[ctx.block.type];
  if (type === undefined) throw new Error(`no block type "${ctx.block.type}" registered`);
  return type;
}

function scopeOf(ctx: BlockContext): ReferenceScope {
  return {
    outputs: ctx.known,
    blockNames: ctx.workflow.blockNames,
    variables: ctx.variables,
    ...(ctx.loop ? { loop: ctx.loop } : {}),
    ...(ctx.parallel ? { parallel: ctx.parallel } : {}),
  };
}

/** Tell every downstream inbox whether our connection to it is active, with what it must carry. */
function publishDownstream(ctx: BlockContext, handles: readonly string[], own: Record<string, unknown> | null): number[] {
  const known = own === null ? ctx.known : { ...ctx.known, [ctx.block.normName]: own };
  const { active } = activatedConnections(ctx.block, [...handles]);
  const activeSet = new Set(active.map((c) => c.index));
  for (const conn of ctx.block.outgoing) {
    const carried: Record<string, unknown> = {};
    for (const name of ctx.workflow.carry.get(conn.index) ?? []) {
      if (name in known) carried[name] = known[name];
    }
    const msg: InboxMessage = { t: 'in', c: conn.index, a: activeSet.has(conn.index), o: carried };
    ctx.bus.publish(blockInbox(ctx.prefix, ctx.run.executionId, ctx.scopeKey, conn.to), msg);
  }
  return [...activeSet];
}

function settledReport(ctx: BlockContext, outcome: BlockOutcome | null, activated: number[]): BlockReport {
  const base = { type: 'BLOCK.SETTLED' as const, blockId: ctx.block.id, iteration: ctx.iteration, startedAt: ctx.startedAt, endedAt: Date.now(), activated };
  if (outcome === null) {
    return { ...base, status: 'skipped', input: null, output: null, error: null, errorHandled: false, attempts: 0 };
  }
  if (outcome.kind === 'completed') {
    const error = outcome.errorHandled ? ((outcome.output['error'] as ErrorInfo | null | undefined) ?? null) : null;
    const status = outcome.fromFailure === true ? 'failed' : 'completed';
    return { ...base, status, input: outcome.input, output: outcome.output, error, errorHandled: outcome.errorHandled, attempts: outcome.attempts };
  }
  return { ...base, status: 'failed', input: outcome.input, output: null, error: outcome.error, errorHandled: false, attempts: outcome.attempts };
}

/** A failure with an error connection becomes output `{ error }` on the `error` handle (SPEC §2). */
function handleFailure(ctx: BlockContext, outcome: BlockOutcome): BlockOutcome {
  if (outcome.kind !== 'failed' || !ctx.block.hasErrorConnection) return outcome;
  const { code, message } = outcome.error;
  return {
    kind: 'completed',
    output: { error: { code, message } },
    handles: ['error'],
    input: outcome.input,
    attempts: outcome.attempts,
    errorHandled: true,
    fromFailure: true,
  };
}

export const blockMachine = setup({
  types: {
    context: {} as BlockContext,
    input: {} as BlockActorInput,
    events: {} as BlockEvent,
  },
  actors: {
    inbox: fromCallback<BlockEvent, { bus: Bus; subject: string }>(({ input, sendBack }) => {
      const sub = input.bus.subscribe<InboxMessage>(input.subject, (m) => sendBack({ type: 'INPUT', msg: m.data }));
      return () => sub.unsubscribe();
    }),
    run: fromPromise<BlockOutcome, { run: BlockRunInput }>(({ input, signal }) => runBlock(input.run, signal)),
  },
  guards: {
    ready: ({ context }) => decideReadiness([...context.inputs.values()]) === 'run',
    dead: ({ context }) => context.inputs.size > 0 && decideReadiness([...context.inputs.values()]) === 'skip',
  },
}).createMachine({
  id: 'block',
  context: ({ input }) => ({ ...input, inputs: initialInputs(input.block), known: { ...(input.known ?? {}) }, startedAt: null }),
  invoke: {
    src: 'inbox',
    input: ({ context }) => ({
      bus: context.bus,
      subject: blockInbox(context.prefix, context.run.executionId, context.scopeKey, context.block.id),
    }),
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
        sendParent(({ context }): BlockReport => ({ type: 'BLOCK.STARTED', blockId: context.block.id, at: context.startedAt ?? Date.now(), iteration: context.iteration })),
      ],
      on: {
        CHUNK: { actions: sendParent(({ context, event }): BlockReport => ({ type: 'BLOCK.CHUNK', blockId: context.block.id, text: event.text })) },
      },
      invoke: {
        src: 'run',
        input: ({ context, self }) => ({
          run: {
            ...context.run,
            type: blockTypeOf(context),
            block: context.block,
            scope: scopeOf(context),
            emitChunk: (text: string) => self.send({ type: 'CHUNK', text }),
          },
        }),
        onDone: {
          target: 'settled',
          actions: enqueueActions(({ context, event, enqueue }) => {
            const outcome = handleFailure(context, event.output);
            const activated = outcome.kind === 'completed' ? publishDownstream(context, outcome.handles, outcome.output) : [];
            enqueue.sendParent(settledReport(context, outcome, activated));
          }),
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
