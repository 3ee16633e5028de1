/** Final output selection (SPEC §2). Response blocks end the execution first: the runtime's job. */
import { responds } from './capabilities.js';
import type { CompiledWorkflow } from './compiled.js';

export function isResponseBlock(block: { type: string }): boolean {
  return responds(block.type);
}

/** Top-level blocks with no outgoing connection, definition order. */
export function terminalBlocks(compiled: CompiledWorkflow): string[] {
  return compiled.topLevel.filter((id) => (compiled.blocks.get(id)?.outgoing.length ?? 0) === 0);
}

/**
 * The outputs object of the one terminal block that completed; with several, an object keyed by
 * normalized block name in definition order; with none, null. `completed` maps top-level block
 * ids to outputs of blocks that completed.
 */
export function selectFinalOutput(compiled: CompiledWorkflow, completed: ReadonlyMap<string, Record<string, unknown>>): unknown {
  const done = terminalBlocks(compiled).filter((id) => completed.has(id));
  if (done.length === 0) return null;
  if (done.length === 1) return completed.get(done[0] as string) ?? null;
  const out: Record<string, unknown> = {};
  for (const id of done) {
    const name = compiled.blocks.get(id)?.normName ?? id;
    Object.defineProperty(out, name, { value: completed.get(id), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
