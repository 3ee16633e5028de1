import type { WaitEntry, WaitRepo } from '../types.js';
import type { Db } from './db.js';

interface Row { execution_id: string; key: string; workflow_id: string; since: string; due_at: string }

function entryOf(r: Row): WaitEntry {
  return { executionId: r.execution_id, key: r.key, workflowId: r.workflow_id, since: r.since, dueAt: r.due_at };
}

export class SqliteWaits implements WaitRepo {
  private readonly insert;
  private readonly selectOne;
  private readonly selectDue;
  private readonly selectByExecution;
  private readonly removeOne;
  private readonly removeAll;

  constructor(db: Db) {
    this.insert = db.prepare('INSERT OR IGNORE INTO waits (execution_id, key, workflow_id, since, due_at) VALUES (?, ?, ?, ?, ?)');
    this.selectOne = db.prepare<[string, string], Row>('SELECT * FROM waits WHERE execution_id = ? AND key = ?');
    this.selectDue = db.prepare<[string, number], Row>('SELECT * FROM waits WHERE due_at <= ? ORDER BY due_at, execution_id, key LIMIT ?');
    this.selectByExecution = db.prepare<[string], Row>('SELECT * FROM waits WHERE execution_id = ? ORDER BY key');
    this.removeOne = db.prepare('DELETE FROM waits WHERE execution_id = ? AND key = ?');
    this.removeAll = db.prepare('DELETE FROM waits WHERE execution_id = ?');
  }

  async begin(entry: WaitEntry): Promise<WaitEntry> {
    this.insert.run(entry.executionId, entry.key, entry.workflowId, entry.since, entry.dueAt);
    const row = this.selectOne.get(entry.executionId, entry.key);
    return row === undefined ? entry : entryOf(row);
  }

  async due(at: string, limit: number): Promise<WaitEntry[]> {
    return this.selectDue.all(at, Math.max(1, limit)).map(entryOf);
  }

  async listByExecution(executionId: string): Promise<WaitEntry[]> {
    return this.selectByExecution.all(executionId).map(entryOf);
  }

  async delete(executionId: string, key?: string): Promise<number> {
    return (key === undefined ? this.removeAll.run(executionId) : this.removeOne.run(executionId, key)).changes;
  }
}
