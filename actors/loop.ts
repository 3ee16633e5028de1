import { assign, enqueueActions, fromPromise, setup } from 'xstate';
import type { CancelScope } from './cancel-scope.js';
import { errorInfo, type ErrorInfo } from '../src/errors.js';
import { evaluateInProcess } from '../src/model/expression/index.js';
import { collectionItems, countOf, loopStep, type LoopKind, type LoopStep } from '../src/model/iteration.js';
import { bindCode, type IterationScope, type ReferenceScope } from '../src/model/references.js';
import {
  childFailure,
  reportIteration,
  routeReports,
  settleChild,
  planIteration,
  startIteration,
  resultsOf,
  withResult,
  type ResultList,
  closeIteration,
  openBranches,
  planBreach,
  releaseBudget,
} from './iteration.js';
import type { BudgetClaim } from '../src/runtime/budget.js';
import type { ContainerActorInput, ContainerMachineEvent, ContainerOutput, IterationProgress } from './block-input.js';
import { SCOPE_ENDED } from './messages.js';

interface LoopContext extends ContainerActorInput {
  /** aborts this loop's running children when it ends */
  cancel: CancelScope;
  kind: LoopKind;
  items: unknown[];
  total: number | null;
  maxIterations: number;
  done: number;
  holds: boolean | undefined;
  progress: IterationProgress | null;
  lastOutputs: Record<string, unknown>;
  /** the finished iterations' results (in order in the output) */
  results: ResultList;
  error: ErrorInfo | null;
  /** the failure is decided by the config alone (see LoopStep): not worth a retry */
  repeats: boolean;
  /** what this attempt holds of the execution's budget (iterations running, results' bytes) */
  claim: BudgetClaim;
  /** a while loop's maxIterations was above the execution limit, which stops it instead */
  capped: boolean;
}

type Plan = Pick<LoopContext, 'kind' | 'items' | 'total' | 'maxIterations' | 'error' | 'capped'>;

/**
 * Items and count of a for/forEach loop, or the error that stops it before any iteration: a bad
 * value, or more iterations than the execution limit allows. A while loop stops at that limit.
 */
function plan(config: Record<string, unknown>, owner: ContainerActorInput['owner']): Plan {
  const kind = config['kind'] as LoopKind;
  const own = (config['maxIterations'] as number | undefined) ?? 1000;
  const limit = owner.budget.limits.maxIterations;
  const base = { kind, maxIterations: Math.min(own, limit), capped: own > limit, items: [] as unknown[], total: null as number | null, error: null as ErrorInfo | null };
  const planned = counted(config, base);
  return planned.error === null ? { ...planned, error: planBreach(owner, planned.total) } : planned;
}

function counted(config: Record<string, unknown>, base: Plan): Plan {
  if (base.kind === 'for') {
    const count = countOf(config['iterations'], 'iterations');
    return count.ok ? { ...base, total: count.count } : { ...base, error: { code: 'INVALID_CONFIG', message: count.message } };
  }
  if (base.kind === 'forEach') {
    const items = collectionItems(config['items']);
    return items.ok ? { ...base, items: items.items, total: items.items.length } : { ...base, error: { code: 'INVALID_CONFIG', message: items.message } };
  }
  return base;
}

/** Why the loop stops without finishing: its own maxIterations, or the execution limit standing in for it. */
function stopError(ctx: LoopContext): Pick<LoopContext, 'error' | 'repeats'> {
  const s = step(ctx);
  const fail = s.next === 'fail' ? s : { message: 'loop stopped', repeats: false };
  const over = ctx.capped ? planBreach(ctx.owner, ctx.done + 1) : null;
  if (over !== null) return { error: over, repeats: true };
  return { error: { code: 'MAX_ITERATIONS', message: fail.message }, repeats: fail.repeats };
}

function loopScope(ctx: LoopContext, index: number): IterationScope {
  return { index, item: ctx.kind === 'forEach' ? ctx.items[index] : ctx.kind === 'for' ? index : null, items: ctx.items };
}

function step(ctx: LoopContext): LoopStep {
  return loopStep({ kind: ctx.kind, done: ctx.done, total: ctx.total, maxIterations: ctx.maxIterations }, ctx.holds);
}

function conditionScope(ctx: LoopContext): ReferenceScope {
  const owner = ctx.owner;
  return {
    outputs: { ...(owner.known ?? {}), ...ctx.lastOutputs },
    blockNames: owner.workflow.blockNames,
    variables: owner.variables,
    loop: loopScope(ctx, ctx.done),
    ...(owner.parallel ? { parallel: owner.parallel } : {}),
  };
}

/**
 * Stops whatever still runs in the current iteration (a failure ends the loop early) and gives
 * back what it held of the budget; the results' bytes stay counted when they live on (`kept`).
 */
function endLoop(ctx: LoopContext, kept: boolean): void {
  ctx.cancel.abort(SCOPE_ENDED);
  if (ctx.progress !== null) ctx.owner.group.stop(ctx.progress.keys);
  releaseBudget(ctx.owner, ctx.claim, kept);
}

