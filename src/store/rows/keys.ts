/** The rows of deployments and API keys, shared by the SQL adapters (sqlite, postgres). */
import type { ApiKeyRecord, Deployment } from '../types.js';

export interface DeploymentRow {
  workflow_id: string;
  version: number;
  deployed_at: string;
  endpoint: string | null;
}

export function toDeployment(row: DeploymentRow): Deployment {
  const d: Deployment = { workflowId: row.workflow_id, version: row.version, deployedAt: row.deployed_at };
  if (row.endpoint !== null) d.endpoint = row.endpoint;
  return d;
}

export interface KeyRow {
  id: string;
  workflow_id: string;
  prefix: string;
  hash: string;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

export function toKey(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id, workflowId: row.workflow_id, prefix: row.prefix, hash: row.hash,
    createdAt: row.created_at, revokedAt: row.revoked_at, lastUsedAt: row.last_used_at,
  };
}
