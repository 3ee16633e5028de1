/**
 * Executions, block logs and events. A boundary batch (or a group of them) is one transaction
 * that locks the execution rows it writes (SELECT … FOR UPDATE, boundary.ts): two instances
 * racing for the same guarded claim are serialized there, and the second sees the first one's
 * write and is refused with CONFLICT.
 */
import { clampLimit, conflict, decodeCursor, encodeCursor, pageOfRows, fromJson, iso } from '../shared.js';
import type {
  BlockLog, BoundaryBatch, BoundaryItem, ExecutionEvent, ExecutionListOptions, ExecutionPatch, ExecutionQuery, ExecutionRecord, ExecutionRepo,
  ExecutionStatus, Now, Page, StatusCursor,
} from '../types.js';
import { toExecution } from '../rows/executions.js';
import type { ExecutionRow } from '../rows/executions.js';
import { pgExecutionRow, pgPatchColumns } from './rows.js';
import type { PgExecutionRow } from './rows.js';
import type { Pg, Querier } from './db.js';
import { itemWrites, Refused, writeGroup } from './boundary.js';
import type { ItemWrites } from './boundary.js';

const COLUMNS = ['id', 'workflow_id', 'version', 'status', 'trigger', 'input', 'output', 'error', 'started_at', 'ended_at', 'duration_ms', 'context', 'created_at', 'trigger_type'] as const;
const LIST_COLUMNS = COLUMNS.filter((c) => c !== 'trigger_type').map((c) => (c === 'context' ? 'NULL AS context' : c)).join(', ');
const INSERT_EXECUTION = `INSERT INTO executions (${COLUMNS.join(', ')})
  VALUES (${COLUMNS.map((_, i) => `$${i + 1}`).join(', ')}) ON CONFLICT (id) DO NOTHING`;

function insertParams(r: PgExecutionRow): unknown[] {
  return COLUMNS.map((c) => r[c]);
}

export class PgExecutions implements ExecutionRepo {
  constructor(private readonly db: Pg, private readonly now: Now) {}

  async create(rec: ExecutionRecord): Promise<ExecutionRecord> {
    const row = pgExecutionRow(rec, iso(rec.createdAt ?? this.now().toISOString()));
    const inserted = await this.db.query(INSERT_EXECUTION, insertParams(row));
    if (inserted.rowCount === 0) throw conflict('execution', rec.id);
    return toExecution(row, true);
  }

  async update(id: string, patch: ExecutionPatch): Promise<boolean> {
    const op = patchStatement(id, patch);
    if (op === null) return (await this.db.query('SELECT 1 FROM executions WHERE id = $1', [id])).rows.length > 0;
    return ((await this.db.query(op.sql, op.params)).rowCount ?? 0) > 0;
  }

  async get(id: string): Promise<(ExecutionRecord & { logs: BlockLog[] }) | null> {
    const { rows } = await this.db.query<ExecutionRow>('SELECT * FROM executions WHERE id = $1', [id]);
    const row = rows[0];
    if (!row) return null;
    const logs = await this.db.query<{ body: string }>('SELECT body FROM block_logs WHERE execution_id = $1 ORDER BY ord, iteration_key, block_id', [id]);
    return { ...toExecution(row, true), logs: logs.rows.map((r) => fromJson(r.body) as BlockLog) };
  }

  async list(workflowId: string, opts: ExecutionListOptions): Promise<Page<ExecutionRecord>> {
    return this.listWhere({ ...opts, workflowId });
  }

  async listAll(query: ExecutionQuery): Promise<Page<ExecutionRecord>> {
    return this.listWhere(query);
  }

