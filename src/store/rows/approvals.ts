/** The row form of an approval entry, shared by the SQL adapters (sqlite, postgres). */
import type { ApprovalDecision, ApprovalEntry } from '../types.js';

export interface ApprovalRow {
  execution_id: string;
  key: string;
  block_id: string;
  workflow_id: string;
  token_hash: string;
  message: string;
  since: string;
  expires_at: string | null;
  decision: string | null;
  data: string | null;
  decided_at: string | null;
  decided_by: string | null;
}

export function approvalOf(r: ApprovalRow): ApprovalEntry {
  return {
    executionId: r.execution_id, key: r.key, blockId: r.block_id, workflowId: r.workflow_id, tokenHash: r.token_hash,
    message: r.message, since: r.since, expiresAt: r.expires_at, decision: r.decision as ApprovalDecision | null,
    data: r.data === null ? null : (JSON.parse(r.data) as unknown), decidedAt: r.decided_at, decidedBy: r.decided_by,
  };
}

export function approvalParams(e: ApprovalEntry): unknown[] {
  return [e.executionId, e.key, e.blockId, e.workflowId, e.tokenHash, e.message, e.since, e.expiresAt, e.decision,
    e.data === undefined || e.data === null ? null : JSON.stringify(e.data), e.decidedAt, e.decidedBy];
}

export const APPROVAL_COLUMNS = 'execution_id, key, block_id, workflow_id, token_hash, message, since, expires_at, decision, data, decided_at, decided_by';
