import { setMaxListeners } from 'node:events';
import { assign, fromCallback, setup } from 'xstate';
import type { Bus } from '../src/bus/types.js';
import { executionControl, executionInboxes } from '../src/bus/subjects.js';
import type { CompiledWorkflow } from '../src/model/graph.js';
import { startDecision } from '../src/model/readiness.js';
import {
  asResponse,
  buildResult,
  ExecutionLedger,
  executionError,
  finalOutput,
  type ExecutionContextData,
} from '../src/runtime/execution-state.js';
import type { ExecutionError, ExecutionEvent, ExecutionResult, ResponseOutput } from '../src/runtime/types.js';
import { blockMachine, type BlockActorInput } from './block.js';
import { ActorGroup } from './group.js';
import type { ContainerEvent } from './iteration.js';
import { inboxKey, type BlockReport, type InboxMessage } from './messages.js';

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
  notify(event: ExecutionEvent): void;
}

interface ExecutionContext extends ExecutionActorInput {
  startedAt: number;
  /** every block actor of the execution, by inbox key */
  group: ActorGroup;
  /** aborted when the execution ends: cancels running blocks */
  controller: AbortController;
  /** mutated in place (see ExecutionLedger) */
  ledger: ExecutionLedger;
  response: ResponseOutput | null;
  error: ExecutionError | null;
  result: ExecutionResult | null;
}

type ExecutionEventIn = ContainerEvent | { type: 'CANCEL' };
type Settled = Extract<BlockReport, { type: 'BLOCK.SETTLED' }>;

function blockInput(ctx: ExecutionContext, blockId: string, report: BlockActorInput['report']): BlockActorInput {
  const block = ctx.workflow.blocks.get(blockId);
  if (block === undefined) throw new Error(`unknown block ${blockId}`);
  return {
    bus: ctx.bus,
    prefix: ctx.prefix,
    scopeKey: 'root',
    workflow: ctx.workflow,
    block,
    run: ctx.blockRun,
    blockTypes: ctx.blockTypes,
    variables: ctx.workflow.variables,
    iteration: null,
    group: ctx.group,
    signal: ctx.controller.signal,
    report,
  };
}

function isFatal(ctx: ExecutionContext, e: Settled): boolean {
  return e.iteration === null && e.status === 'failed' && !e.errorHandled && ctx.workflow.blocks.has(e.blockId);
}

function isResponse(ctx: ExecutionContext, e: Settled): boolean {
  return e.iteration === null && e.status === 'completed' && ctx.workflow.blocks.get(e.blockId)?.type === 'response';
}

/** Every running block listens on the execution's signal: many listeners are expected. */
function unboundedController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

type Started = Extract<BlockReport, { type: 'BLOCK.STARTED' }>;

function recordStart(ctx: ExecutionContext, event: Started): void {
  const log = ctx.ledger.started(event.blockId, event.at, event.iteration);
  ctx.notify({
    type: 'block.started',
    data: { blockId: log.blockId, blockName: log.blockName, blockType: log.blockType, order: log.order, iteration: log.iteration },
  });
}

/** Folds one settled report into the ledger and tells observers. */
function applySettled(ctx: ExecutionContext, e: Settled): void {
  const log = ctx.ledger.settled(e);
  ctx.notify({ type: `block.${e.status}`, data: log });
}

/** Aborts running blocks and stops every block actor; their logs still running become cancelled. */
function stopBlocks({ context }: { context: ExecutionContext }): void {
  context.controller.abort();
  context.group.stopAll();
  context.ledger.cancelRunning(Date.now());
}

function finish(ctx: ExecutionContext, status: ExecutionResult['status'], output: unknown, error: ExecutionError | null): Partial<ExecutionContext> {
  const at = Date.now();
  const base = { id: ctx.executionId, workflowId: ctx.workflowId, version: ctx.version, startedAt: ctx.startedAt };
  return { result: buildResult(base, { status, output, error, response: ctx.response, at }) };
}

