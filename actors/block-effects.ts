import type { ErrorInfo } from '../src/errors.js';
import { isLimitCode } from '../src/model/limits.js';
import { getOwn, hasOwn, setOwn } from '../src/model/own.js';
import { activatedConnections } from '../src/model/readiness.js';
import type { BlockOutcome } from '../src/runtime/run-block.js';
import { blockInbox } from '../src/bus/subjects.js';
import type { BlockActorInput, BlockContext } from './block-input.js';
import type { BlockReport, InboxMessage } from './messages.js';

type Settled = Extract<BlockReport, { type: 'BLOCK.SETTLED' }>;

/** The outgoing connections a settle with `handles` activates (pure: the transition decides it). */
export function activatedBy(input: BlockActorInput, handles: readonly string[]): number[] {
  if (handles.length === 0) return [];
  return activatedConnections(input.block, handles).active.map((c) => c.index);
}

/** The effect: tells every downstream inbox whether our connection to it is active, with what it must carry. */
export function publishDownstream(ctx: BlockContext, active: readonly number[], own: Record<string, unknown> | null): void {
  const { input } = ctx;
  const known = own === null ? ctx.known : { ...ctx.known, [input.block.normName]: own };
  for (const conn of input.block.outgoing) {
    const carried: Record<string, unknown> = {};
    for (const name of input.workflow.carry.get(conn.index) ?? []) {
      if (hasOwn(known, name)) setOwn(carried, name, getOwn(known, name));
    }
    const msg: InboxMessage = { t: 'in', c: conn.index, a: active.includes(conn.index), o: carried, s: input.scopeKey, b: conn.to };
    input.bus.publish(blockInbox(input.prefix, input.run.executionId, input.scopeKey, conn.to), msg);
  }
}

export function settledReport(ctx: BlockContext, outcome: BlockOutcome | null, activated: number[]): BlockReport {
  const { input } = ctx;
  const report: Settled = {
    type: 'BLOCK.SETTLED',
    blockId: input.block.id,
    iteration: input.iteration,
    startedAt: ctx.startedAt,
    endedAt: input.run.services.clock.now(),
    activated,
    status: 'skipped',
    input: null,
    output: null,
    error: null,
    errorHandled: false,
    attempts: 0,
  };
  if (outcome === null) return report;
  report.input = outcome.input;
  report.attempts = outcome.attempts;
  if (outcome.attemptLog !== undefined) report.attemptLog = outcome.attemptLog;
  if (outcome.kind === 'failed') {
    report.status = 'failed';
    report.error = outcome.error;
    return report;
  }
  report.status = outcome.fromFailure === true ? 'failed' : 'completed';
  report.output = outcome.output;
  if (outcome.live !== undefined) report.live = outcome.live;
  report.errorHandled = outcome.errorHandled;
  report.error = outcome.errorHandled ? ((outcome.output['error'] as ErrorInfo | null | undefined) ?? null) : null;
  return report;
}

/**
 * A failure with an error connection becomes output `{ error }` on the `error` handle (SPEC §2).
 * An execution limit is not: it fails the execution wherever it is met (docs/config.md).
 */
export function handleFailure(input: BlockActorInput, outcome: BlockOutcome): BlockOutcome {
  if (outcome.kind !== 'failed' || !input.block.hasErrorConnection || isLimitCode(outcome.error.code)) return outcome;
  const type = input.blockTypes[input.block.type];
  const extra = type !== undefined && 'failureOutput' in type && type.failureOutput !== undefined ? type.failureOutput() : {};
  return {
    kind: 'completed',
    output: { ...extra, error: outcome.error },
    handles: ['error'],
    input: outcome.input,
    attempts: outcome.attempts,
    errorHandled: true,
    fromFailure: true,
    ...(outcome.attemptLog === undefined ? {} : { attemptLog: outcome.attemptLog }),
  };
}
