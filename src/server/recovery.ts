/**
 * Restart recovery: no execution stays `queued` or `running` after the process that owned it is
 * gone. `running` ones resume from their last persisted block boundary (resumption.ts; completed
 * blocks are not run again, and one instance wins the claim on a shared store) or, when that
 * cannot be done, are failed with INTERRUPTED; `queued` ones had started no block and are run
 * from scratch under their own id (failed on a shared store). On a shared store only stale
 * records are touched. Decision and rationale: docs/operations.md.
 */
import type { Logger } from 'pino';
import { isTroupeError } from '../errors.js';
import type { BlockTypeRegistry } from '../model/types.js';
import type { Engine } from '../engine/engine.js';
import type { ExecutionError, ExecutionResult } from '../runtime/types.js';
import type { Bus } from '../bus/types.js';
import { loadWorkflow } from '../runtime/workflows.js';
import { resumedMark, resumeRefusal } from '../model/resume.js';
import { resumeExecution, startAgain, starter, type ResumeDeps } from './resumption.js';
import type { BlockLog, BoundaryItem, ExecutionRecord, ExecutionRepo, StatusCursor, Store } from '../store/types.js';

export const INTERRUPTED_MESSAGE = 'the service stopped while this execution was running';
/** Resumptions cut off by the process's end before an execution is failed with RESUME_LIMIT (TROUPE_MAX_RESUME_ATTEMPTS). */
export const DEFAULT_MAX_RESUME_ATTEMPTS = 3;
const BATCH = 500;

export interface RecoveryDeps {
  store: Store;
  engine: Engine;
  registry: BlockTypeRegistry;
  logger: Logger;
  now?: () => Date;
  /**
   * set: an execution failed here is announced (SPEC §5 `execution.failed`) through the engine,
   * which publishes on its own bus and prefix (these) and holds the event while NATS is away
   */
  events?: { bus: Bus; prefix: string };
  start?: ResumeDeps['start'];
}

export interface RecoveryOptions {
  /**
   * `exclusive`: this process is the only one using the store (SQLite in its data dir), so every
   * unfinished record is an orphan. `shared`: other instances may be running executions right
   * now, so only records started or last resumed longer than `staleAfterMs` ago (past any
   * execution's time limit) are touched; running ones are resumed by whichever instance claims
   * them first, and queued ones are failed rather than re-run (two instances could both pick them).
   */
  mode: 'exclusive' | 'shared';
  staleAfterMs: number;
  /** an execution's time limit: a resumed run gets what its first run left of it */
  executionTimeoutMs: number;
  /**
   * Resumptions of one execution that may end with the process before it is failed with
   * RESUME_LIMIT instead of resumed again (DEFAULT_MAX_RESUME_ATTEMPTS when absent)
   */
  maxResumeAttempts?: number;
}

export interface RecoveryReport {
  interrupted: string[];
  rerun: string[];
  resumed: string[];
  /** failed with RESUME_LIMIT: their resumptions kept ending the process */
  refused: string[];
}

export async function recoverExecutions(deps: RecoveryDeps, opts: RecoveryOptions): Promise<RecoveryReport> {
  const now = deps.now ?? (() => new Date());
  const report: RecoveryReport = { interrupted: [], rerun: [], resumed: [], refused: [] };
  const repo = deps.store.executions;
  // exclusive: every unfinished record is an orphan; shared: only one no instance can still be running
  const stale = (since: number): boolean => opts.mode === 'exclusive' || since < now().getTime() - opts.staleAfterMs;
  await drainOrphans(repo, ['running'], (rec) => stale(lastClaimedAt(rec)), async (rec) => {
    const refusal = resumeRefusal(resumedMark(rec.context), opts.maxResumeAttempts ?? DEFAULT_MAX_RESUME_ATTEMPTS);
    if (refusal !== null) {
      // not resumed again blindly: it may be what ended the process each time
      deps.logger.error({ executionId: rec.id, why: refusal }, 'an interrupted execution is failed with RESUME_LIMIT instead of resumed');
      const error = { code: 'RESUME_LIMIT', message: refusal, blockId: null };
      if (await interrupt(deps, rec, now(), opts.mode === 'shared', error)) report.refused.push(rec.id);
      return;
    }
    const outcome = await resumeExecution(deps, rec, opts.executionTimeoutMs);
    if (outcome === 'resumed') report.resumed.push(rec.id);
    // on a shared store a failure on the way leaves it to the next sweep, and failing it is
    // guarded like a claim: another instance may have resumed it since it was listed
    const fail = outcome === 'cannot' || (outcome === 'error' && opts.mode === 'exclusive');
    if (fail && (await interrupt(deps, rec, now(), opts.mode === 'shared'))) report.interrupted.push(rec.id);
  });
  await drainOrphans(repo, ['queued'], (rec) => stale(startTime(rec)), async (rec) => {
    // on a shared store a queued one is failed rather than re-run: two instances could both pick it
    if (opts.mode === 'shared') {
      if (await interrupt(deps, rec, now(), true)) report.interrupted.push(rec.id);
    } else if (await rerun(deps, rec, now)) report.rerun.push(rec.id);
    else report.interrupted.push(rec.id);
  });
  if (report.interrupted.length + report.rerun.length + report.resumed.length + report.refused.length > 0) {
    deps.logger.warn(
      { interrupted: report.interrupted.length, rerun: report.rerun.length, resumed: report.resumed.length, refused: report.refused.length },
      'recovered executions left unfinished by a previous process',
    );
  }
  return report;
}