export const executionMachine = setup({
  types: {
    context: {} as ExecutionContext,
    input: {} as ExecutionActorInput,
    events: {} as ExecutionEventIn,
    output: {} as { result: ExecutionResult | null; data: ExecutionContextData },
  },
  actors: {
    control: fromCallback<ExecutionEventIn, { bus: Bus; subject: string }>(({ input, sendBack }) => {
      const sub = input.bus.subscribe(input.subject, () => sendBack({ type: 'CANCEL' }));
      return () => sub.unsubscribe();
    }),
    // One subscription for every block inbox of the execution: each message goes to the block
    // actor it names, wherever it sits (top level or inside a container iteration).
    inboxes: fromCallback<ExecutionEventIn, { bus: Bus; subject: string; group: ActorGroup }>(({ input }) => {
      const sub = input.bus.subscribe<InboxMessage>(input.subject, (m) => {
        input.group.send(inboxKey(m.data.s, m.data.b), { type: 'INPUT', msg: m.data });
      });
      return () => sub.unsubscribe();
    }),
  },
  delays: {
    executionTimeout: ({ context }) => context.timeoutMs,
  },
  guards: {
    fatal: ({ context, event }) => event.type === 'BLOCK.SETTLED' && isFatal(context, event),
    response: ({ context, event }) => event.type === 'BLOCK.SETTLED' && isResponse(context, event),
    allSettled: ({ context }) => context.ledger.allSettled,
  },
}).createMachine({
  id: 'execution',
  context: ({ input }) => ({
    ...input,
    startedAt: Date.now(),
    group: new ActorGroup(),
    controller: unboundedController(),
    ledger: new ExecutionLedger(input.workflow),
    response: null,
    error: null,
    result: null,
  }),
  invoke: [
    { src: 'control', input: ({ context }) => ({ bus: context.bus, subject: executionControl(context.prefix, context.executionId) }) },
    { src: 'inboxes', input: ({ context }) => ({ bus: context.bus, subject: executionInboxes(context.prefix, context.executionId), group: context.group }) },
  ],
  initial: 'running',
  states: {
    running: {
      entry: ({ context, self }) => {
        // Starts and chunks change no decision of the execution: they are recorded and passed to
        // observers directly, saving a machine event per block. Everything else is an event.
        const report = (event: BlockReport | ContainerEvent): void => {
          if (event.type === 'BLOCK.STARTED') recordStart(context, event);
          else if (event.type === 'BLOCK.CHUNK') context.notify({ type: 'chunk', data: { blockId: event.blockId, text: event.text } });
          else self.send(event);
        };
        const { group, workflow } = context;
        for (const id of workflow.topLevel) group.spawn(inboxKey('root', id), blockMachine, blockInput(context, id, report));
        for (const id of workflow.topLevel) {
          const decision = startDecision(workflow, id);
          if (decision === 'run') group.send(inboxKey('root', id), { type: 'START' });
          else if (decision === 'skip') group.send(inboxKey('root', id), { type: 'SKIP' });
        }
      },
      after: {
        executionTimeout: {
          target: 'failed',
          actions: assign(({ context }) => ({
            error: { code: 'EXECUTION_TIMEOUT', message: `execution exceeded its ${context.timeoutMs} ms time limit`, blockId: null },
          })),
        },
      },
      always: { guard: 'allSettled', target: 'completed' },
      on: {
        'BLOCK.STARTED': { actions: ({ context, event }) => recordStart(context, event) },
        'BLOCK.SETTLED': [
          {
            guard: 'fatal',
            target: 'failed',
            actions: assign(({ context, event }) => {
              applySettled(context, event);
              return { error: executionError(event.error, event.blockId) };
            }),
          },
          {
            guard: 'response',
            target: 'completed',
            actions: assign(({ context, event }) => {
              applySettled(context, event);
              return { response: asResponse(event.output ?? {}) };
            }),
          },
          { actions: ({ context, event }) => applySettled(context, event) },
        ],
        'CONTAINER.ITERATION': {
          actions: ({ context, event }) => context.ledger.iteration(event),
        },
        'BLOCK.CHUNK': {
          actions: ({ context, event }) => context.notify({ type: 'chunk', data: { blockId: event.blockId, text: event.text } }),
        },
        CANCEL: {
          target: 'cancelled',
          actions: assign({ error: () => ({ code: 'CANCELLED', message: 'execution cancelled', blockId: null }) }),
        },
      },
    },
    completed: {
      type: 'final',
      entry: [
        stopBlocks,
        assign(({ context }) => finish(context, 'completed', context.response ?? finalOutput(context.workflow, context.ledger), null)),
      ],
    },
    failed: {
      type: 'final',
      entry: [stopBlocks, assign(({ context }) => finish(context, 'failed', null, context.error))],
    },
    cancelled: {
      type: 'final',
      entry: [stopBlocks, assign(({ context }) => finish(context, 'cancelled', null, context.error))],
    },
  },
  output: ({ context }) => ({ result: context.result, data: context.ledger.snapshot() }),
});
