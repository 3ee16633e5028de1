/** The rows of webhook routes and events, shared by the SQL adapters (sqlite, postgres). */
import { fromJson } from '../shared.js';
import type { WebhookEvent, WebhookEventStatus, WebhookRoute } from '../types.js';

export interface RouteRow {
  path: string;
  workflow_id: string;
  trigger_id: string;
}

export interface EventRow {
  id: string;
  workflow_id: string;
  trigger_id: string;
  version: number;
  delivery_id: string | null;
  payload: string;
  received_at: string;
  status: string;
  execution_id: string;
  /** a boolean column on PostgreSQL, 0 or 1 on SQLite */
  announced: boolean | number;
}

export function toRoute(row: RouteRow): WebhookRoute {
  return { path: row.path, workflowId: row.workflow_id, triggerId: row.trigger_id };
}

export function toEvent(row: EventRow): WebhookEvent {
  return {
    id: row.id, workflowId: row.workflow_id, triggerId: row.trigger_id, version: row.version, deliveryId: row.delivery_id,
    payload: fromJson(row.payload), receivedAt: row.received_at, status: row.status as WebhookEventStatus,
    executionId: row.execution_id, announced: row.announced === true || row.announced === 1,
  };
}