export const loopMachine = setup({
  types: { context: {} as LoopContext, input: {} as ContainerActorInput, events: {} as ContainerMachineEvent, output: {} as ContainerOutput },
  actors: {
    condition: fromPromise<boolean, { ctx: LoopContext }>(async ({ input, signal }) => {
      const { ctx } = input;
      const services = ctx.owner.run.services;
      const bound = bindCode(String(ctx.config['condition']), conditionScope(ctx));
      const quick = signal.aborted ? undefined : evaluateInProcess(bound.source, bound.bindings);
      if (quick?.done === true) return Boolean(quick.value);
      const value = await services.sandbox.evaluate(bound.source, bound.bindings, {
        timeoutMs: services.functionTimeoutMs,
        memoryMb: services.functionMemoryMb,
        signal,
        // the workflow's hardened realm: without a caller each call builds and freezes one
        caller: { workflowId: ctx.owner.run.workflowId },
      });
      return Boolean(value);
    }),
  },
  guards: {
    broken: ({ context }) => context.error !== null,
    iterate: ({ context }) => step(context).next === 'iterate',
    evaluate: ({ context }) => step(context).next === 'evaluate',
    finish: ({ context }) => step(context).next === 'finish',
  },
}).createMachine({
  id: 'loop',
  context: ({ input }) => ({
    ...input,
    ...plan(input.config, input.owner),
    claim: input.claim,
    cancel: input.owner.cancel.child(),
    done: 0,
    holds: undefined,
    progress: null,
    lastOutputs: {},
    results: null,
    repeats: false,
  }),
  initial: 'deciding',
  // the block's time limit: ends this attempt wherever it is (the final states ignore it)
  on: {
    'CONTAINER.ABORT': { target: '.failed', actions: assign({ error: ({ event }) => event.error }) },
  },
  states: {
    deciding: {
      always: [
        { guard: 'broken', target: 'failed' },
        { guard: 'iterate', target: 'iterating' },
        { guard: 'evaluate', target: 'evaluating' },
        { guard: 'finish', target: 'finished' },
        { target: 'failed', actions: assign(({ context }) => stopError(context)) },
      ],
    },
    evaluating: {
      invoke: {
        src: 'condition',
        input: ({ context }) => ({ ctx: context }),
        onDone: { target: 'deciding', actions: assign({ holds: ({ event }) => event.output }) },
        onError: { target: 'failed', actions: assign({ error: ({ event }) => errorInfo(event.error) }) },
      },
    },
    iterating: {
      entry: enqueueActions(({ context, enqueue, self }) => {
        const index = context.done;
        const parallel = context.owner.parallel;
        const empty = context.owner.block.children.length === 0;
        const over = empty ? null : openBranches(context.owner, context.claim, 1);
        if (over !== null) {
          // with no iteration running, `deciding` comes next and fails the loop on its error
          enqueue.assign({ error: over });
          return;
        }
        enqueue(() => reportIteration(context.owner, index, context.total));
        if (empty) {
          // an empty body still counts as an iteration, with an empty result
          enqueue.assign({ results: withResult(context.results, index, {}), done: index + 1, progress: null, holds: undefined });
          return;
        }
        const spawn = { report: routeReports(context.owner, (e) => self.send(e)), cancel: context.cancel };
        const planned = planIteration(context, index, { loop: loopScope(context, index), ...(parallel ? { parallel } : {}) }, spawn);
        enqueue.assign({ progress: planned.progress, holds: undefined });
        enqueue(() => startIteration(context.owner, context.blockLogic, planned));
      }),
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
            actions: enqueueActions(({ context, event, enqueue }) => {
              enqueue(() => context.owner.report(event));
              if (context.progress === null) return;
              const settled = settleChild(context.owner, context.progress, event);
              enqueue.assign({ progress: settled.progress });
              if (settled.result === null) return;
              const keys = settled.progress.keys;
              enqueue(() => context.owner.group.stop(keys));
              const over = closeIteration(context.owner, context.claim, settled.result);
              const result = settled.result;
              enqueue(() => reportIteration(context.owner, context.done, context.total, result));
              enqueue.assign({
                results: withResult(context.results, context.done, result),
                lastOutputs: Object.fromEntries(settled.progress.outputs),
                done: context.done + 1,
                progress: null,
              });
              // `deciding` comes next and fails the loop on its error before another iteration
              if (over !== null) enqueue.assign({ error: over });
            }),
          },
        ],
      },
      always: { guard: ({ context }) => context.progress === null, target: 'deciding' },
    },
    // not final: a final state would settle the loop block; the execution's end stops it
    responded: { entry: ({ context }) => endLoop(context, false) },
    finished: { type: 'final', entry: ({ context }) => endLoop(context, true) },
    failed: { type: 'final', entry: ({ context }) => endLoop(context, false) },
  },
  output: ({ context }) => ({ ok: context.error === null, results: resultsOf(context.results), error: context.error, repeats: context.repeats }),
});
