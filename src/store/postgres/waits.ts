import type { WaitEntry, WaitRepo } from '../types.js';
import type { Pg } from './db.js';

interface Row { execution_id: string; key: string; workflow_id: string; since: string; due_at: string }

function entryOf(r: Row): WaitEntry {
  return { executionId: r.execution_id, key: r.key, workflowId: r.workflow_id, since: r.since, dueAt: r.due_at };
}

/** Not in CASCADE_TABLES: an entry belongs to an execution, which outlives its workflow. */
export class PgWaits implements WaitRepo {
  constructor(private readonly db: Pg) {}

  async begin(entry: WaitEntry): Promise<WaitEntry> {
    await this.db.query(`INSERT INTO waits (execution_id, key, workflow_id, since, due_at) VALUES ($1, $2, $3, $4, $5)
      ON CONFLICT (execution_id, key) DO NOTHING`, [entry.executionId, entry.key, entry.workflowId, entry.since, entry.dueAt]);
    const { rows } = await this.db.query<Row>('SELECT * FROM waits WHERE execution_id = $1 AND key = $2', [entry.executionId, entry.key]);
    return rows[0] === undefined ? entry : entryOf(rows[0]);
  }

  async due(at: string, limit: number): Promise<WaitEntry[]> {
    const { rows } = await this.db.query<Row>('SELECT * FROM waits WHERE due_at <= $1 ORDER BY due_at, execution_id, key LIMIT $2', [at, Math.max(1, limit)]);
    return rows.map(entryOf);
  }

  async listByExecution(executionId: string): Promise<WaitEntry[]> {
    const { rows } = await this.db.query<Row>('SELECT * FROM waits WHERE execution_id = $1 ORDER BY key', [executionId]);
    return rows.map(entryOf);
  }

  async delete(executionId: string, key?: string): Promise<number> {
    const res = key === undefined
      ? await this.db.query('DELETE FROM waits WHERE execution_id = $1', [executionId])
      : await this.db.query('DELETE FROM waits WHERE execution_id = $1 AND key = $2', [executionId, key]);
    return res.rowCount ?? 0;
  }
}
