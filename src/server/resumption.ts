/**
 * Resuming a `running` execution that a crash interrupted, from its last persisted block
 * boundary (DESIGN "The shape"; docs/operations.md "Restart recovery"): the blocks whose logs
 * say they settled are not run again, the blocks that were running start over, and the rest run
 * as their inputs settle. On a shared store several instances may try: one claims it (a guarded
 * write) and the others leave it.
 */
import type { Logger } from 'pino';
import { planResume, resumedContext, resumedMark, type ResumePlan } from '../model/resume.js';
import type { BlockTypeRegistry } from '../model/types.js';
import type { CompiledWorkflow } from '../model/graph.js';
import type { Engine, ExecutionHandle } from '../engine/engine.js';
import type { StartRequest } from '../runtime/types.js';
import { loadWorkflow } from '../runtime/workflows.js';
import { randomUUID } from 'node:crypto';
import { isTroupeError } from '../errors.js';
import type { BlockLog, ExecutionRecord, LogIdentity, Store } from '../store/types.js';

export interface ResumeDeps {
  store: Store;
  engine: Engine;
  registry: BlockTypeRegistry;
  logger: Logger;
  /**
   * How a recorded execution is started again: the service's (ExecutionService.launch: live
   * events, cancel, metrics) when there is one; the engine's otherwise
   */
  start?: (compiled: CompiledWorkflow, req: StartRequest & { executionId: string }) => Promise<ExecutionHandle>;
}

/** The service's start when given, else the engine's. */
export function starter(deps: ResumeDeps): NonNullable<ResumeDeps['start']> {
  return deps.start ?? ((compiled, req) => deps.engine.start(compiled, req));
}

/**
 * `resumed` when the execution runs again here; `cannot` (nothing started) when it cannot be
 * resumed; `taken` when it changed since it was listed (another instance claimed it: the claim
 * is a guarded write); `error` when the store or the engine failed on the way (nothing claimed).
 */
export type ResumeOutcome = 'resumed' | 'cannot' | 'taken' | 'error';

export async function resumeExecution(deps: ResumeDeps, rec: ExecutionRecord, executionTimeoutMs: number): Promise<ResumeOutcome> {
  try {
    const detail = await deps.store.executions.get(rec.id);
    const stored = await deps.store.workflows.getVersion(rec.workflowId, rec.version);
    if (detail === null || stored === null) return cannot(deps, rec, 'its record or workflow version is gone');
    if (detail.status !== 'running') return 'taken';
    // `troupe run` records into the same data dir, with the file's definition, not a stored version
    if ((rec.trigger as { source?: unknown } | null)?.source === 'cli') return cannot(deps, rec, 'it was started by troupe run');
    const { compiled } = loadWorkflow(stored.definition, deps.registry);
    const planned = planResume(compiled, detail.logs);
    if ('reason' in planned) return cannot(deps, rec, planned.reason);
    const events = await deps.store.executions.listEvents(rec.id);
    const startedAt = Date.parse(rec.startedAt ?? '') || Date.now();
    const activeMs = activeTime(detail, events.at(-1)?.at, startedAt);
    const dropLogs = staleLogs(detail.logs, planned.plan);
    // guarded by the record as listed: what the decision to resume it was based on
    if (!(await claim(deps, rec, activeMs, dropLogs))) return 'taken';
    const handle = await starter(deps)(compiled, {
      ...startAgain(rec),
      // the time it had run before the crash counts; the downtime does not
      timeoutMs: Math.max(0, executionTimeoutMs - activeMs),
      resume: { plan: planned.plan, lastSeq: events.at(-1)?.seq ?? 0, startedAt, limitMs: executionTimeoutMs },
    });
    // not awaited: recovery must not hold up the start of the service
    handle.done.catch((err: unknown) => deps.logger.error({ err, executionId: rec.id }, 'resumed execution failed to finish'));
    deps.logger.info({ executionId: rec.id, settledBlocks: planned.plan.settled.length }, 'resumed an interrupted execution');
    return 'resumed';
  } catch (err) {
    deps.logger.error({ err, executionId: rec.id }, 'cannot resume an interrupted execution');
    return 'error';
  }
}

