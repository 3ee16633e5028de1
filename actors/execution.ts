import { assign, enqueueActions, fromCallback, setup } from 'xstate';
import type { Bus } from '../src/bus/types.js';
import { executionControl } from '../src/bus/subjects.js';
import type { CompiledWorkflow } from '../src/model/graph.js';
import { startDecision } from '../src/model/readiness.js';
import {
  applyIteration,
  asResponse,
  buildResult,
  cancelRunning,
  decisionOf,
  emptyContextData,
  executionError,
  finalOutput,
  logKey,
  settledLog,
  startedLog,
  type ExecutionContextData,
} from '../src/runtime/execution-state.js';
import type { ExecutionError, ExecutionEvent, ExecutionResult, ResponseOutput } from '../src/runtime/types.js';
import { blockMachine, type BlockActorInput } from './block.js';
import type { ContainerEvent } from './iteration.js';
import type { BlockReport } from './messages.js';

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
  data: ExecutionContextData;
  response: ResponseOutput | null;
  error: ExecutionError | null;
  result: ExecutionResult | null;
}

type ExecutionEventIn = ContainerEvent | { type: 'CANCEL' };
type Settled = Extract<BlockReport, { type: 'BLOCK.SETTLED' }>;

function blockInput(ctx: ExecutionContext, blockId: string): BlockActorInput {
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
  };
}

function isFatal(ctx: ExecutionContext, e: Settled): boolean {
  return e.iteration === null && e.status === 'failed' && !e.errorHandled && ctx.workflow.blocks.has(e.blockId);
}

function isResponse(ctx: ExecutionContext, e: Settled): boolean {
  return e.iteration === null && e.status === 'completed' && ctx.workflow.blocks.get(e.blockId)?.type === 'response';
}

/** Folds one settled report into the execution context and tells observers. */
function applySettled(ctx: ExecutionContext, e: Settled): ExecutionContextData {
  const data = ctx.data;
  const key = logKey(e.blockId, e.iteration);
  const index = data.logs.findIndex((l) => logKey(l.blockId, l.iteration) === key);
  const previous = index >= 0 ? data.logs[index] : undefined;
  const skippedOrder = previous === undefined ? data.nextOrder : previous.order;
  const log = settledLog(ctx.workflow, e, previous, skippedOrder);
  const logs = index >= 0 ? data.logs.map((l, i) => (i === index ? log : l)) : [...data.logs, log];
  ctx.notify({ type: `block.${e.status}`, data: log });
  if (e.iteration !== null) return { ...data, logs };
  const decision = decisionOf(log.blockType, e.output);
  return {
    ...data,
    logs,
    nextOrder: previous === undefined ? data.nextOrder + 1 : data.nextOrder,
    states: { ...data.states, [e.blockId]: e.status },
    outputs: e.output === null ? data.outputs : { ...data.outputs, [e.blockId]: e.output },
    activeConnections: [...data.activeConnections, ...e.activated],
    decisions: decision === undefined ? data.decisions : { ...data.decisions, [e.blockId]: decision },
    settledTopLevel: data.settledTopLevel + 1,
  };
}

function finish(ctx: ExecutionContext, status: ExecutionResult['status'], output: unknown, error: ExecutionError | null): Partial<ExecutionContext> {
  const at = Date.now();
  const data = { ...ctx.data, logs: cancelRunning(ctx.data.logs, at) };
  const result = buildResult({ id: ctx.executionId, workflowId: ctx.workflowId, version: ctx.version, startedAt: ctx.startedAt }, { status, output, error, response: ctx.response, at });
  return { data, result };
}

export const executionMachine = setup({
  types: {
    context: {} as ExecutionContext,
    input: {} as ExecutionActorInput,
    events: {} as ExecutionEventIn,
    output: {} as { result: ExecutionResult | null; data: ExecutionContextData },
  },
  actors: {
    block: blockMachine,
    control: fromCallback<ExecutionEventIn, { bus: Bus; subject: string }>(({ input, sendBack }) => {
      const sub = input.bus.subscribe(input.subject, () => sendBack({ type: 'CANCEL' }));
      return () => sub.unsubscribe();
    }),
  },
  delays: {
    executionTimeout: ({ context }) => context.timeoutMs,
  },
  guards: {
    fatal: ({ context, event }) => event.type === 'BLOCK.SETTLED' && isFatal(context, event),
    response: ({ context, event }) => event.type === 'BLOCK.SETTLED' && isResponse(context, event),
    allSettled: ({ context }) => context.data.settledTopLevel >= context.workflow.topLevel.length,
  },
}).createMachine({
  id: 'execution',
  context: ({ input }) => ({ ...input, startedAt: Date.now(), data: emptyContextData(input.workflow), response: null, error: null, result: null }),
  invoke: {
    src: 'control',
    input: ({ context }) => ({ bus: context.bus, subject: executionControl(context.prefix, context.executionId) }),
  },
  initial: 'running',
  states: {
    running: {
      entry: enqueueActions(({ context, enqueue }) => {
        for (const id of context.workflow.topLevel) enqueue.spawnChild('block', { id, input: blockInput(context, id) });
        for (const id of context.workflow.topLevel) {
          const decision = startDecision(context.workflow, id);
          if (decision === 'run') enqueue.sendTo(id, { type: 'START' });
          else if (decision === 'skip') enqueue.sendTo(id, { type: 'SKIP' });
        }
      }),
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
        'BLOCK.STARTED': {
          actions: assign(({ context, event }) => {
            const log = startedLog(context.workflow, event.blockId, event.at, context.data.nextOrder, event.iteration);
            context.notify({
              type: 'block.started',
              data: { blockId: log.blockId, blockName: log.blockName, blockType: log.blockType, order: log.order, iteration: log.iteration },
            });
            const states = event.iteration === null ? { ...context.data.states, [event.blockId]: 'running' as const } : context.data.states;
            return { data: { ...context.data, logs: [...context.data.logs, log], nextOrder: context.data.nextOrder + 1, states } };
          }),
        },
        'BLOCK.SETTLED': [
          {
            guard: 'fatal',
            target: 'failed',
            actions: assign(({ context, event }) => {
              const data = applySettled(context, event);
              return { data, error: executionError(event.error, event.blockId) };
            }),
          },
          {
            guard: 'response',
            target: 'completed',
            actions: assign(({ context, event }) => ({
              data: applySettled(context, event),
              response: asResponse(event.output ?? {}),
            })),
          },
          { actions: assign(({ context, event }) => ({ data: applySettled(context, event) })) },
        ],
        'CONTAINER.ITERATION': {
          actions: assign(({ context, event }) => ({ data: { ...context.data, iterations: applyIteration(context.data.iterations, event) } })),
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
      entry: assign(({ context }) => {
        const output = context.response ?? finalOutput(context.workflow, context.data);
        return finish(context, 'completed', output, null);
      }),
    },
    failed: {
      type: 'final',
      entry: assign(({ context }) => finish(context, 'failed', null, context.error)),
    },
    cancelled: {
      type: 'final',
      entry: assign(({ context }) => finish(context, 'cancelled', null, context.error)),
    },
  },
  output: ({ context }) => ({ result: context.result, data: context.data }),
});
