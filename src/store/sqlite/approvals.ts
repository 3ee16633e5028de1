import { APPROVAL_COLUMNS, approvalOf, approvalParams, type ApprovalRow } from '../rows/approvals.js';
import type { ApprovalDecision, ApprovalEntry, ApprovalRepo } from '../types.js';
import type { Db } from './db.js';

export class SqliteApprovals implements ApprovalRepo {
  private readonly insert;
  private readonly selectOne;
  private readonly selectByToken;
  private readonly setDecision;

  constructor(db: Db) {
    this.insert = db.prepare(`INSERT OR IGNORE INTO approvals (${APPROVAL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.selectOne = db.prepare<[string, string], ApprovalRow>('SELECT * FROM approvals WHERE execution_id = ? AND key = ?');
    this.selectByToken = db.prepare<[string], ApprovalRow>('SELECT * FROM approvals WHERE token_hash = ?');
    this.setDecision = db.prepare(`UPDATE approvals SET decision = ?, data = ?, decided_at = ?, decided_by = ?
      WHERE execution_id = ? AND key = ? AND decision IS NULL`);
  }

  async begin(entry: ApprovalEntry): Promise<ApprovalEntry> {
    this.insert.run(...approvalParams(entry));
    return (await this.get(entry.executionId, entry.key)) ?? entry;
  }

  async get(executionId: string, key: string): Promise<ApprovalEntry | null> {
    const row = this.selectOne.get(executionId, key);
    return row === undefined ? null : approvalOf(row);
  }

  async findByTokenHash(tokenHash: string): Promise<ApprovalEntry | null> {
    const row = this.selectByToken.get(tokenHash);
    return row === undefined ? null : approvalOf(row);
  }

  async decide(executionId: string, key: string, d: { decision: ApprovalDecision; data: unknown; decidedAt: string; decidedBy: string }): Promise<boolean> {
    const data = d.data === undefined || d.data === null ? null : JSON.stringify(d.data);
    return this.setDecision.run(d.decision, data, d.decidedAt, d.decidedBy, executionId, key).changes > 0;
  }
}
