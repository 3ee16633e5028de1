import { assign, enqueueActions, sendParent, setup } from 'xstate';
import type { ErrorInfo } from '../src/errors.js';
import { branchesToStart, collectionItems, countOf } from '../src/model/iteration.js';
import {
  childFailure,
  isOwnChild,
  iterationChildren,
  newProgress,
  settleChild,
  type ContainerActorInput,
  type ContainerEvent,
  type ContainerOutput,
  type IterationProgress,
} from './iteration.js';

interface ParallelContext extends ContainerActorInput {
  items: unknown[];
  total: number;
  concurrency: number;
  nextIndex: number;
  running: Map<number, IterationProgress>;
  finished: number;
  results: Record<string, Record<string, unknown>>[];
  error: ErrorInfo | null;
}

function plan(config: Record<string, unknown>): Pick<ParallelContext, 'items' | 'total' | 'concurrency' | 'error'> {
  const concurrency = (config['concurrency'] as number | undefined) ?? 20;
  if (config['kind'] === 'count') {
    const count = countOf(config['count'], 'count');
    return count.ok
      ? { items: [], total: count.count, concurrency, error: null }
      : { items: [], total: 0, concurrency, error: { code: 'INVALID_CONFIG', message: count.message } };
  }
  const items = collectionItems(config['items']);
  return items.ok
    ? { items: items.items, total: items.items.length, concurrency, error: null }
    : { items: [], total: 0, concurrency, error: { code: 'INVALID_CONFIG', message: items.message } };
}

/** The part of XState's `enqueue` that startBranches uses. */
interface Enqueue {
  assign(values: Partial<ParallelContext>): void;
  sendParent(event: ContainerEvent): void;
  spawnChild(logic: ContainerActorInput['blockLogic'], options: { id: string; input: unknown }): void;
  sendTo(actorId: string, event: { type: 'START' }): void;
}

/** Starts as many branches as the concurrency limit allows, in index order. */
function startBranches(ctx: ParallelContext, enqueue: Enqueue): void {
  const indexes = branchesToStart(ctx.total, ctx.nextIndex, ctx.running.size, ctx.concurrency);
  if (indexes.length === 0) return;
  const running = new Map(ctx.running);
  const results = [...ctx.results];
  let finished = ctx.finished;
  for (const index of indexes) {
    const scope = { index, item: ctx.items.length > 0 ? ctx.items[index] : index, items: ctx.items };
    const children = iterationChildren(ctx, index, { parallel: scope, ...(ctx.owner.loop ? { loop: ctx.owner.loop } : {}) });
    enqueue.sendParent({ type: 'CONTAINER.ITERATION', containerId: ctx.owner.block.id, index, phase: 'started', total: ctx.total });
    if (children.length === 0) {
      results[index] = {};
      finished += 1;
      continue;
    }
    running.set(index, newProgress(ctx.owner));
    for (const c of children) enqueue.spawnChild(ctx.blockLogic, { id: c.actorId, input: c.input });
    for (const c of children) if (c.starts) enqueue.sendTo(c.actorId, { type: 'START' });
  }
  const nextIndex = (indexes[indexes.length - 1] ?? ctx.nextIndex) + 1;
  enqueue.assign({ running, results, finished, nextIndex });
}

export const parallelMachine = setup({
  types: { context: {} as ParallelContext, input: {} as ContainerActorInput, events: {} as ContainerEvent, output: {} as ContainerOutput },
  guards: {
    broken: ({ context }) => context.error !== null,
    allDone: ({ context }) => context.finished >= context.total,
  },
}).createMachine({
  id: 'parallel',
  context: ({ input }) => ({ ...input, ...plan(input.config), nextIndex: 0, running: new Map(), finished: 0, results: [] }),
  initial: 'checking',
  states: {
    checking: {
      always: [{ guard: 'broken', target: 'failed' }, { target: 'running' }],
    },
    running: {
      entry: enqueueActions(({ context, enqueue }) => startBranches(context, enqueue as unknown as Enqueue)),
      always: { guard: 'allDone', target: 'finished' },
      on: {
        'BLOCK.STARTED': { actions: sendParent(({ event }) => event) },
        'BLOCK.CHUNK': { actions: sendParent(({ event }) => event) },
        'CONTAINER.ITERATION': { actions: sendParent(({ event }) => event) },
        'BLOCK.SETTLED': [
          { guard: ({ context, event }) => !isOwnChild(context.owner, event), actions: sendParent(({ event }) => event) },
          {
            guard: ({ event }) => childFailure(event) !== null,
            target: 'failed',
            actions: [sendParent(({ event }) => event), assign({ error: ({ event }) => childFailure(event) })],
          },
          {
            actions: enqueueActions(({ context, event, enqueue }) => {
              enqueue.sendParent(event);
              const index = event.iteration?.index ?? -1;
              const progress = context.running.get(index);
              if (progress === undefined) return;
              const settled = settleChild(context.owner, progress, event);
              const running = new Map(context.running);
              if (settled.result === null) {
                running.set(index, settled.progress);
                enqueue.assign({ running });
                return;
              }
              running.delete(index);
              const results = [...context.results];
              results[index] = settled.result;
              enqueue.sendParent({ type: 'CONTAINER.ITERATION', containerId: context.owner.block.id, index, phase: 'finished', total: context.total, result: settled.result });
              const next = { ...context, running, results, finished: context.finished + 1 };
              enqueue.assign({ running, results, finished: next.finished });
              startBranches(next, enqueue as unknown as Enqueue);
            }),
          },
        ],
      },
    },
    finished: { type: 'final' },
    failed: { type: 'final' },
  },
  output: ({ context }) => ({ ok: context.error === null, results: context.results, error: context.error }),
});

