/**
 * Wakes parked executions (SPEC §2.1; docs/waiting.md). One service-level poll over the store's
 * due-time index (`waits`), through the injected clock: no timer per execution. A due entry of a
 * `waiting` execution resumes it from its stored logs, as restart recovery resumes an
 * interrupted one (resumption.ts): settled blocks are not run again, and the waiting blocks run
 * again, find their due time passed and complete. On a shared store several instances may see
 * the same entry: the claim is a guarded write, and one wins. In a cluster the waker does not
 * resume what it finds itself: it hands each wake-up to the work queue (`dispatch`), whose one
 * taker resumes it (cluster/work-queue.ts), so wake-ups spread over the instances like the rest.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { planResume, resumedContext } from '../model/resume.js';
import { loadWorkflow } from '../runtime/workflows.js';
import { isTroupeError } from '../errors.js';
import { PeriodicWork } from '../service/background.js';
import type { ExecutionRecord, BlockLog, WaitEntry } from '../store/types.js';
import { markInterrupted } from './recovery.js';
import { staleLogs, startAgain, starter, type ResumeDeps, type ResumeOutcome } from './resumption.js';

const BATCH = 500;
const ENDED = new Set(['completed', 'failed', 'cancelled']);

/** What a wake-up needs: the resumption's, and in a cluster the lease taken once the record is claimed. */
export interface WakeDeps extends ResumeDeps {
  /** takes the woken execution's lease here (cluster/leases.ts adopt): a lease left by the run that parked it is stale */
  adopt?: (executionId: string) => Promise<void>;
}

export interface WakerOptions {
  executionTimeoutMs: number;
  pollMs: number;
  /** the clock the due times are read against (tests inject theirs) */
  now?: () => number;
  /** in a cluster: publishes the wake-up to the work queue instead of resuming it here */
  dispatch?: (entry: WaitEntry) => Promise<void>;
}

/** The running time a parked execution had used, from its record (engine.parkRecord). */
export function parkedActiveMs(context: unknown): number {
  const parked = (context as { parked?: { activeMs?: unknown } } | null | undefined)?.parked;
  return typeof parked?.activeMs === 'number' ? parked.activeMs : 0;
}

export class Waker {
  private readonly work: PeriodicWork;

  constructor(private readonly deps: WakeDeps, private readonly opts: WakerOptions) {
    this.work = new PeriodicWork((err) => deps.logger.error({ err }, 'waking waiting executions failed'));
  }

  start(): void {
    this.work.start(this.opts.pollMs, () => this.tick());
  }

  stop(): Promise<void> {
    return this.work.stop();
  }

  /** One pass: every execution with a wait due; returns how many were woken here or handed to the queue. */
  async tick(): Promise<number> {
    const now = new Date((this.opts.now ?? Date.now)()).toISOString();
    const due = await this.deps.store.waits.due(now, BATCH);
    const first = new Map<string, WaitEntry>();
    for (const e of due) if (!first.has(e.executionId)) first.set(e.executionId, e);
    let woken = 0;
    for (const entry of first.values()) {
      if (this.work.stopped) break;
      const outcome = await this.handOut(entry);
      if (outcome === 'resumed' || outcome === 'queued') woken += 1;
    }
    return woken;
  }

  /** To the work queue in a cluster; here when there is none, or it cannot be reached (the claim still decides). */
  private async handOut(entry: WaitEntry): Promise<ResumeOutcome | 'skipped' | 'queued'> {
    const dispatch = this.opts.dispatch;
    if (dispatch !== undefined) {
      try {
        await dispatch(entry);
        return 'queued';
      } catch (err) {
        this.deps.logger.warn({ err, executionId: entry.executionId }, 'a wake-up could not be queued: this instance resumes it');
      }
    }
    return wakeDue(this.deps, entry.executionId, this.opts.executionTimeoutMs);
  }
}

/**
 * Wakes one execution whose wait fell due, unless it ended (its entries are dropped) or runs
 * already (its block completes the wait); one that cannot be resumed is failed.
 */
