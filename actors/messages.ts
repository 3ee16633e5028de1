import { TroupeError, type ErrorInfo } from '../src/errors.js';
import type { CompiledWorkflow } from '../src/model/graph.js';
import type { IterationRef } from '../src/runtime/types.js';
import type { WaitingInfo } from '../src/blocks/types.js';

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

/** The system id of a block actor: unique within its execution (each execution is its own actor system). */
export function inboxKey(scopeKey: string, blockId: string): string {
  return `${scopeKey}|${blockId}`;
}

/** The block id of an `inboxKey`. */
export function blockOfInboxKey(key: string): string {
  return key.slice(key.lastIndexOf('|') + 1);
}

/** Events a block actor sends to its parent (the execution actor or a container actor). */
export type BlockReport =
  | { type: 'BLOCK.STARTED'; blockId: string; at: number; iteration: IterationRef | null }
  | {
      type: 'BLOCK.SETTLED';
      blockId: string;
      iteration: IterationRef | null;
      status: 'completed' | 'failed' | 'skipped';
      startedAt: number | null;
      endedAt: number;
      input: unknown;
      output: Record<string, unknown> | null;
      /** the unredacted output, when it may differ from `output` (see BlockOutcome): containers collect it */
      live?: Record<string, unknown>;
      error: ErrorInfo | null;
      errorHandled: boolean;
      attempts: number;
      /** connection indexes this block activated */
      activated: number[];
      attemptLog?: unknown[];
    }
  | { type: 'BLOCK.CHUNK'; blockId: string; text: string; iteration: IterationRef | null }
  /**
   * a running block resolved its config: `input` is what its log records (secrets as ***). It goes
   * into the running log the persister writes, so a log that restart recovery finds still running
   * after a crash keeps the input too, as one cancelled in a live process does
   */
  | { type: 'BLOCK.INPUT'; blockId: string; iteration: IterationRef | null; input: unknown }
  /** a top-level block is waiting (SPEC §2.1): the execution may park once nothing else runs */
  | { type: 'BLOCK.WAITING'; blockId: string; iteration: IterationRef | null; info: WaitingInfo }
  /** a loop or parallel starts another attempt (its `retry`): its earlier attempt's child logs go */
  | { type: 'CONTAINER.ATTEMPT'; blockId: string; iteration: IterationRef | null };

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
  return settled.status === 'completed' && workflow.blocks.get(settled.blockId)?.type === 'response';
}
