import { responds } from '../src/model/capabilities.js';
import { TroupeError } from '../src/errors.js';
import type { CompiledWorkflow } from '../src/model/graph.js';
import type { BlockReport } from '../src/runtime/types.js';

/**
 * What travels on a block inbox subject: "my connection `c` to you is settled", active or not,
 * with the upstream outputs you (or blocks after you) reference. See actors/README.md.
 */
export interface InboxMessage {
  t: 'in';
  /** connection index in the workflow definition */
  c: number;
  /** true: the connection is active; false: the source was skipped or chose another handle */
  a: boolean;
  /** carried outputs, by normalized block name */
  o: Record<string, unknown>;
  /** receiver: its scope and block id (the subject says the same; this saves parsing it) */
  s: string;
  b: string;
}

/**
 * The system id of a block actor (unique within its execution, each execution being its own actor
 * system) is its block run key (src/model/block-run.ts), and so is the block id it names.
 */
export { blockRunKey as inboxKey, blockOfRunKey as blockOfInboxKey } from '../src/model/block-run.js';

/** Events a block actor sends to its parent: defined with the runtime's types, which fold them into the ledger. */
export type { BlockReport } from '../src/runtime/types.js';

/**
 * The reason given when an execution or a container iteration set ends and aborts what still
 * runs in it. One shared instance: `abort()` without a reason builds a DOMException with a
 * stack trace every time, which showed in the execute profile.
 */
export const SCOPE_ENDED = new TroupeError('CANCELLED', 'the execution or container ended');

/** A response block that completed: the execution ends with it (SPEC §2), wherever it sits. */
export function isResponseSettle(workflow: CompiledWorkflow, report: { type: string }): boolean {
  if (report.type !== 'BLOCK.SETTLED') return false;
  const settled = report as Extract<BlockReport, { type: 'BLOCK.SETTLED' }>;
  return settled.status === 'completed' && responds(workflow.blocks.get(settled.blockId)?.type);
}