  /** One page newest first; each filter is served by an index (schema.ts, migration 2). */
  private async listWhere(q: ExecutionQuery): Promise<Page<ExecutionRecord>> {
    const limit = clampLimit(q.limit);
    const params: unknown[] = [];
    const where: string[] = [];
    const add = (clause: (n: number) => string, ...values: unknown[]): void => {
      where.push(clause(params.length + 1));
      params.push(...values);
    };
    if (q.workflowId !== undefined) add((n) => `workflow_id = $${n}`, q.workflowId);
    if (q.status !== undefined) add((n) => `status = $${n}`, q.status);
    if (q.triggerType !== undefined) add((n) => `trigger_type = $${n}`, q.triggerType);
    if (q.since !== undefined) add((n) => `created_at >= $${n}`, iso(q.since));
    if (q.until !== undefined) add((n) => `created_at < $${n}`, iso(q.until));
    if (q.cursor) {
      const [createdAt, id] = decodeCursor(q.cursor, 2) as [string, string];
      add((n) => `(created_at, id) < ($${n}, $${n + 1})`, createdAt, id);
    }
    params.push(limit + 1);
    const filter = where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`;
    const sql = `SELECT ${LIST_COLUMNS} FROM executions ${filter} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`;
    const { rows } = await this.db.query<ExecutionRow>(sql, params);
    return pageOfRows(rows, limit, (r) => toExecution(r, false), (_, r) => [r.created_at, r.id]);
  }

  async saveBoundary(id: string, batch: BoundaryBatch): Promise<void> {
    const writes = itemWrites(id, batch, this.now);
    try {
      await this.db.tx((q) => writeGroup(q, [writes]));
    } catch (err) {
      throw err instanceof Refused ? err.error : err;
    }
  }

  /**
   * One transaction for all items, each kind of write one statement for the whole group
   * (boundary.ts). When an item fails, the transaction rolls back and the group runs again
   * with a savepoint per item, so only the failing items are left out.
   */
  async saveBoundaries(items: readonly BoundaryItem[]): Promise<(Error | null)[]> {
    const results: (Error | null)[] = items.map(() => null);
    const prepared: { index: number; writes: ItemWrites }[] = [];
    items.forEach((item, index) => {
      try {
        prepared.push({ index, writes: itemWrites(item.id, item.batch, this.now) });
      } catch (err) {
        results[index] = err instanceof Error ? err : new Error(String(err));
      }
    });
    if (prepared.length === 0) return results;
    // one execution twice in a call: its items must run in turn, each seeing the one before
    const distinct = new Set(prepared.map((p) => p.writes.id)).size === prepared.length;
    if (distinct) {
      try {
        await this.db.tx((q) => writeGroup(q, prepared.map((p) => p.writes)));
        return results;
      } catch {
        // some item failed: the next pass finds which
      }
    }
    await this.db.tx(async (q) => {
      for (const p of prepared) results[p.index] = await writeApart(q, p.writes);
    });
    return results;
  }

  async listEvents(executionId: string, afterSeq?: number): Promise<ExecutionEvent[]> {
    const { rows } = await this.db.query<{ seq: number; event: string; data: string; at: string }>(
      'SELECT seq, event, data, at FROM execution_events WHERE execution_id = $1 AND seq > $2 ORDER BY seq',
      [executionId, afterSeq ?? Number.MIN_SAFE_INTEGER],
    );
    return rows.map((r) => ({ executionId, seq: r.seq, event: r.event, data: fromJson(r.data), at: r.at }));
  }

  async listByStatus(statuses: readonly ExecutionStatus[], limit: number, after?: StatusCursor): Promise<ExecutionRecord[]> {
    if (statuses.length === 0) return [];
    const past = after === undefined ? '' : ' AND (created_at, id) > ($3, $4)';
    const params: unknown[] = [[...statuses], clampLimit(limit)];
    if (after !== undefined) params.push(after.createdAt, after.id);
    const { rows } = await this.db.query<ExecutionRow>(
      `SELECT * FROM executions WHERE status = ANY($1::text[])${past} ORDER BY created_at, id LIMIT $2`, params,
    );
    return rows.map((r) => toExecution(r, true));
  }

  /**
   * One batch in one transaction: rows another instance is purging are skipped, not waited for.
   * PostgreSQL's autovacuum gives the space of deleted rows back to the tables (docs/store.md).
   */
  async purgeEnded(endedBefore: string, limit: number): Promise<number> {
    const cutoff = iso(endedBefore);
    return this.db.tx(async (q) => {
      const { rows } = await q.query<{ id: string }>(`SELECT id FROM executions WHERE status IN ('completed', 'failed', 'cancelled')
        AND created_at < $1 AND ended_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED`, [cutoff, clampLimit(limit)]);
      if (rows.length === 0) return 0;
      const ids = rows.map((r) => r.id);
      await q.query('DELETE FROM block_logs WHERE execution_id = ANY($1::text[])', [ids]);
      await q.query('DELETE FROM execution_events WHERE execution_id = ANY($1::text[])', [ids]);
      const removed = await q.query('DELETE FROM executions WHERE id = ANY($1::text[])', [ids]);
      return removed.rowCount ?? 0;
    });
  }
}

async function writeApart(q: Querier, w: ItemWrites): Promise<Error | null> {
  await q.query('SAVEPOINT item');
  try {
    await writeGroup(q, [w]);
    await q.query('RELEASE SAVEPOINT item');
    return null;
  } catch (err) {
    await q.query('ROLLBACK TO SAVEPOINT item');
    if (err instanceof Refused) return err.error;
    return err instanceof Error ? err : new Error(String(err));
  }
}

interface Statement {
  sql: string;
  params: unknown[];
}

function patchStatement(id: string, patch: ExecutionPatch): Statement | null {
  const cols = pgPatchColumns(patch);
  if (cols.length === 0) return null;
  return { sql: `UPDATE executions SET ${cols.map(([c], i) => `${c} = $${i + 1}`).join(', ')} WHERE id = $${cols.length + 1}`, params: [...cols.map(([, v]) => v), id] };
}
