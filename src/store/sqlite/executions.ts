import { iterationKeyOf } from '../../model/block-run.js';
import type Database from 'better-sqlite3';
import { TroupeError } from '../../errors.js';
import { checkBatch, clampLimit, conflict, decodeCursor, encodeCursor, pageOfRows, contextText, fromJson, iso, notFound } from '../shared.js';
import type {
  BlockLog, BoundaryBatch, BoundaryItem, ExecutionEvent, ExecutionListOptions, ExecutionPatch, ExecutionQuery, ExecutionRecord, ExecutionRepo,
  ExecutionStatus, Now, Page, StatusCursor,
} from '../types.js';
import type { Db } from './db.js';
import { eventBatchRow, eventsOfBatches, executionRow, logRow, patchColumns, toExecution } from '../rows/executions.js';
import type { ExecutionRow } from '../rows/executions.js';
import type { ItemResult, WriteOp, Writer } from './writer.js';
import { fullContext, leanContext, needsLogs } from '../rows/lean-context.js';

type Statement = Database.Statement<unknown[]>;

const LIST_COLUMNS = `id, workflow_id, version, status, trigger, input, output, error, started_at, ended_at,
  duration_ms, NULL AS context, created_at`;

/** the trigger's type, as the index on it (schema.ts) names it */
const TRIGGER_TYPE = "json_extract(trigger, '$.type')";

/**
 * The WHERE of the status indexes (schema.ts, migration 12), which leave completed executions
 * out: SQLite uses a partial index only for a query that has this very term, so a query by
 * statuses other than completed adds it (it changes nothing of what such a query finds).
 */
export const NOT_COMPLETED = "status <> 'completed'";

const INSERT_EXECUTION = `INSERT INTO executions (id, workflow_id, version, status, trigger, input, output, error,
  started_at, ended_at, duration_ms, context, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`;
const EXECUTION_EXISTS = 'SELECT 1 AS one FROM executions WHERE id = ?';
const EXECUTION_AS_SEEN = 'SELECT 1 AS one FROM executions WHERE id = ? AND status = ? AND context IS ?';
const UPSERT_LOG = `INSERT INTO block_logs (execution_id, block_id, iteration_key, ord, status, body) VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (execution_id, block_id, iteration_key) DO UPDATE SET ord = excluded.ord, status = excluded.status, body = excluded.body`;
const DELETE_LOG = 'DELETE FROM block_logs WHERE execution_id = ? AND block_id = ? AND iteration_key = ?';
const UPSERT_EVENTS = `INSERT INTO execution_event_batches (execution_id, first_seq, last_seq, body) VALUES (?, ?, ?, ?)
  ON CONFLICT (execution_id, first_seq) DO UPDATE SET last_seq = excluded.last_seq, body = excluded.body`;

/**
 * The executions one retention batch takes: ended ones, oldest first through executions_by_created
 * (an execution that ended before the cutoff was created before it too), whose status column
 * leaves running and waiting ones out without reading their rows. No index of its own: one more
 * index entry per execution for a job that runs hourly.
 */
const ENDED_BATCH = `SELECT id FROM executions WHERE status IN ('completed', 'failed', 'cancelled')
  AND created_at < @cutoff AND ended_at < @cutoff LIMIT @limit`;
/** The three deletes of a batch select the same executions: the first two leave the executions table as it is. */
const PURGE_OPS = [
  `DELETE FROM block_logs WHERE execution_id IN (${ENDED_BATCH})`,
  `DELETE FROM execution_event_batches WHERE execution_id IN (${ENDED_BATCH})`,
  `DELETE FROM executions WHERE id IN (${ENDED_BATCH})`,
];

/**
 * Reads run on the service's connection; every write goes through the writer (a thread of its
 * own for a file), in order, as statements whose rows are built here.
 */
export class SqliteExecutions implements ExecutionRepo {
  private readonly select;
  private readonly exists;
  private readonly selectLogs;
  private readonly selectEvents;
  /** statements built at run time (list filters), which come in a few shapes only */
  private readonly dynamic = new Map<string, Statement>();

  constructor(private readonly db: Db, private readonly now: Now, private readonly writer: Writer) {
    this.select = db.prepare<[string], ExecutionRow>('SELECT * FROM executions WHERE id = ?');
    this.exists = db.prepare<[string], { one: number }>(EXECUTION_EXISTS);
    this.selectLogs = db.prepare<[string], { body: string }>('SELECT body FROM block_logs WHERE execution_id = ? ORDER BY ord, iteration_key, block_id');
    this.selectEvents = db.prepare<[string, number], { body: string }>(
      'SELECT body FROM execution_event_batches WHERE execution_id = ? AND last_seq > ? ORDER BY first_seq',
    );
  }