/**
 * Takes the execution for this process: one guarded write, refused (false) when another
 * instance changed it since it was read. It keeps how long the execution has run, so that a
 * crash of this run too counts only running time (activeTime), and drops the child logs of
 * containers that run again from their first iteration (staleLogs).
 */
async function claim(deps: ResumeDeps, listed: ExecutionRecord, activeMs: number, dropLogs: LogIdentity[]): Promise<boolean> {
  try {
    await deps.store.executions.saveBoundary(listed.id, {
      guard: { status: 'running', context: listed.context ?? null },
      // the token makes every claim a change, even two in the same millisecond
      // counted before the run starts: if this resumption ends the process, the next start knows
      patch: { context: resumedContext(activeMs, new Date(), randomUUID(), (resumedMark(listed.context)?.attempts ?? 0) + 1) },
      ...(dropLogs.length > 0 ? { dropLogs } : {}),
    });
    return true;
  } catch (err) {
    if (isTroupeError(err) && err.code === 'CONFLICT') return false;
    throw err;
  }
}

/** What starts a recorded execution again under its own id: its version, input, trigger and conversation. */
export function startAgain(rec: ExecutionRecord): StartRequest & { executionId: string } {
  return {
    workflowId: rec.workflowId,
    version: rec.version,
    input: rec.input,
    trigger: (rec.trigger ?? { type: 'api' }) as StartRequest['trigger'],
    executionId: rec.id,
    ...conversationOf(rec.trigger),
  };
}

/** A chat execution's conversation (its trigger names it): agent memory and the starter read it. */
function conversationOf(trigger: unknown): { conversationId?: string } {
  const t = trigger as { type?: unknown; conversationId?: unknown } | null;
  return t?.type === 'chat' && typeof t.conversationId === 'string' ? { conversationId: t.conversationId } : {};
}

function cannot(deps: ResumeDeps, rec: ExecutionRecord, why: string): 'cannot' {
  deps.logger.warn({ executionId: rec.id, why }, 'an interrupted execution cannot be resumed; it is failed with INTERRUPTED');
  return 'cannot';
}

/**
 * The logs written inside a top-level loop or parallel that had not settled: it runs again from
 * its first iteration, and an iteration it does not reach again must not keep its earlier log.
 * Also the logs of blocks that were running: they start over and write theirs anew, and one the
 * resumed run never reaches (a response ends it first) must not stay `running`.
 */
export function staleLogs(logs: readonly BlockLog[], plan: ResumePlan): LogIdentity[] {
  const settled = new Set(plan.settled.map((s) => s.blockId));
  return logs.flatMap((log) => {
    const top = outermostContainer(log.iteration);
    // a waiting block runs again too: it finds its due time in the store (waits)
    const stale = top === null ? log.status === 'running' || log.status === 'waiting' : !settled.has(top);
    return stale ? [{ blockId: log.blockId, iteration: log.iteration }] : [];
  });
}

function outermostContainer(iteration: unknown): string | null {
  let at = iteration as { container?: unknown; outer?: unknown } | null | undefined;
  if (at === null || at === undefined) return null;
  while (at.outer !== null && at.outer !== undefined) at = at.outer as { container?: unknown; outer?: unknown };
  return typeof at.container === 'string' ? at.container : null;
}

/**
 * How long the execution has run, downtime left out: from its start (or from the last resume,
 * which left what had run before it in `context.resumed`) until the last thing it did.
 */
function activeTime(rec: { context?: unknown; logs: readonly BlockLog[] }, lastEventAt: string | undefined, startedAt: number): number {
  const mark = resumedMark(rec.context);
  const since = mark?.at ?? startedAt;
  return (mark?.activeMs ?? 0) + (lastActivity(rec.logs, lastEventAt, since) - since);
}

/** When the interrupted run last did something (not before `since`): its newest event or log time. */
function lastActivity(logs: readonly BlockLog[], lastEventAt: string | undefined, since: number): number {
  let last = since;
  const consider = (at: string | null | undefined): void => {
    const ms = at ? Date.parse(at) : Number.NaN;
    if (!Number.isNaN(ms) && ms > last) last = ms;
  };
  consider(lastEventAt);
  for (const log of logs) {
    consider(log.startedAt);
    consider(log.endedAt);
  }
  return last;
}
