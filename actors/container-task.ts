/**
 * A container block (loop, parallel) as a task with the outcome contract of any block: its run
 * starts the container machine for one attempt and settles with the machine's end. The block
 * actor hands it to runBlock (src/runtime/run-block.ts) like any block's run, so the container's
 * `timeoutMs` and whole-block `retry` are the ones every block has, applied in one place: a
 * timed-out attempt's signal aborts the machine (it stops its children), and a retried one starts
 * a new machine, every iteration from the start.
 */
import type { AnyActorLogic } from 'xstate';
import type { BlockResult, BlockRunContext, BlockType, ContainerType } from '../src/blocks/types.js';
import { errorInfo } from '../src/errors.js';
import { containerRunKey } from '../src/model/block-run.js';
import { newClaim, releaseClaim } from '../src/runtime/budget.js';
import { ReportedFailure } from '../src/runtime/run-block.js';
import type { BlockActorInput, ContainerActorInput, ContainerOutput } from './block-input.js';
import { loopMachine } from './loop.js';
import { inboxKey } from './messages.js';
import { parallelMachine } from './parallel.js';

/** The container actor of each container type (one file per actor kind). */
const CONTAINER_LOGIC: Readonly<Record<string, AnyActorLogic>> = { loop: loopMachine, parallel: parallelMachine };

/** The container block's type with a run: one attempt of its container machine. */
export function containerTask(type: ContainerType<Record<string, unknown>>, context: BlockActorInput, blockLogic: AnyActorLogic): BlockType<Record<string, unknown>> {
  let attempts = 0;
  const task: BlockType<Record<string, unknown>> = {
    type: type.type,
    configSchema: type.configSchema,
    handles: (config) => type.handles(config),
    run(ctx) {
      attempts += 1;
      // a retried container's earlier attempt leaves no child logs behind
      if (attempts > 1) context.report({ type: 'CONTAINER.ATTEMPT', blockId: context.block.id, iteration: context.iteration });
      return runAttempt(context, ctx, blockLogic);
    },
  };
  if (type.codeFields !== undefined) task.codeFields = type.codeFields;
  return task;
}

function runAttempt(context: BlockActorInput, ctx: BlockRunContext<Record<string, unknown>>, blockLogic: AnyActorLogic): Promise<BlockResult> {
  const key = containerRunKey(inboxKey(context.scopeKey, context.block.id));
  const signal = ctx.signal;
  return new Promise<BlockResult>((resolve, reject) => {
    const claim = newClaim();
    // The machine fails as a child failure would (stopping what runs in it) and gives back its
    // claim; given back here too, as the machine may be stopped right after (the scope's end stops
    // every actor, and XState runs no exit action on a stop). Giving a claim back twice is harmless.
    const onAbort = (): void => {
      context.group.send(key, { type: 'CONTAINER.ABORT', error: errorInfo(signal.reason) });
      releaseClaim(context.budget, claim, false);
    };
    // it lives in the execution's group: the execution's end stops it with every other actor
    const input: ContainerActorInput = { owner: context, config: ctx.config, blockLogic, claim };
    const logic = CONTAINER_LOGIC[context.block.type];
    if (logic === undefined) {
      reject(new ReportedFailure({ code: 'INTERNAL', message: `no container actor runs block type "${context.block.type}"` }, false));
      return;
    }
    context.group.spawn(key, logic, input, (end) => {
      signal.removeEventListener('abort', onAbort);
      const output: ContainerOutput = 'output' in end ? (end.output as ContainerOutput) : { ok: false, results: [], error: errorInfo(end.error) };
      if (output.ok) resolve({ output: { results: output.results }, handles: ['success'] });
      else reject(new ReportedFailure(output.error ?? { code: 'INTERNAL', message: 'container failed' }, output.repeats === true));
    });
    // a time limit or the scope's end
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}
