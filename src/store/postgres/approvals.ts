import { APPROVAL_COLUMNS, approvalOf, approvalParams, type ApprovalRow } from '../rows/approvals.js';
import type { ApprovalDecision, ApprovalEntry, ApprovalRepo } from '../types.js';
import type { Pg } from './db.js';

/** Not in CASCADE_TABLES: an entry belongs to an execution, which outlives its workflow. */
export class PgApprovals implements ApprovalRepo {
  constructor(private readonly db: Pg) {}

  async begin(entry: ApprovalEntry): Promise<ApprovalEntry> {
    await this.db.query(`INSERT INTO approvals (${APPROVAL_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
      ON CONFLICT (execution_id, key) DO NOTHING`, approvalParams(entry));
    return (await this.get(entry.executionId, entry.key)) ?? entry;
  }

  async get(executionId: string, key: string): Promise<ApprovalEntry | null> {
    const { rows } = await this.db.query<ApprovalRow>('SELECT * FROM approvals WHERE execution_id = $1 AND key = $2', [executionId, key]);
    return rows[0] === undefined ? null : approvalOf(rows[0]);
  }

  async findByTokenHash(tokenHash: string): Promise<ApprovalEntry | null> {
    const { rows } = await this.db.query<ApprovalRow>('SELECT * FROM approvals WHERE token_hash = $1', [tokenHash]);
    return rows[0] === undefined ? null : approvalOf(rows[0]);
  }

  async decide(executionId: string, key: string, d: { decision: ApprovalDecision; data: unknown; decidedAt: string; decidedBy: string }): Promise<boolean> {
    const data = d.data === undefined || d.data === null ? null : JSON.stringify(d.data);
    const res = await this.db.query(`UPDATE approvals SET decision = $1, data = $2, decided_at = $3, decided_by = $4
      WHERE execution_id = $5 AND key = $6 AND decision IS NULL`, [d.decision, data, d.decidedAt, d.decidedBy, executionId, key]);
    return (res.rowCount ?? 0) > 0;
  }
}
