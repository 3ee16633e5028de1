/**
 * What the execution actor does differently when it resumes an interrupted run (the plan is
 * decided by src/model/resume.ts): settled blocks get no actor; their messages to the blocks
 * not yet settled are published again, so those run exactly as they would have; and settled
 * blocks that already decide the end (a failure with no error connection, a response, or every
 * block) end the run at once.
 */
import type { Bus } from '../src/bus/types.js';
import { blockInbox } from '../src/bus/subjects.js';
import type { ErrorInfo } from '../src/errors.js';
import type { CompiledWorkflow } from '../src/model/graph.js';
import type { ResumePlan } from '../src/model/resume.js';
import { asResponse, executionError, type ExecutionLedger } from '../src/runtime/execution-state.js';
import type { ExecutionError, ResponseOutput } from '../src/runtime/types.js';
import type { InboxMessage } from './messages.js';

export type ResumeDecision =
  | { type: 'BLOCK.FAILED'; error: ExecutionError }
  | { type: 'BLOCK.RESPONDED'; response: ResponseOutput }
  | { type: 'ALL.SETTLED' };

/** The end the settled blocks decide, in the order they settled; null when blocks are left to run. */
export function resumeDecision(ctx: { workflow: CompiledWorkflow; ledger: ExecutionLedger }, plan: ResumePlan): ResumeDecision | null {
  for (const s of plan.settled) {
    const type = ctx.workflow.blocks.get(s.blockId)?.type;
    if (s.status === 'failed' && !s.errorHandled) return { type: 'BLOCK.FAILED', error: executionError(s.error as ErrorInfo | null, s.blockId) };
    if (s.status === 'completed' && type === 'response') return { type: 'BLOCK.RESPONDED', response: asResponse(s.output ?? {}) };
  }
  return ctx.ledger.allSettled ? { type: 'ALL.SETTLED' } : null;
}

/** Publishes what each settled block told each block not yet settled (after their actors exist). */
export function replayResume(ctx: { bus: Bus; prefix: string; executionId: string }, plan: ResumePlan): void {
  for (const m of plan.replay) {
    const msg: InboxMessage = { t: 'in', c: m.connection, a: m.active, o: m.carried, s: 'root', b: m.to };
    ctx.bus.publish(blockInbox(ctx.prefix, ctx.executionId, 'root', m.to), msg);
  }
}
