/**
 * Resuming an execution from its last persisted block boundary (DESIGN "The shape"; decision
 * and limits in docs/operations.md). Pure: from the compiled workflow and the logs in the
 * store, what the resumed run takes as settled, and the inbox messages that tell the blocks not
 * yet settled what their settled upstream blocks decided. Completed blocks are not run again.
 */
import type { CompiledWorkflow } from './compiled.js';
import { assignOwn, hasOwn, setOwn } from './own.js';

/** The part of a stored block log a resumption reads. */
export interface PriorLog {
  blockId: string;
  status: string;
  order: number;
  output: unknown;
  error: unknown;
  errorHandled: boolean;
  iteration: unknown;
  /** connection indexes the block activated when it settled (top-level logs) */
  activated?: readonly number[];
}

export interface SettledBlock {
  blockId: string;
  status: 'completed' | 'failed' | 'skipped';
  output: Record<string, unknown> | null;
  error: unknown;
  errorHandled: boolean;
  activated: readonly number[];
}

/** One connection from a settled block to one that is not: settled, active or not, with what it carries. */
export interface ReplayMessage {
  connection: number;
  to: string;
  active: boolean;
  carried: Record<string, unknown>;
}

export interface ResumePlan {
  /** top-level blocks settled before the interruption, in the order they started */
  settled: SettledBlock[];
  replay: ReplayMessage[];
  /** the next log order number (after every stored log) */
  nextOrder: number;
}

const SETTLED = new Set(['completed', 'failed', 'skipped']);

/**
 * The plan, or why there is none: a settled top-level log without `activated` (written before
 * resumption existed) cannot say which paths it opened, and a log naming a block the workflow
 * version does not have means the logs do not belong to it.
 */
export function planResume(workflow: CompiledWorkflow, logs: readonly PriorLog[]): { plan: ResumePlan } | { reason: string } {
  const settled = new Map<string, SettledBlock>();
  let nextOrder = 0;
  for (const log of [...logs].sort((a, b) => a.order - b.order)) {
    const topLevel = log.iteration === null || log.iteration === undefined;
    // a block that was running starts over, its log dropped: it takes the next order again
    // so does a block that was waiting: it finds its due time in the store (docs/waiting.md)
    if (topLevel && (log.status === 'running' || log.status === 'waiting')) continue;
    nextOrder = Math.max(nextOrder, log.order + 1);
    if (!topLevel) continue;
    if (!SETTLED.has(log.status)) continue;
    const block = workflow.blocks.get(log.blockId);
    if (block === undefined || block.parent !== undefined) return { reason: `the log of block ${log.blockId} does not fit the workflow version` };
    if (!Array.isArray(log.activated)) return { reason: `the log of block ${log.blockId} does not record which connections it activated` };
    settled.set(log.blockId, {
      blockId: log.blockId,
      status: log.status as SettledBlock['status'],
      output: isObject(log.output) ? log.output : null,
      error: log.error ?? null,
      errorHandled: log.errorHandled,
      activated: log.activated,
    });
  }
  return { plan: { settled: [...settled.values()], replay: replayMessages(workflow, settled), nextOrder } };
}

/**
 * What each settled block told each downstream block that is not settled: exactly the messages
 * of the interrupted run (outputs travel along every connection, active or not, filtered by
 * what the connection carries), so the blocks still to run see the same inputs.
 */
function replayMessages(workflow: CompiledWorkflow, settled: ReadonlyMap<string, SettledBlock>): ReplayMessage[] {
  const known = new Map<string, Record<string, unknown>>();
  const knownOf = (blockId: string): Record<string, unknown> => {
    const cached = known.get(blockId);
    if (cached !== undefined) return cached;
    const block = workflow.blocks.get(blockId);
    const out: Record<string, unknown> = {};
    for (const conn of block?.incoming ?? []) if (settled.has(conn.from)) assignOwn(out, knownOf(conn.from));
    const own = settled.get(blockId)?.output;
    if (block !== undefined && own !== null && own !== undefined) setOwn(out, block.normName, own);
    known.set(blockId, out);
    return out;
  };
  const replay: ReplayMessage[] = [];
  for (const prior of settled.values()) {
    const block = workflow.blocks.get(prior.blockId);
    const activated = new Set(prior.activated);
    for (const conn of block?.outgoing ?? []) {
      if (settled.has(conn.to)) continue;
      const from = knownOf(prior.blockId);
      const carried: Record<string, unknown> = {};
      for (const name of workflow.carry.get(conn.index) ?? []) if (hasOwn(from, name)) setOwn(carried, name, from[name]);
      replay.push({ connection: conn.index, to: conn.to, active: activated.has(conn.index), carried });
    }
  }
  return replay;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * What a resumed execution's record carries in `context` while it runs (the end replaces it):
 * how long it had run before this resumption, when that was, and the claiming instance's token.
 * Restart recovery writes it; recovery and the scheduler read it through `resumedMark`.
 */
export interface ResumedMark {
  activeMs: number;
  /** ms since the epoch */
  at: number;
  /**
   * Resumptions claimed so far. Written before each resumption starts, so a record that is still
   * `running` at the next start with this mark had its resumption cut off by the process's end.
   */
  attempts: number;
}

export function resumedContext(
  activeMs: number,
  at: Date,
  claim: string,
  attempts: number,
): { resumed: { activeMs: number; at: string; claim: string; attempts: number } } {
  return { resumed: { activeMs, at: at.toISOString(), claim, attempts } };
}

/**
 * Whether an interrupted execution may be resumed once more, or why not: each of its `attempts`
 * earlier resumptions ended with the process (a crash loop, if it is what ends the process), and
 * after `max` of them it is failed instead (RESUME_LIMIT) so that the service can start.
 */
export function resumeRefusal(mark: ResumedMark | null, max: number): string | null {
  const attempts = mark?.attempts ?? 0;
  if (attempts < max) return null;
  return `the service stopped during each of the ${attempts} resumptions of this execution; it is not resumed again (TROUPE_MAX_RESUME_ATTEMPTS is ${max})`;
}

/** The mark in a record's context, or null when it was never resumed (or the mark is unreadable). */
export function resumedMark(context: unknown): ResumedMark | null {
  const resumed = (context as { resumed?: { activeMs?: unknown; at?: unknown; attempts?: unknown } } | null | undefined)?.resumed;
  const at = typeof resumed?.at === 'string' ? Date.parse(resumed.at) : Number.NaN;
  if (Number.isNaN(at)) return null;
  // a mark written before attempts were counted stands for one resumption
  const attempts = typeof resumed?.attempts === 'number' ? resumed.attempts : 1;
  return { activeMs: typeof resumed?.activeMs === 'number' ? resumed.activeMs : 0, at, attempts };
}