/**
 * Hands every record in `statuses` that `stale` accepts to `handle`, oldest first, page by page
 * past the last one seen: `handle` may leave a record in those statuses (a resumed execution
 * stays `running`), so listing from the start again would return the same page forever.
 */
async function drainOrphans(
  repo: ExecutionRepo,
  statuses: ExecutionRecord['status'][],
  stale: (rec: ExecutionRecord) => boolean,
  handle: (rec: ExecutionRecord) => Promise<void>,
): Promise<void> {
  let after: StatusCursor | undefined;
  for (;;) {
    const batch = await repo.listByStatus(statuses, BATCH, after);
    for (const rec of batch) if (stale(rec)) await handle(rec);
    const last = batch.at(-1);
    if (batch.length < BATCH || last?.createdAt === undefined || last.createdAt === null) return;
    after = { createdAt: last.createdAt, id: last.id };
  }
}

function startTime(rec: ExecutionRecord): number {
  const at = rec.startedAt ?? rec.createdAt;
  return at === undefined || at === null ? 0 : Date.parse(at);
}

/** When an execution last showed for sure that it was alive: its start, or its latest resumption. */
function lastClaimedAt(rec: ExecutionRecord): number {
  return Math.max(startTime(rec), resumedMark(rec.context)?.at ?? Number.NEGATIVE_INFINITY);
}

/** Fails the record (markInterrupted) and publishes `execution.failed` as the engine would have. */
async function interrupt(deps: RecoveryDeps, rec: ExecutionRecord, at: Date, guarded = false, error?: ExecutionError): Promise<boolean> {
  const durationMs = await markInterrupted(deps.store.executions, rec, at, guarded, error);
  if (durationMs === false) return false;
  if (deps.events !== undefined) {
    // the record is failed whatever becomes of the announcement; the engine never throws here
    deps.engine.announce('failed', { executionId: rec.id, workflowId: rec.workflowId, trigger: rec.trigger, status: 'failed', durationMs });
  }
  return true;
}

/**
 * Fails the record with INTERRUPTED (or the `error` given) and appends the `done` event live SSE
 * readers wait for. Returns the duration recorded, or false when the record is gone.
 */
export async function markInterrupted(
  repo: ExecutionRepo,
  rec: ExecutionRecord,
  at: Date,
  guarded = false,
  error: ExecutionError = { code: 'INTERRUPTED', message: INTERRUPTED_MESSAGE, blockId: null },
): Promise<number | false> {
  const endedAt = at.toISOString();
  const started = rec.startedAt === null ? null : Date.parse(rec.startedAt);
  const durationMs = started === null || Number.isNaN(started) ? null : Math.max(0, at.getTime() - started);
  const events = await repo.listEvents(rec.id);
  const seq = (events.at(-1)?.seq ?? 0) + 1;
  const cancelled = await cancelledLogs(repo, rec.id, at);
  const done: ExecutionResult = {
    id: rec.id,
    workflowId: rec.workflowId,
    version: rec.version,
    status: 'failed',
    output: null,
    error,
    response: null,
    startedAt: rec.startedAt ?? endedAt,
    endedAt,
    durationMs: durationMs ?? 0,
  };
  try {
    await repo.saveBoundary(rec.id, {
      // guarded: only while it is still as listed (status and context), else someone else has it
      ...(guarded ? { guard: { status: rec.status, context: rec.context ?? null } } : {}),
      patch: { status: 'failed', output: null, error, endedAt, durationMs },
      ...(cancelled.length > 0 ? { logs: cancelled } : {}),
      events: [{ executionId: rec.id, seq, event: 'done', data: done, at: endedAt }],
    });
    return done.durationMs;
  } catch (err) {
    if (isTroupeError(err) && (err.code === 'NOT_FOUND' || (guarded && err.code === 'CONFLICT'))) return false;
    throw err;
  }
}

