import { assign, enqueueActions, setup } from 'xstate';
import type { CancelScope } from './cancel-scope.js';
import type { ErrorInfo } from '../src/errors.js';
import { branchesToStart, collectionItems, countOf } from '../src/model/iteration.js';
import {
  childFailure,
  reportIteration,
  routeReports,
  settleChild,
  spawnIteration,
  closeIteration,
  openBranches,
  planBreach,
  releaseBudget,
} from './iteration.js';
import type { BudgetClaim } from '../src/runtime/budget.js';
import type { ContainerActorInput, ContainerMachineEvent, ContainerOutput, IterationProgress } from './block-input.js';
import { SCOPE_ENDED } from './messages.js';

interface ParallelContext extends ContainerActorInput {
  /** aborts every running branch when the parallel ends */
  cancel: CancelScope;
  items: unknown[];
  total: number;
  concurrency: number;
  nextIndex: number;
  running: Map<number, IterationProgress>;
  finished: number;
  results: Record<string, Record<string, unknown>>[];
  error: ErrorInfo | null;
  /** what this attempt holds of the execution's budget (branches running, results' bytes) */
  claim: BudgetClaim;
}

type Plan = Pick<ParallelContext, 'items' | 'total' | 'concurrency' | 'error'>;

/** Its branches, or the error that stops it before any: a bad value, or more branches than the execution limit allows. */
function plan(config: Record<string, unknown>, owner: ContainerActorInput['owner']): Plan {
  const planned = branches(config);
  return planned.error === null ? { ...planned, error: planBreach(owner, planned.total) } : planned;
}

function branches(config: Record<string, unknown>): Plan {
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
  (action: () => void): void;
  assign(values: Partial<ParallelContext>): void;
  raise(event: ContainerMachineEvent): void;
}

/** Starts as many branches as the concurrency limit allows, in index order. */
function startBranches(ctx: ParallelContext, enqueue: Enqueue, self: { send(e: ContainerMachineEvent): void }): void {
  const empty = ctx.owner.block.children.length === 0;
  const indexes = branchesToStart(ctx.total, ctx.nextIndex, ctx.running.size, ctx.concurrency, empty);
  if (indexes.length === 0) return;
  const over = empty ? null : openBranches(ctx.owner, ctx.claim, indexes.length);
  if (over !== null) {
    enqueue.raise({ type: 'CONTAINER.ABORT', error: over });
    return;
  }
  const running = new Map(ctx.running);
  const results = ctx.results;
  let finished = ctx.finished;
  const spawn = { report: routeReports(ctx.owner, (e) => self.send(e)), cancel: ctx.cancel };
  for (const index of indexes) {
    enqueue(() => reportIteration(ctx.owner, index, ctx.total));
    if (empty) {
      results[index] = {};
      finished += 1;
      continue;
    }
    const scope = { index, item: ctx.items.length > 0 ? ctx.items[index] : index, items: ctx.items };
    running.set(index, spawnIteration(ctx, index, { parallel: scope, ...(ctx.owner.loop ? { loop: ctx.owner.loop } : {}) }, spawn));
  }
  const nextIndex = (indexes[indexes.length - 1] ?? ctx.nextIndex) + 1;
  enqueue.assign({ running, results, finished, nextIndex });
}

/**
 * Stops every branch still running (a failure ends the parallel early) and gives back what it
 * held of the budget; the results' bytes stay counted when they live on (`kept`).
 */
function endParallel(ctx: ParallelContext, kept: boolean): void {
  ctx.cancel.abort(SCOPE_ENDED);
  for (const progress of ctx.running.values()) ctx.owner.group.stop(progress.keys);
  releaseBudget(ctx.owner, ctx.claim, kept);
}

export const parallelMachine = setup({
  types: { context: {} as ParallelContext, input: {} as ContainerActorInput, events: {} as ContainerMachineEvent, output: {} as ContainerOutput },
  guards: {
    broken: ({ context }) => context.error !== null,
    allDone: ({ context }) => context.finished >= context.total,
  },
}).createMachine({
  id: 'parallel',
  context: ({ input }) => ({
    ...input,
    ...plan(input.config, input.owner),
    claim: input.claim,
    cancel: input.owner.cancel.child(),
    nextIndex: 0,
    running: new Map(),
    finished: 0,
    results: [],
  }),
  initial: 'checking',
  // the block's time limit: ends this attempt wherever it is (the final states ignore it)
  on: {
    'CONTAINER.ABORT': { target: '.failed', actions: assign({ error: ({ event }) => event.error }) },
  },
  states: {
    checking: {
      always: [{ guard: 'broken', target: 'failed' }, { target: 'running' }],
    },
    running: {
      entry: enqueueActions(({ context, enqueue, self }) => startBranches(context, enqueue as unknown as Enqueue, self)),
      always: { guard: 'allDone', target: 'finished' },
      on: {
        // settles of this container's own children arrive here, and a halt when a response completed inside (routeReports)
        'CONTAINER.HALT': { target: 'responded' },
        'BLOCK.SETTLED': [
          {
            guard: ({ event }) => childFailure(event) !== null,
            target: 'failed',
            actions: [({ context, event }) => context.owner.report(event), assign({ error: ({ event }) => childFailure(event) })],
          },
          {
            actions: enqueueActions(({ context, event, enqueue, self }) => {
              enqueue(() => context.owner.report(event));
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
              context.owner.group.stop(progress.keys);
              const over = closeIteration(context.owner, context.claim, settled.result);
              if (over !== null) {
                enqueue.raise({ type: 'CONTAINER.ABORT', error: over });
                return;
              }
              // written in place: a copy per branch made a large parallel quadratic
              const results = context.results;
              results[index] = settled.result;
              enqueue(() => reportIteration(context.owner, index, context.total, settled.result));
              const next = { ...context, running, results, finished: context.finished + 1 };
              enqueue.assign({ running, results, finished: next.finished });
              startBranches(next, enqueue as unknown as Enqueue, self);
            }),
          },
        ],
      },
    },
    // not final: a final state would settle the parallel block; the execution's end stops it
    responded: { entry: ({ context }) => endParallel(context, false) },
    finished: { type: 'final', entry: ({ context }) => endParallel(context, true) },
    failed: { type: 'final', entry: ({ context }) => endParallel(context, false) },
  },
  output: ({ context }) => ({ ok: context.error === null, results: context.results, error: context.error }),
});

