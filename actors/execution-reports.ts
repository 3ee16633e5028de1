/**
 * The report queue of the execution actor: what its block actors report, folded into the ledger
 * and told to the observers, and the reports that decide the execution's end.
 */
import { decideEnd } from '../src/model/end.js';
import type { BlockActorInput } from './block-input.js';
import type { ExecutionContext, ExecutionEventIn, ReportQueue, Settled } from './execution-context.js';
import type { BlockReport } from './messages.js';
import { deadlineControl, noteWaiting, reviewWaiting, waitSettled } from './waiting.js';

type Started = Extract<BlockReport, { type: 'BLOCK.STARTED' }>;

function recordStart(ctx: ExecutionContext, event: Started): void {
  const log = ctx.ledger.started(event.blockId, event.at, event.iteration);
  ctx.sink.logStarted(log);
  ctx.sink.notify({
    type: 'block.started',
    data: { blockId: log.blockId, blockName: log.blockName, blockType: log.blockType, order: log.order, iteration: log.iteration },
  });
}

/**
 * The running log gets the block's resolved input and is persisted again. Usually in the same
 * boundary batch as its start (the block resolves its config in the turn it starts), so the
 * store sees one write; a crash then leaves a running log that says what the block ran with.
 */
function recordInput(ctx: ExecutionContext, event: Extract<BlockReport, { type: 'BLOCK.INPUT' }>): void {
  const log = ctx.ledger.runningInput(event.blockId, event.iteration, event.input);
  if (log !== null) ctx.sink.logStarted(log);
}

/** Folds one settled report into the ledger, tells observers, and returns the event it decides, if any. */
function applySettled(ctx: ExecutionContext, e: Settled): ExecutionEventIn | null {
  if (ctx.waits !== null && e.iteration === null) waitSettled(ctx, e.blockId);
  const log = ctx.ledger.settled(e);
  ctx.sink.notify({ type: `block.${e.status}`, data: log });
  // the one rule of the end, which a resumed run applies to what it takes as settled (resume.ts)
  return decideEnd(ctx.workflow, e, ctx.ledger.allSettled);
}

/**
 * The report callback of every block actor of the execution, and what the execution's end does
 * with reports still queued. Reports are applied in the order they happen; once one decides the
 * end, later ones (already on their way when the blocks are stopped) are ignored, as a stopped
 * machine would ignore them.
 *
 * Reports are queued and applied after the current turn of the event loop (one setImmediate per
 * turn, not per report): what a settled block must do first is publish downstream so the next
 * block starts, and the bookkeeping (ledger, observers, persistence) then runs while that block
 * works instead of before it starts. The order of reports, and so of events, is unchanged.
 */
export function reporter(ctx: ExecutionContext, self: { send(e: ExecutionEventIn): void }): ReportQueue {
  let decided = false;
  let queue: ReportEvent[] = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    const batch = queue;
    queue = [];
    for (const event of batch) {
      if (decided) return;
      const decision = applyReport(ctx, event);
      if (decision === null) continue;
      decided = true;
      self.send(decision);
    }
    if (!decided && ctx.waits !== null) reviewWaiting(ctx, deadlineControl(ctx, () => self.send({ type: 'TIMEOUT' })), () => self.send({ type: 'PARK' }));
  };
  return {
    report: (event) => {
      if (decided) return;
      queue.push(event);
      if (scheduled) return;
      scheduled = true;
      setImmediate(flush);
    },
    drain: () => {
      if (!decided) for (const event of queue) applyReport(ctx, event);
      decided = true;
      queue = [];
    },
  };
}

type ReportEvent = Parameters<BlockActorInput['report']>[0];

/** Folds one report into the ledger and tells observers; returns the event it decides, if any. */
function applyReport(ctx: ExecutionContext, event: ReportEvent): ExecutionEventIn | null {
  if (event.type === 'BLOCK.STARTED') recordStart(ctx, event);
  else if (event.type === 'BLOCK.INPUT') recordInput(ctx, event);
  else if (event.type === 'BLOCK.CHUNK') ctx.sink.notify({ type: 'chunk', data: { blockId: event.blockId, text: event.text, iteration: event.iteration } });
  else if (event.type === 'CONTAINER.ITERATION') ctx.ledger.iteration(event);
  else if (event.type === 'CONTAINER.ATTEMPT') ctx.sink.forgetLogs(ctx.ledger.dropAttempt(event.blockId, event.iteration));
  else if (event.type === 'BLOCK.WAITING') recordWaiting(ctx, event);
  else return applySettled(ctx, event);
  return null;
}

/** A block waits: its log says so (stored, so the record shows it), and the execution may park. */
function recordWaiting(ctx: ExecutionContext, event: Extract<BlockReport, { type: 'BLOCK.WAITING' }>): void {
  const log = ctx.ledger.waiting(event.blockId, event.iteration);
  if (log === null) return;
  noteWaiting(ctx, event.blockId, event.info);
  ctx.sink.logStarted(log);
}
