import type Database from 'better-sqlite3';
import { checkBatch, clampLimit, conflict, decodeCursor, encodeCursor, fromJson, iso, notFound } from '../shared.js';
import type {
  BlockLog, BoundaryBatch, BoundaryItem, ExecutionEvent, ExecutionListOptions, ExecutionPatch, ExecutionRecord, ExecutionRepo,
  ExecutionStatus, Now, Page,
} from '../types.js';
import type { Db } from './db.js';
import { eventBatchRow, eventsOfBatches, executionRow, logRow, patchColumns, toExecution } from './execution-rows.js';
import type { ExecutionRow } from './execution-rows.js';

type Statement = Database.Statement<unknown[]>;

const LIST_COLUMNS = `id, workflow_id, version, status, trigger, input, output, error, started_at, ended_at,
  duration_ms, NULL AS context, created_at`;

export class SqliteExecutions implements ExecutionRepo {
  private readonly insert;
  private readonly select;
  private readonly exists;
  private readonly selectLogs;
  private readonly upsertLog;
  private readonly upsertEvents;
  private readonly selectEvents;
  /** statements built at run time (patch shapes, list filters), which come in a few shapes only */
  private readonly dynamic = new Map<string, Statement>();

  constructor(private readonly db: Db, private readonly now: Now) {
    this.insert = db.prepare(`INSERT INTO executions (id, workflow_id, version, status, trigger, input, output, error,
      started_at, ended_at, duration_ms, context, created_at) VALUES (@id, @workflow_id, @version, @status, @trigger,
      @input, @output, @error, @started_at, @ended_at, @duration_ms, @context, @created_at) ON CONFLICT (id) DO NOTHING`);
    this.select = db.prepare<[string], ExecutionRow>('SELECT * FROM executions WHERE id = ?');
    this.exists = db.prepare<[string], { one: number }>('SELECT 1 AS one FROM executions WHERE id = ?');
    this.selectLogs = db.prepare<[string], { body: string }>('SELECT body FROM block_logs WHERE execution_id = ? ORDER BY ord, iteration_key, block_id');
    this.upsertLog = db.prepare(`INSERT INTO block_logs (execution_id, block_id, iteration_key, ord, status, body) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (execution_id, block_id, iteration_key) DO UPDATE SET ord = excluded.ord, status = excluded.status, body = excluded.body`);
    this.upsertEvents = db.prepare(`INSERT INTO execution_event_batches (execution_id, first_seq, last_seq, body) VALUES (?, ?, ?, ?)
      ON CONFLICT (execution_id, first_seq) DO UPDATE SET last_seq = excluded.last_seq, body = excluded.body`);
    this.selectEvents = db.prepare<[string, number], { body: string }>(
      'SELECT body FROM execution_event_batches WHERE execution_id = ? AND last_seq > ? ORDER BY first_seq',
    );
  }

  async create(rec: ExecutionRecord): Promise<ExecutionRecord> {
    const row = executionRow(rec, iso(rec.createdAt ?? this.now().toISOString()));
    if (this.insert.run(row).changes === 0) throw conflict('execution', rec.id);
    return toExecution(row, true);
  }

  async update(id: string, patch: ExecutionPatch): Promise<boolean> {
    return this.applyPatch(id, patch);
  }

  async get(id: string): Promise<(ExecutionRecord & { logs: BlockLog[] }) | null> {
    const row = this.select.get(id);
    if (!row) return null;
    const logs = this.selectLogs.all(id).map((r) => fromJson(r.body) as BlockLog);
    return { ...toExecution(row, true), logs };
  }

  async list(workflowId: string, opts: ExecutionListOptions): Promise<Page<ExecutionRecord>> {
    const limit = clampLimit(opts.limit);
    const where = ['workflow_id = ?'];
    const params: (string | number)[] = [workflowId];
    if (opts.status !== undefined) {
      where.push('status = ?');
      params.push(opts.status);
    }
    if (opts.cursor) {
      const [createdAt, id] = decodeCursor(opts.cursor, 2) as [string, string];
      where.push('(created_at, id) < (?, ?)');
      params.push(createdAt, id);
    }
    const sql = `SELECT ${LIST_COLUMNS} FROM executions WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ?`;
    const rows = this.prepared(sql).all(...params, limit + 1) as ExecutionRow[];
    const items = rows.slice(0, limit).map((r) => toExecution(r, false));
    const last = rows[limit - 1];
    return { items, nextCursor: rows.length > limit && last ? encodeCursor([last.created_at, last.id]) : null };
  }

  async saveBoundary(id: string, batch: BoundaryBatch): Promise<void> {
    checkBatch(id, batch);
    this.db.transaction(() => this.writeBoundary(id, batch)).immediate();
  }

  /** One transaction for all; each item in its own savepoint, so one bad item spoils no other. */
  async saveBoundaries(items: readonly BoundaryItem[]): Promise<(Error | null)[]> {
    const results: (Error | null)[] = items.map(() => null);
    const one = this.db.transaction((item: BoundaryItem) => this.writeBoundary(item.id, item.batch));
    this.db.transaction(() => {
      items.forEach((item, i) => {
        try {
          checkBatch(item.id, item.batch);
          one(item);
        } catch (err) {
          results[i] = err instanceof Error ? err : new Error(String(err));
        }
      });
    }).immediate();
    return results;
  }

  private writeBoundary(id: string, batch: BoundaryBatch): void {
    if (batch.create !== undefined) {
      const row = executionRow(batch.create, iso(batch.create.createdAt ?? this.now().toISOString()));
      if (this.insert.run(row).changes === 0) throw conflict('execution', id);
    } else if (!this.exists.get(id)) {
      throw notFound('execution', id);
    }
    if (batch.patch) this.applyPatch(id, batch.patch);
    for (const log of batch.logs ?? []) this.upsertLog.run(...logRow(id, log));
    if (batch.events !== undefined && batch.events.length > 0) this.upsertEvents.run(...eventBatchRow(id, batch.events));
  }

  async listEvents(executionId: string, afterSeq?: number): Promise<ExecutionEvent[]> {
    const after = afterSeq ?? Number.MIN_SAFE_INTEGER;
    return eventsOfBatches(executionId, this.selectEvents.all(executionId, after).map((r) => r.body), after);
  }

  async listByStatus(statuses: readonly ExecutionStatus[], limit: number): Promise<ExecutionRecord[]> {
    if (statuses.length === 0) return [];
    const marks = statuses.map(() => '?').join(', ');
    const sql = `SELECT * FROM executions WHERE status IN (${marks}) ORDER BY created_at, id LIMIT ?`;
    const rows = this.prepared(sql).all(...statuses, clampLimit(limit)) as ExecutionRow[];
    return rows.map((r) => toExecution(r, true));
  }

  private applyPatch(id: string, patch: ExecutionPatch): boolean {
    const cols = patchColumns(patch);
    if (cols.length === 0) return this.exists.get(id) !== undefined;
    const stmt = this.prepared(`UPDATE executions SET ${cols.map(([c]) => `${c} = ?`).join(', ')} WHERE id = ?`);
    return stmt.run(...cols.map(([, v]) => v), id).changes > 0;
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
