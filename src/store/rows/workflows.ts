/** The rows of workflows and their versions, shared by the SQL adapters (sqlite, postgres). */
import type { WorkflowDef } from '../../model/types.js';
import { fromJson } from '../shared.js';
import type { StoredWorkflow } from '../types.js';

export interface WorkflowRow {
  id: string;
  version: number;
  definition: string;
  created_at: string;
  updated_at: string;
}

/** Tables holding rows that belong to a workflow and go when it is deleted (append new ones). */
export const CASCADE_TABLES = [
  'workflow_versions', 'deployments', 'api_keys', 'webhook_routes', 'webhook_events', 'schedules', 'schedule_fires',
  'chat_deployments', 'chat_conversations', 'chat_messages', 'chat_codes', 'chat_sessions',
  'memories', 'memory_conversations',
] as const;

/** Workflows joined with their versions; ends in the join's ON, so a caller adds `AND v.version = …` and/or `WHERE …`. */
export const SELECT_WORKFLOW = `SELECT w.id, v.version, v.definition, w.created_at, v.created_at AS updated_at
  FROM workflows w JOIN workflow_versions v ON v.workflow_id = w.id`;

export function toStored(row: WorkflowRow): StoredWorkflow {
  return { id: row.id, version: row.version, definition: fromJson(row.definition) as WorkflowDef, createdAt: row.created_at, updatedAt: row.updated_at };
}