export async function wakeDue(deps: WakeDeps, id: string, executionTimeoutMs: number): Promise<ResumeOutcome | 'skipped'> {
  const rec = await deps.store.executions.get(id);
  // entries of executions that ended (cancelled while waiting, say) or are gone are dropped
  if (rec === null || ENDED.has(rec.status)) {
    await deps.store.waits.delete(id);
    return 'skipped';
  }
  // running: in memory here or elsewhere, its block completes the wait (or recovery resumes it)
  if (rec.status !== 'waiting') return 'skipped';
  const outcome = await wakeExecution(deps, rec, executionTimeoutMs);
  if (outcome === 'cannot' && (await markInterrupted(deps.store.executions, rec, new Date(), true)) !== false) {
    await deps.store.waits.delete(id);
    deps.engine.announce('failed', { executionId: rec.id, workflowId: rec.workflowId, trigger: rec.trigger, status: 'failed', durationMs: null });
  }
  return outcome;
}

/** Resumes one parked execution here; `taken` when another instance claimed it first. */
export async function wakeExecution(deps: WakeDeps, rec: ExecutionRecord & { logs: BlockLog[] }, executionTimeoutMs: number): Promise<ResumeOutcome> {
  try {
    const stored = await deps.store.workflows.getVersion(rec.workflowId, rec.version);
    if (stored === null) return cannot(deps, rec, 'its workflow version is gone');
    const { compiled } = loadWorkflow(stored.definition, deps.registry);
    const planned = planResume(compiled, rec.logs);
    if ('reason' in planned) return cannot(deps, rec, planned.reason);
    const events = await deps.store.executions.listEvents(rec.id);
    const activeMs = parkedActiveMs(rec.context);
    const dropLogs = staleLogs(rec.logs, planned.plan);
    if (!(await claimParked(deps, rec, activeMs, dropLogs))) return 'taken';
    // before it runs: the first renewal would otherwise find the parking instance's lease and stop the run as lost
    await deps.adopt?.(rec.id).catch((err: unknown) => deps.logger.warn({ err, executionId: rec.id }, 'cannot take the lease of a woken execution'));
    const handle = await starter(deps)(compiled, {
      ...startAgain(rec),
      // only running time counts: the time it spent parked does not (SPEC §2.1)
      timeoutMs: Math.max(0, executionTimeoutMs - activeMs),
      resume: { plan: planned.plan, lastSeq: events.at(-1)?.seq ?? 0, startedAt: Date.parse(rec.startedAt ?? '') || Date.now(), limitMs: executionTimeoutMs },
    });
    handle.done.catch((err: unknown) => deps.logger.error({ err, executionId: rec.id }, 'woken execution failed to finish'));
    deps.logger.info({ executionId: rec.id }, 'woke a waiting execution');
    return 'resumed';
  } catch (err) {
    deps.logger.error({ err, executionId: rec.id }, 'cannot wake a waiting execution');
    return 'error';
  }
}

async function claimParked(deps: ResumeDeps, rec: ExecutionRecord, activeMs: number, dropLogs: ReturnType<typeof staleLogs>): Promise<boolean> {
  try {
    await deps.store.executions.saveBoundary(rec.id, {
      guard: { status: 'waiting', context: rec.context ?? null },
      // a wake-up starts a new count of resumptions that end with the process (docs/operations.md)
      patch: { status: 'running', context: resumedContext(activeMs, new Date(), randomUUID(), 1) },
      ...(dropLogs.length > 0 ? { dropLogs } : {}),
    });
    return true;
  } catch (err) {
    if (isTroupeError(err) && err.code === 'CONFLICT') return false;
    throw err;
  }
}

function cannot(deps: ResumeDeps, rec: ExecutionRecord, why: string): 'cannot' {
  deps.logger.warn({ executionId: rec.id, why }, 'a waiting execution cannot be resumed; it is failed with INTERRUPTED');
  return 'cannot';
}