  async create(rec: ExecutionRecord): Promise<ExecutionRecord> {
    const row = executionRow(rec, iso(rec.createdAt ?? this.now().toISOString()));
    const [result] = await this.writer.run([[insertOp(row)]]);
    this.check(rec.id, result);
    return toExecution(row, true);
  }

  async update(id: string, patch: ExecutionPatch): Promise<boolean> {
    const op = this.patchOp(id, patch);
    if (op === null) return this.exists.get(id) !== undefined;
    const [result] = await this.writer.run([[op]]);
    return (this.check(id, result)[0] ?? 0) > 0;
  }

  async get(id: string): Promise<(ExecutionRecord & { logs: BlockLog[] }) | null> {
    const row = this.select.get(id);
    if (!row) return null;
    const logs = this.logsOf(id);
    const rec = toExecution(row, true);
    if (needsLogs(rec.context)) rec.context = fullContext(rec.context, logs);
    return { ...rec, logs };
  }

  private logsOf(id: string): BlockLog[] {
    return this.selectLogs.all(id).map((r) => fromJson(r.body) as BlockLog);
  }

  async list(workflowId: string, opts: ExecutionListOptions): Promise<Page<ExecutionRecord>> {
    return this.listWhere({ ...opts, workflowId });
  }

  async listAll(query: ExecutionQuery): Promise<Page<ExecutionRecord>> {
    return this.listWhere(query);
  }

