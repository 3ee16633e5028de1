/**
 * Sequential oracle of SPEC §2 path activation for the top level (containers are treated as
 * ordinary blocks). Property tests compare the actor runtime and the readiness decisions with it.
 * In topological order: the starter runs; another block runs iff some incoming connection comes
 * from a block that ran and whose chosen handles include that connection's handle; otherwise
 * it is skipped.
 */
import type { CompiledWorkflow } from './compiled.js';
import { topologicalOrder } from './graph.js';

export type PlannedState = 'ran' | 'skipped';

export function planActivation(compiled: CompiledWorkflow, chosen: (blockId: string) => readonly string[]): Map<string, PlannedState> {
  const states = new Map<string, PlannedState>();
  const handles = new Map<string, ReadonlySet<string>>();
  for (const id of topologicalOrder(compiled)) {
    const block = compiled.blocks.get(id);
    if (block === undefined) continue;
    const runs =
      id === compiled.starterId ||
      block.incoming.some((c) => states.get(c.from) === 'ran' && (handles.get(c.from)?.has(c.handle) ?? false));
    states.set(id, runs ? 'ran' : 'skipped');
    if (runs) handles.set(id, new Set(chosen(id)));
  }
  return states;
}
