/**
 * Resuming a `running` execution that a crash interrupted, from its last persisted block
 * boundary (DESIGN "The shape"; docs/operations.md "Restart recovery"): the blocks whose logs
 * say they settled are not run again, the blocks that were running start over, and the rest run
 * as their inputs settle. Only with the embedded store, where the data dir belongs to this
 * process: on a shared store a starting instance cannot tell an orphan from a live run.
 */
import type { Logger } from 'pino';
import { planResume } from '../model/resume.js';
import type { BlockTypeRegistry } from '../model/types.js';
import type { Engine } from '../runtime/engine.js';
import type { BlockLogEntry, StartRequest } from '../runtime/types.js';
import { loadWorkflow } from '../runtime/workflows.js';
import type { BlockLog, ExecutionRecord, Store } from '../store/types.js';

export interface ResumeDeps {
  store: Store;
  engine: Engine;
  registry: BlockTypeRegistry;
  logger: Logger;
}

/** True when the execution runs again; false (nothing started) when it cannot be resumed. */
export async function resumeExecution(deps: ResumeDeps, rec: ExecutionRecord, executionTimeoutMs: number): Promise<boolean> {
  try {
    const detail = await deps.store.executions.get(rec.id);
    const stored = await deps.store.workflows.getVersion(rec.workflowId, rec.version);
    if (detail === null || stored === null) return cannot(deps, rec, 'its record or workflow version is gone');
    const { compiled } = loadWorkflow(stored.definition, deps.registry);
    const planned = planResume(compiled, detail.logs);
    if ('reason' in planned) return cannot(deps, rec, planned.reason);
    const events = await deps.store.executions.listEvents(rec.id);
    const startedAt = Date.parse(rec.startedAt ?? '') || Date.now();
    const lastActive = lastActivity(detail.logs, events.at(-1)?.at, startedAt);
    const handle = await deps.engine.start(compiled, {
      ...startAgain(rec),
      // the time it had run before the crash counts; the downtime does not
      timeoutMs: Math.max(0, executionTimeoutMs - (lastActive - startedAt)),
      resume: { plan: planned.plan, open: openLogs(detail.logs), lastSeq: events.at(-1)?.seq ?? 0, startedAt },
    });
    // not awaited: recovery must not hold up the start of the service
    handle.done.catch((err: unknown) => deps.logger.error({ err, executionId: rec.id }, 'resumed execution failed to finish'));
    deps.logger.info({ executionId: rec.id, settledBlocks: planned.plan.settled.length }, 'resumed an interrupted execution');
    return true;
  } catch (err) {
    deps.logger.error({ err, executionId: rec.id }, 'cannot resume an interrupted execution');
    return false;
  }
}

/** What starts a recorded execution again under its own id: its version, input, trigger and conversation. */
export function startAgain(rec: ExecutionRecord): StartRequest {
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

function cannot(deps: ResumeDeps, rec: ExecutionRecord, why: string): false {
  deps.logger.warn({ executionId: rec.id, why }, 'an interrupted execution cannot be resumed; it is failed with INTERRUPTED');
  return false;
}

/** Logs of blocks that had started and not settled: the resumed run replaces or cancels them. */
function openLogs(logs: readonly BlockLog[]): BlockLogEntry[] {
  return logs.filter((l) => l.status === 'running' || l.status === 'pending') as BlockLogEntry[];
}

/** When the interrupted run last did something: its newest event or log time. */
function lastActivity(logs: readonly BlockLog[], lastEventAt: string | undefined, startedAt: number): number {
  let last = startedAt;
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