/** The logs of blocks that were running when the process stopped, ended as cancelled at `at`. */
async function cancelledLogs(repo: ExecutionRepo, id: string, at: Date): Promise<BlockLog[]> {
  const logs = (await repo.get(id))?.logs ?? [];
  return logs.filter((log) => log.status === 'running').map((log) => {
    const started = log.startedAt === null ? Number.NaN : Date.parse(log.startedAt);
    return { ...log, status: 'cancelled', endedAt: at.toISOString(), durationMs: Number.isNaN(started) ? null : Math.max(0, at.getTime() - started) };
  });
}

/** Starts a queued execution again under its own id; false (and failed) when it cannot run. */
async function rerun(deps: RecoveryDeps, rec: ExecutionRecord, now: () => Date): Promise<boolean> {
  try {
    const stored = await deps.store.workflows.getVersion(rec.workflowId, rec.version);
    if (stored === null) throw new Error(`workflow ${rec.workflowId} version ${rec.version} no longer exists`);
    const { compiled } = loadWorkflow(stored.definition, deps.registry);
    const handle = await starter(deps)(compiled, startAgain(rec));
    // the handle is not awaited: recovery must not hold up the start of the service
    handle.done.catch((err: unknown) => deps.logger.error({ err, executionId: rec.id }, 'recovered execution failed to finish'));
    return true;
  } catch (err) {
    deps.logger.error({ err, executionId: rec.id }, 'cannot re-run a queued execution');
    await interrupt(deps, rec, now());
    return false;
  }
}

/**
 * The engine always creates a fresh record; a queued execution being run again already has one.
 * This view of the repo turns `create` over an existing *queued* record into an update, and keeps
 * CONFLICT for every other duplicate id.
 */
export function requeueAwareExecutions(repo: ExecutionRepo): ExecutionRepo {
  return {
    async create(rec) {
      try {
        return await repo.create(rec);
      } catch (err) {
        if (!isTroupeError(err) || err.code !== 'CONFLICT') throw err;
        const existing = await repo.get(rec.id);
        if (existing?.status !== 'queued') throw err;
        const { id: _id, createdAt: _createdAt, ...patch } = rec;
        await repo.update(rec.id, patch);
        return { ...rec, createdAt: existing.createdAt ?? rec.createdAt };
      }
    },
    update: (id, patch) => repo.update(id, patch),
    get: (id) => repo.get(id),
    list: (workflowId, opts) => repo.list(workflowId, opts),
    listAll: (query) => repo.listAll(query),
    saveBoundary: (id, batch) => repo.saveBoundary(id, batch),
    async saveBoundaries(items) {
      const results = await repo.saveBoundaries(items);
      return Promise.all(results.map((err, i) => (err === null ? null : requeued(repo, items[i], err))));
    },
    listEvents: (id, afterSeq) => repo.listEvents(id, afterSeq),
    listByStatus: (statuses, limit, after) => repo.listByStatus(statuses, limit, after),
    purgeEnded: (endedBefore, limit) => repo.purgeEnded(endedBefore, limit),
  };
}

/**
 * A batch whose `create` met the existing record of a queued execution (being run again): the
 * record is updated instead and the rest of the batch written. Any other error stands.
 */
async function requeued(repo: ExecutionRepo, item: BoundaryItem | undefined, err: Error): Promise<Error | null> {
  const create = item?.batch.create;
  if (item === undefined || create === undefined || !isTroupeError(err) || err.code !== 'CONFLICT') return err;
  const existing = await repo.get(item.id);
  if (existing?.status !== 'queued') return err;
  const { id: _id, createdAt: _createdAt, ...fields } = create;
  try {
    await repo.saveBoundary(item.id, { ...item.batch, create: undefined, patch: { ...fields, ...item.batch.patch } });
    return null;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
