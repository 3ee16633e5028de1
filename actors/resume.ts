/**
 * What the execution actor does differently when it resumes an interrupted run (the plan is
 * decided by src/model/resume.ts): settled blocks get no actor; their messages to the blocks
 * not yet settled are published again, so those run exactly as they would have; and settled
 * blocks that already decide the end (a failure with no error connection, a response, or every
 * block) end the run at once.
 */
import type { Bus } from '../src/bus/types.js';
import { blockInbox } from '../src/bus/subjects.js';
import type { CompiledWorkflow } from '../src/model/graph.js';
import { decideEndOf, type EndDecision } from '../src/model/end.js';
import type { ResumePlan } from '../src/model/resume.js';
import { ROOT_SCOPE } from '../src/model/block-run.js';
import type { ExecutionLedger } from '../src/runtime/execution-state.js';
import type { InboxMessage } from './messages.js';

/**
 * The end the settled blocks decide, in the order they settled; null when blocks are left to
 * run. The same rule a live run applies at each settle (decideEnd): the settled blocks of a
 * resumed plan are top-level ones.
 */
export function resumeDecision(ctx: { workflow: CompiledWorkflow; ledger: ExecutionLedger }, plan: ResumePlan): EndDecision | null {
  return decideEndOf(ctx.workflow, plan.settled.map(topLevel), ctx.ledger.allSettled);
}

function topLevel(s: ResumePlan['settled'][number]): ResumePlan['settled'][number] & { iteration: null } {
  return { ...s, iteration: null };
}

/** Publishes what each settled block told each block not yet settled (after their actors exist). */
export function replayResume(ctx: { bus: Bus; prefix: string; executionId: string }, plan: ResumePlan): void {
  for (const m of plan.replay) {
    const msg: InboxMessage = { t: 'in', c: m.connection, a: m.active, o: m.carried, s: ROOT_SCOPE, b: m.to };
    ctx.bus.publish(blockInbox(ctx.prefix, ctx.executionId, ROOT_SCOPE, m.to), msg);
  }
}
