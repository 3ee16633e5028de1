/**
 * Readiness and skip propagation (SPEC §2) as pure decisions; block actors carry them out.
 * A block waits until every incoming connection is settled, runs if at least one is active,
 * and is skipped otherwise (a skipped block settles all its outgoing connections as inactive,
 * which is how the skip propagates).
 */
import type { CompiledBlock, CompiledConnection, CompiledWorkflow } from './compiled.js';

export type InputState = 'pending' | 'active' | 'inactive';
export type Readiness = 'wait' | 'run' | 'skip';

/**
 * Decision from the states of a block's incoming connections. With no incoming connection at
 * all the answer is 'skip' (nothing activates it): whether such a block starts on its own is a
 * scope question the runtime answers with startDecision.
 */
export function decideReadiness(states: readonly InputState[]): Readiness {
  if (states.length === 0) return 'skip';
  let pending = 0;
  let active = 0;
  for (const s of states) {
    if (s === 'pending') pending += 1;
    else if (s === 'active') active += 1;
  }
  return readinessFromCounts(states.length, pending, active);
}

/** Outgoing connections split by whether the handles a run chose activate them (order kept). */
export function activatedConnections(
  block: CompiledBlock,
  handles: readonly string[],
): { active: CompiledConnection[]; inactive: CompiledConnection[] } {
  const chosen = new Set(handles);
  const active: CompiledConnection[] = [];
  const inactive: CompiledConnection[] = [];
  for (const conn of block.outgoing) (chosen.has(conn.handle) ? active : inactive).push(conn);
  return { active, inactive };
}

/**
 * What a block does before any message arrives: the starter runs; inside a container a child
 * with no incoming connection starts each iteration; a top-level block that nothing leads to is
 * unreachable and skipped at once (like n8n and Sim, stray blocks do not run); all others wait.
 */
export function startDecision(compiled: CompiledWorkflow, blockId: string): Readiness {
  const block = compiled.blocks.get(blockId);
  if (block === undefined) return 'skip';
  if (block.id === compiled.starterId) return 'run';
  if (block.incoming.length > 0) return 'wait';
  return block.parent === undefined ? 'skip' : 'run';
}

/**
 * The readiness rule from counts a block actor keeps as inputs arrive (so it does not rebuild an
 * array per message): wait while any input is pending; run if one is active; else skip. With
 * no inputs at all it waits: whether such a block starts is startDecision's question.
 */
export function readinessFromCounts(total: number, pending: number, active: number): Readiness {
  if (pending > 0) return 'wait';
  if (active > 0) return 'run';
  return total > 0 ? 'skip' : 'wait';
}
