/** The rows of schedules and their fires, shared by the SQL adapters (sqlite, postgres). */
import type { FireOutcome, ScheduleEntry, ScheduleFire } from '../types.js';

export interface EntryRow {
  workflow_id: string;
  trigger_id: string;
  version: number;
  spec: string;
  active_from: string;
  last_due_at: string | null;
}

export interface FireRow {
  workflow_id: string;
  trigger_id: string;
  due_at: string;
  execution_id: string | null;
  outcome: string;
  fired_at: string;
}

export function toEntry(row: EntryRow): ScheduleEntry {
  return { workflowId: row.workflow_id, triggerId: row.trigger_id, spec: row.spec, version: row.version, activeFrom: row.active_from, lastDueAt: row.last_due_at };
}

export function toFire(row: FireRow): ScheduleFire {
  return { workflowId: row.workflow_id, triggerId: row.trigger_id, dueAt: row.due_at, executionId: row.execution_id, outcome: row.outcome as FireOutcome, firedAt: row.fired_at };
}
