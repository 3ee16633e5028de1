/** Row ⇄ record mapping for executions, block logs and events. */
import { fromJson, iso, isoOrNull, iterationKey, normalizeLog, toJson } from '../shared.js';
import type { BlockLog, ExecutionEvent, ExecutionPatch, ExecutionRecord, ExecutionStatus } from '../types.js';

export interface ExecutionRow {
  id: string;
  workflow_id: string;
  version: number;
  status: string;
  trigger: string;
  input: string;
  output: string;
  error: string | null;
  started_at: string | null;
  ended_at: string | null;
  duration_ms: number | null;
  context: string | null;
  created_at: string;
}

export interface EventRow {
  execution_id: string;
  seq: number;
  event: string;
  data: string;
  at: string;
}

export function toExecution(row: ExecutionRow, withContext: boolean): ExecutionRecord {
  const rec: ExecutionRecord = {
    id: row.id, workflowId: row.workflow_id, version: row.version, status: row.status as ExecutionStatus,
    trigger: fromJson(row.trigger), input: fromJson(row.input), output: fromJson(row.output), error: fromJson(row.error),
    startedAt: row.started_at, endedAt: row.ended_at, durationMs: row.duration_ms, createdAt: row.created_at,
  };
  if (withContext && row.context !== null) rec.context = fromJson(row.context);
  return rec;
}

export function executionRow(rec: ExecutionRecord, createdAt: string): ExecutionRow {
  return {
    id: rec.id, workflow_id: rec.workflowId, version: rec.version, status: rec.status,
    trigger: toJson(rec.trigger), input: toJson(rec.input), output: toJson(rec.output), error: toJson(rec.error),
    started_at: isoOrNull(rec.startedAt), ended_at: isoOrNull(rec.endedAt), duration_ms: rec.durationMs ?? null,
    context: rec.context === undefined || rec.context === null ? null : toJson(rec.context), created_at: createdAt,
  };
}

type Column = Exclude<keyof ExecutionRow, 'id' | 'created_at'>;

/** Patch → column values; fields absent from the patch are left alone. */
export function patchColumns(patch: ExecutionPatch): [Column, string | number | null][] {
  const cols: [Column, string | number | null][] = [];
  const set = (col: Column, v: string | number | null): void => void cols.push([col, v]);
  if (patch.workflowId !== undefined) set('workflow_id', patch.workflowId);
  if (patch.version !== undefined) set('version', patch.version);
  if (patch.status !== undefined) set('status', patch.status);
  if ('trigger' in patch) set('trigger', toJson(patch.trigger));
  if ('input' in patch) set('input', toJson(patch.input));
  if ('output' in patch) set('output', toJson(patch.output));
  if ('error' in patch) set('error', toJson(patch.error));
  if ('startedAt' in patch) set('started_at', isoOrNull(patch.startedAt));
  if ('endedAt' in patch) set('ended_at', isoOrNull(patch.endedAt));
  if ('durationMs' in patch) set('duration_ms', patch.durationMs ?? null);
  if ('context' in patch) set('context', patch.context === undefined || patch.context === null ? null : toJson(patch.context));
  return cols;
}

/** A log is stored whole as JSON; key columns beside it give identity and order. */
export function logRow(executionId: string, log: BlockLog): unknown[] {
  return [executionId, log.blockId ?? null, iterationKey(log.iteration), log.order, log.status ?? null, toJson(normalizeLog(log))];
}

export function eventRow(ev: ExecutionEvent): EventRow {
  return { execution_id: ev.executionId, seq: ev.seq, event: ev.event, data: toJson(ev.data), at: iso(ev.at) };
}

export function toEvent(row: EventRow): ExecutionEvent {
  return { executionId: row.execution_id, seq: row.seq, event: row.event, data: fromJson(row.data), at: row.at };
}
