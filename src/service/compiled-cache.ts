/**
 * Compiled workflows by (workflowId, version, stamp): execute compiles a deployed version once.
 * The stamp (deployment time or version write time) tells apart a workflow that was deleted and
 * created again under the same id, whose version numbers start over.
 */
import type { CompiledWorkflow } from '../model/graph.js';
import type { BlockTypeRegistry, WorkflowDef } from '../model/types.js';
import { loadWorkflow } from '../runtime/workflows.js';
import type { StoredWorkflow } from '../store/types.js';

export interface LoadedWorkflow {
  workflowId: string;
  version: number;
  def: WorkflowDef;
  compiled: CompiledWorkflow;
  /** config of the starter block, for input validation before an execution starts */
  starterConfig: Record<string, unknown>;
}

export class CompiledCache {
  private readonly entries = new Map<string, LoadedWorkflow>();

  constructor(private readonly registry: BlockTypeRegistry, private readonly max = 256) {}

  peek(workflowId: string, version: number, stamp: string): LoadedWorkflow | undefined {
    const key = cacheKey(workflowId, version, stamp);
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      // refresh recency: Map order is insertion order
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  load(stored: StoredWorkflow, stamp: string): LoadedWorkflow {
    const hit = this.peek(stored.id, stored.version, stamp);
    if (hit !== undefined) return hit;
    const { def, compiled } = loadWorkflow(stored.definition, this.registry);
    const starter = compiled.blocks.get(compiled.starterId);
    const loaded: LoadedWorkflow = {
      workflowId: stored.id,
      version: stored.version,
      def,
      compiled,
      starterConfig: starter?.config ?? {},
    };
    this.entries.set(cacheKey(stored.id, stored.version, stamp), loaded);
    if (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    return loaded;
  }

  forget(workflowId: string): void {
    const prefix = `${workflowId}\u0000`;
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.entries.delete(key);
  }
}

function cacheKey(workflowId: string, version: number, stamp: string): string {
  return `${workflowId}\u0000${version}\u0000${stamp}`;
}
