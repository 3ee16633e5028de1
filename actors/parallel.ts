import { assign, enqueueActions, setup } from 'xstate';
import type { CancelScope } from './cancel-scope.js';
import type { ErrorInfo } from '../src/errors.js';
import { branchesToStart, collectionItems, countOf } from '../src/model/iteration.js';
import {
  childFailure,
  reportIteration,
  routeReports,
  settleChild,
  planIteration,
  startIteration,
  closeIteration,
  openBranches,
  planBreach,
  releaseBudget,
  resultsOf,
  withResult,
  type ResultList,
} from './iteration.js';
import type { BudgetClaim } from '../src/runtime/budget.js';
import type { ContainerActorInput, ContainerMachineEvent, ContainerOutput, IterationProgress } from './block-input.js';
import { SCOPE_ENDED } from './messages.js';
import { emptySlots, getSlot, slotValues, withoutSlot, withSlot, type Slots } from '../src/model/slots.js';

interface ParallelContext extends ContainerActorInput {
  /** aborts every running branch when the parallel ends */
  cancel: CancelScope;
  items: unknown[];
  total: number;
  concurrency: number;
  nextIndex: number;
  /** the running branches by index (immutable: a settle copies one path, not every branch) */
  running: Slots<IterationProgress>;
  finished: number;
  /** the finished branches' results (ordered by index in the output) */
  results: ResultList;
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

/** What a settle or a start changes of the context (assigned). */
type Progress = Pick<ParallelContext, 'running' | 'results' | 'finished' | 'nextIndex'>;

/** What starting branches changes (assigned) and does (actions, in order), or the limit it hits. */
interface BranchStart {
  next: Progress;
  actions: (() => void)[];
  over: ErrorInfo | null;
}

/**
 * Starts as many branches as the concurrency limit allows, in index order, from `from` (the
 * context's progress, or what a settle has just made of it): decided here, spawned by the
 * returned actions.
 */
function startBranches(ctx: ParallelContext, from: Progress, self: { send(e: ContainerMachineEvent): void }): BranchStart {
  const next: Progress = { running: from.running, results: from.results, finished: from.finished, nextIndex: from.nextIndex };
  const empty = ctx.owner.block.children.length === 0;
  const indexes = branchesToStart(ctx.total, from.nextIndex, from.running.size, ctx.concurrency, empty);
  if (indexes.length === 0) return { next, actions: [], over: null };
  const over = empty ? null : openBranches(ctx.owner, ctx.claim, indexes.length);
  if (over !== null) return { next, actions: [], over };
  let running = from.running;
  const actions: (() => void)[] = [];
  const spawn = { report: routeReports(ctx.owner, (e) => self.send(e)), cancel: ctx.cancel };
  for (const index of indexes) {
    actions.push(() => reportIteration(ctx.owner, index, ctx.total));
    if (empty) {
      next.results = withResult(next.results, index, {});
      next.finished += 1;
      continue;
    }
    const scope = { index, item: ctx.items.length > 0 ? ctx.items[index] : index, items: ctx.items };
    const planned = planIteration(ctx, index, { parallel: scope, ...(ctx.owner.loop ? { loop: ctx.owner.loop } : {}) }, spawn);
    running = withSlot(running, index, planned.progress);
    actions.push(() => startIteration(ctx.owner, ctx.blockLogic, planned));
  }
  next.running = running;
  next.nextIndex = (indexes[indexes.length - 1] ?? from.nextIndex) + 1;
  return { next, actions, over: null };
}

/**
 * Stops every branch still running (a failure ends the parallel early) and gives back what it
 * held of the budget; the results' bytes stay counted when they live on (`kept`).
 */
function endParallel(ctx: ParallelContext, kept: boolean): void {
  ctx.cancel.abort(SCOPE_ENDED);
  for (const progress of slotValues(ctx.running)) ctx.owner.group.stop(progress.keys);
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
  context: ({ input }) => {
    const planned = plan(input.config, input.owner);
    return {
      ...input,
      ...planned,
      claim: input.claim,
      cancel: input.owner.cancel.child(),
      nextIndex: 0,
      running: emptySlots(planned.total),
      finished: 0,
      results: null,
    };
  },
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
      entry: enqueueActions(({ context, enqueue, self }) => {
        const started = startBranches(context, context, self);
        if (started.over !== null) {
          enqueue.raise({ type: 'CONTAINER.ABORT', error: started.over });
          return;
        }
        enqueue.assign(started.next);
        for (const action of started.actions) enqueue(action);
      }),
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
              const progress = getSlot(context.running, index);
              if (progress === undefined) return;
              const settled = settleChild(context.owner, progress, event);
              if (settled.result === null) {
                enqueue.assign({ running: withSlot(context.running, index, settled.progress) });
                return;
              }
              const running = withoutSlot(context.running, index);
              enqueue(() => context.owner.group.stop(progress.keys));
              const over = closeIteration(context.owner, context.claim, settled.result);
              if (over !== null) {
                enqueue.raise({ type: 'CONTAINER.ABORT', error: over });
                return;
              }
              const result = settled.result;
              enqueue(() => reportIteration(context.owner, index, context.total, result));
              const branchDone = { running, results: withResult(context.results, index, result), finished: context.finished + 1, nextIndex: context.nextIndex };
              const started = startBranches(context, branchDone, self);
              if (started.over !== null) {
                enqueue.assign({ running, results: branchDone.results, finished: branchDone.finished });
                enqueue.raise({ type: 'CONTAINER.ABORT', error: started.over });
                return;
              }
              enqueue.assign(started.next);
              for (const action of started.actions) enqueue(action);
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
  output: ({ context }) => ({ ok: context.error === null, results: resultsOf(context.results), error: context.error }),
});

