/**
 * How an execution's end is decided from its settled blocks (SPEC §2): a top-level failure that
 * no `error` connection takes fails it, a response block that completed (wherever it sits) ends
 * it with that response, and it completes once every top-level block has settled. Pure, and the
 * one place the rule is written: a live run asks it at each settle (actors/execution.ts), a
 * resumed run asks it for the blocks its interrupted run had settled (actors/resume.ts).
 */
import { responds } from './capabilities.js';
import type { CompiledWorkflow } from './compiled.js';

export interface ExecutionError {
  code: string;
  message: string;
  blockId: string | null;
}

/** The response a response block set (status, headers, data). */
export interface ResponseOutput {
  status: number;
  headers: Record<string, string>;
  data: unknown;
}

/** What the end decision reads of one settled block: a live settle report or a resumed settled log. */
export interface SettledFact {
  blockId: string;
  /** null for a top-level block; inside a loop or parallel, the iteration it ran in */
  iteration: unknown;
  status: 'completed' | 'failed' | 'skipped';
  output: Record<string, unknown> | null;
  error: unknown;
  errorHandled: boolean;
}

export type EndDecision =
  | { type: 'BLOCK.FAILED'; error: ExecutionError }
  | { type: 'BLOCK.RESPONDED'; response: ResponseOutput }
  | { type: 'ALL.SETTLED' };

const ALL_SETTLED: EndDecision = { type: 'ALL.SETTLED' };

/**
 * The end one settle decides, or null when the run goes on. `allSettled`: every top-level block
 * has settled, this one included. A failure inside a container is the container's to decide
 * (it reports its own settle); a response is not.
 */
export function decideEnd(workflow: CompiledWorkflow, s: SettledFact, allSettled: boolean): EndDecision | null {
  if (s.iteration === null && s.status === 'failed' && !s.errorHandled && workflow.blocks.has(s.blockId)) {
    return { type: 'BLOCK.FAILED', error: executionError(s.error, s.blockId) };
  }
  if (s.status === 'completed' && responds(workflow.blocks.get(s.blockId)?.type)) {
    return { type: 'BLOCK.RESPONDED', response: asResponse(s.output ?? {}) };
  }
  return allSettled ? ALL_SETTLED : null;
}

/**
 * The end a sequence of settles decides, taken in the order they settled, as a live run would
 * have met them one at a time: the first that decides wins. `allSettled` is the state after the
 * last of them.
 */
export function decideEndOf(workflow: CompiledWorkflow, settles: readonly SettledFact[], allSettled: boolean): EndDecision | null {
  for (let i = 0; i < settles.length; i++) {
    const decided = decideEnd(workflow, settles[i] as SettledFact, allSettled && i === settles.length - 1);
    if (decided !== null) return decided;
  }
  return settles.length === 0 && allSettled ? ALL_SETTLED : null;
}

/** An execution error from a block's error (its code and message), naming the block. */
export function executionError(error: unknown, blockId: string | null): ExecutionError {
  const e = error as { code?: unknown; message?: unknown } | null | undefined;
  return {
    code: typeof e?.code === 'string' ? e.code : 'INTERNAL',
    message: typeof e?.message === 'string' ? e.message : 'block failed',
    blockId,
  };
}

export function asResponse(output: Record<string, unknown>): ResponseOutput {
  return {
    status: typeof output['status'] === 'number' ? output['status'] : 200,
    headers: (output['headers'] as Record<string, string> | undefined) ?? {},
    data: output['data'] ?? null,
  };
}
