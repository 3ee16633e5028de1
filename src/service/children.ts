/**
 * Child executions of workflow blocks (SPEC §2.1; docs/waiting.md). A child is an execution of
 * its own, trigger `{ type: "workflow", parentExecutionId, blockId, depth }`, its id derived from
 * the parent's block run. Its end leaves a nudge in the waits index for the parent, so a parent
 * that parked while the child ran is woken by whichever instance polls first.
 */
import type { ChildWorkflowPort } from '../blocks/types.js';
import { TroupeError } from '../errors.js';
import type { Store } from '../store/types.js';
import type { CompiledCache, LoadedWorkflow } from './compiled-cache.js';
import type { DeploymentService } from './deployments.js';
import type { ExecutionService } from './executions.js';
import { childExecutionId, childNudgeKey } from './child-keys.js';

export { childExecutionId, childNudgeKey };

const ENDED = new Set(['completed', 'failed', 'cancelled']);


export class ChildWorkflows implements ChildWorkflowPort {
  constructor(
    private readonly store: Store,
    private readonly executions: ExecutionService,
    private readonly deployments: DeploymentService,
    private readonly cache: CompiledCache,
    private readonly maxDepth: number,
  ) {}

  async start(req: Parameters<ChildWorkflowPort['start']>[0]): Promise<string> {
    const id = childExecutionId(req.parentExecutionId, req.key);
    if ((await this.store.executions.get(id)) !== null) return id;
    if (req.depth + 1 > this.maxDepth) {
      throw new TroupeError('CALL_DEPTH_EXCEEDED', `workflow blocks nest at most ${this.maxDepth} deep (TROUPE_MAX_CALL_DEPTH)`, { details: { depth: req.depth + 1 } });
    }
    const loaded = await this.load(req.workflowId, req.version);
    this.executions.validateInput(loaded, req.input);
    const trigger = { type: 'workflow' as const, parentExecutionId: req.parentExecutionId, blockId: req.blockId, depth: req.depth + 1 };
    try {
      await this.executions.start(loaded, req.input, trigger, { executionId: id });
    } catch (err) {
      // started by a run of the same block a moment ago (a resumption racing a wake-up)
      if (!(err instanceof TroupeError && err.code === 'CONFLICT')) throw err;
    }
    return id;
  }

  async result(childId: string): Promise<{ status: string; output: unknown; error: unknown } | null> {
    const rec = await this.store.executions.get(childId);
    if (rec === null) throw new TroupeError('CHILD_FAILED', `the child execution ${childId} is gone`, { details: { childExecutionId: childId } });
    return ENDED.has(rec.status) || rec.status === 'waiting' ? { status: rec.status, output: rec.output, error: rec.error } : null;
  }

  async cancel(childId: string): Promise<void> {
    const rec = await this.store.executions.get(childId);
    if (rec !== null && !ENDED.has(rec.status)) await this.executions.cancel(rec).catch(() => undefined);
  }

  async settled(parentExecutionId: string, childId: string): Promise<void> {
    await this.store.waits.delete(parentExecutionId, childNudgeKey(childId));
  }

  private async load(workflowId: string, version: 'deployed' | 'current' | number): Promise<LoadedWorkflow> {
    if (version === 'deployed') {
      const d = await this.deployments.get(workflowId);
      if (d === null) throw new TroupeError('NOT_DEPLOYED', `workflow ${workflowId} is not deployed (a workflow block runs its deployed version unless it names another)`);
      return this.deployments.loadDeployed(d);
    }
    const stored = version === 'current' ? await this.store.workflows.get(workflowId) : await this.store.workflows.getVersion(workflowId, version);
    if (stored === null) throw new TroupeError('NOT_FOUND', `workflow ${workflowId}${version === 'current' ? '' : ` version ${version}`} not found`);
    return this.cache.load(stored, stored.updatedAt);
  }
}