  /** One page newest first; the filters match the indexes of migrations 7 and 12. */
  private listWhere(q: ExecutionQuery): Page<ExecutionRecord> {
    const limit = clampLimit(q.limit);
    const where: string[] = [];
    const params: (string | number)[] = [];
    const add = (clause: string, value: string): void => {
      where.push(clause);
      params.push(value);
    };
    if (q.workflowId !== undefined) add('workflow_id = ?', q.workflowId);
    if (q.status !== undefined) add('status = ?', q.status);
    if (q.status !== undefined && q.status !== 'completed') where.push(NOT_COMPLETED);
    if (q.triggerType !== undefined) add(`${TRIGGER_TYPE} = ?`, q.triggerType);
    if (q.since !== undefined) add('created_at >= ?', iso(q.since));
    if (q.until !== undefined) add('created_at < ?', iso(q.until));
    if (q.cursor) {
      const [createdAt, id] = decodeCursor(q.cursor, 2) as [string, string];
      where.push('(created_at, id) < (?, ?)');
      params.push(createdAt, id);
    }
    const filter = where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`;
    const sql = `SELECT ${LIST_COLUMNS} FROM executions ${filter} ORDER BY created_at DESC, id DESC LIMIT ?`;
    const rows = this.prepared(sql).all(...params, limit + 1) as ExecutionRow[];
    return pageOfRows(rows, limit, (r) => toExecution(r, false), (_, r) => [r.created_at, r.id]);
  }

  async saveBoundary(id: string, batch: BoundaryBatch): Promise<void> {
    const [result] = await this.writer.run([this.boundaryOps(id, batch)]);
    this.check(id, result);
  }

  /**
   * One transaction for all; one bad item spoils no other (write-ops.cjs). Not an async function:
   * while the writer commits, only the ids are kept, not the batches and the statements built from
   * them (under load they were what a scavenge found alive and promoted).
   */
  saveBoundaries(items: readonly BoundaryItem[]): Promise<(Error | null)[]> {
    const results: (Error | null)[] = items.map(() => null);
    const sent: [number, string][] = [];
    const ops: WriteOp[][] = [];
    items.forEach((item, i) => {
      try {
        ops.push(this.boundaryOps(item.id, item.batch));
        sent.push([i, item.id]);
      } catch (err) {
        results[i] = err instanceof Error ? err : new Error(String(err));
      }
    });
    if (ops.length === 0) return Promise.resolve(results);
    return this.writer.run(ops).then((written) => {
      sent.forEach(([i, id], k) => {
        try {
          this.check(id, written[k]);
        } catch (err) {
          results[i] = err as Error;
        }
      });
      return results;
    });
  }

  async listEvents(executionId: string, afterSeq?: number): Promise<ExecutionEvent[]> {
    const after = afterSeq ?? Number.MIN_SAFE_INTEGER;
    return eventsOfBatches(executionId, this.selectEvents.all(executionId, after).map((r) => r.body), after);
  }

  async listByStatus(statuses: readonly ExecutionStatus[], limit: number, after?: StatusCursor): Promise<ExecutionRecord[]> {
    if (statuses.length === 0) return [];
    const marks = statuses.map(() => '?').join(', ');
    const past = after === undefined ? '' : ' AND (created_at > ? OR (created_at = ? AND id > ?))';
    const partial = statuses.includes('completed') ? '' : ` AND ${NOT_COMPLETED}`;
    const sql = `SELECT * FROM executions WHERE status IN (${marks})${partial}${past} ORDER BY created_at, id LIMIT ?`;
    const cursor = after === undefined ? [] : [after.createdAt, after.createdAt, after.id];
    const rows = this.prepared(sql).all(...statuses, ...cursor, clampLimit(limit)) as ExecutionRow[];
    return rows.map((r) => {
      const rec = toExecution(r, true);
      if (needsLogs(rec.context)) rec.context = fullContext(rec.context, this.logsOf(rec.id));
      return rec;
    });
  }

  /**
   * On the writer (a thread for a file), so the deletes never hold the service's event loop; the
   * pages they free go back to the file system in the same transaction.
   */
  async purgeEnded(endedBefore: string, limit: number): Promise<number> {
    const params = [{ cutoff: iso(endedBefore), limit: clampLimit(limit) }];
    const ops: WriteOp[] = PURGE_OPS.map((sql) => ({ sql, params }));
    ops.push({ sql: 'PRAGMA incremental_vacuum', params: [], exec: true });
    const [result] = await this.writer.run([ops]);
    if (result === undefined || !('changes' in result)) {
      throw new TroupeError('STORE_ERROR', `purging ended executions failed: ${result?.message ?? 'no result'}`, { retryable: true });
    }
    return result.changes[2] ?? 0;
  }

  /** Throws before anything is sent when the batch is malformed. */
  private boundaryOps(id: string, batch: BoundaryBatch): WriteOp[] {
    checkBatch(id, batch);
    const ops: WriteOp[] = [];
    const patch = batch.patch ? this.patchOp(id, leanPatch(batch.patch, batch.logs)) : null;
    if (batch.create !== undefined) {
      const created = leanPatch(batch.create, batch.logs);
      ops.push(insertOp(executionRow(created, iso(created.createdAt ?? this.now().toISOString()))));
    } else if (patch !== null && batch.guard === undefined) {
      // the update finds the row or fails the item as the existence check would: one statement less
      patch.expect = 'change';
      patch.code = 'NOT_FOUND';
    } else {
      ops.push({ sql: EXECUTION_EXISTS, params: [id], expect: 'row', code: 'NOT_FOUND' });
    }
    if (batch.guard !== undefined) {
      ops.push({ sql: EXECUTION_AS_SEEN, params: [id, batch.guard.status, contextText(batch.guard.context)], expect: 'row', code: 'CONFLICT', message: `execution ${id} changed meanwhile` });
    }
    if (patch !== null) ops.push(patch);
    for (const drop of batch.dropLogs ?? []) ops.push({ sql: DELETE_LOG, params: [id, drop.blockId, iterationKeyOf(drop.iteration)] });
    for (const log of batch.logs ?? []) ops.push({ sql: UPSERT_LOG, params: logRow(id, log) });
    if (batch.events !== undefined && batch.events.length > 0) ops.push({ sql: UPSERT_EVENTS, params: eventBatchRow(id, batch.events) });
    return ops;
  }

  private patchOp(id: string, patch: ExecutionPatch): WriteOp | null {
    const cols = patchColumns(patch);
    if (cols.length === 0) return null;
    return { sql: `UPDATE executions SET ${cols.map(([c]) => `${c} = ?`).join(', ')} WHERE id = ?`, params: [...cols.map(([, v]) => v), id] };
  }

  /** The item's changes per op, or the error its refused guard stands for. */
  private check(id: string, result: ItemResult | undefined): number[] {
    if (result === undefined) throw new TroupeError('STORE_ERROR', `no result for the write of execution ${id}`);
    if ('changes' in result) return result.changes;
    if (result.code === 'CONFLICT') throw conflict('execution', id);
    if (result.code === 'NOT_FOUND') throw notFound('execution', id);
    throw new TroupeError('STORE_ERROR', `writing execution ${id} failed: ${result.message}`, { retryable: true, details: { executionId: id } });
  }

  private prepared(sql: string): Statement {
    let stmt = this.dynamic.get(sql);
    if (!stmt) {
      stmt = this.db.prepare<unknown[]>(sql);
      this.dynamic.set(sql, stmt);
    }
    return stmt;
  }
}

function insertOp(r: ExecutionRow): WriteOp {
  const params = [r.id, r.workflow_id, r.version, r.status, r.trigger, r.input, r.output, r.error, r.started_at, r.ended_at, r.duration_ms, r.context, r.created_at];
  return { sql: INSERT_EXECUTION, params, expect: 'change', code: 'CONFLICT' };
}

/** The record's fields with its context as stored (lean-context.ts): the same object when nothing is derived. */
function leanPatch<T extends ExecutionPatch>(rec: T, logs: BoundaryBatch['logs']): T {
  if (rec.context === undefined || rec.context === null) return rec;
  const context = leanContext(rec.context, rec.status, logs);
  return context === rec.context ? rec : { ...rec, context };
}
