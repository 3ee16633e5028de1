import { z } from 'zod';
import { localRunKey } from '../model/block-run.js';
import { TroupeError } from '../errors.js';
import { PARKED, type BlockRunContext, type BlockType } from './types.js';

/** How often a workflow block kept in memory looks for its child's end (a parked one is woken instead). */
const CHILD_POLL_MS = 500;

export const workflowConfigSchema = z.object({
  workflowId: z.string().min(1),
  version: z.union([z.enum(['deployed', 'current']), z.number().int().positive()]).default('deployed'),
  input: z.unknown().optional(),
});

export type WorkflowConfig = z.infer<typeof workflowConfigSchema>;

function keyOf(ctx: BlockRunContext<WorkflowConfig>): string {
  return localRunKey(ctx.executionId, ctx.runKey, ctx.block.id);
}

/** How deep this execution is in a chain of workflow blocks (0 for one no block started). */
function depthOf(trigger: BlockRunContext<WorkflowConfig>['trigger']): number {
  return trigger.type === 'workflow' && typeof trigger['depth'] === 'number' ? trigger['depth'] : 0;
}

/**
 * Runs another workflow as a child execution (SPEC §1.1, §2.1; docs/waiting.md). The child's id
 * derives from this block run, so a run that starts again (woken, or resumed after a crash)
 * finds the child it had started instead of starting another.
 */
export const workflowBlock: BlockType<WorkflowConfig> = {
  type: 'workflow',
  configSchema: workflowConfigSchema,
  handles: () => ['success', 'error'],
  async run(ctx) {
    const port = ctx.services.children;
    if (port === undefined) throw new TroupeError('NOT_IMPLEMENTED', 'workflow blocks run in troupe serve, which starts their children');
    const { workflowId, version, input } = ctx.config;
    const since = new Date(ctx.services.clock.now()).toISOString();
    const childId = await port.start({ parentExecutionId: ctx.executionId, blockId: ctx.block.id, key: keyOf(ctx), depth: depthOf(ctx.trigger), workflowId, version, input: input ?? {} });
    let end = await port.result(childId);
    let waiting = false;
    try {
      while (end === null || end.status === 'waiting') {
        // a child that runs keeps its parent running; one that parked makes its parent wait (and park)
        if (end !== null && !waiting) ctx.onWaiting?.({ kind: 'workflow', since, childExecutionId: childId });
        waiting ||= end !== null;
        await ctx.services.clock.sleep(CHILD_POLL_MS, ctx.signal);
        end = await port.result(childId);
      }
    } catch (err) {
      // cancelled with its execution: the child goes too; parked: it runs on, and wakes this one
      if (ctx.signal.aborted && ctx.signal.reason !== PARKED) await port.cancel(childId);
      throw err;
    }
    await port.settled(ctx.executionId, childId);
    if (end.status !== 'completed') {
      throw new TroupeError('CHILD_FAILED', `the child execution ${childId} of block "${ctx.block.name}" ended ${end.status}`, { details: { childExecutionId: childId, childStatus: end.status, childError: end.error } });
    }
    return { output: { output: end.output, executionId: childId, status: end.status }, handles: ['success'] };
  },
};
