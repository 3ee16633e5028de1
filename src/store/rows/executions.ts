/** Row ⇄ record mapping for executions, block logs and events, shared by the SQL adapters (sqlite, postgres). */
import { iterationKeyOf } from '../../model/block-run.js';
import { contextText, fromJson, iso, isoOrNull, normalizeLog, toJson } from '../shared.js';
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
    context: contextText(rec.context), created_at: createdAt,
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
  if ('context' in patch) set('context', contextText(patch.context));
  return cols;
}

/** A log is stored whole as JSON; key columns beside it give identity and order. */
export function logRow(executionId: string, log: BlockLog): unknown[] {
  return [executionId, log.blockId ?? null, iterationKeyOf(log.iteration), log.order, log.status ?? null, toJson(normalizeLog(log))];
}

/**
 * The events of one boundary batch as one row: `body` is a JSON array of `{ seq, event, data, at }`,
 * where an event stamped with the same time as the one before it in the array leaves `at` out (most
 * events of a batch share their millisecond: ~30 bytes each).
 */
export function eventBatchRow(executionId: string, events: readonly ExecutionEvent[]): unknown[] {
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  let previous: string | undefined;
  const body = events.map((ev) => {
    first = Math.min(first, ev.seq);
    last = Math.max(last, ev.seq);
    const at = iso(ev.at);
    const stored = at === previous ? { seq: ev.seq, event: ev.event, data: ev.data ?? null } : { seq: ev.seq, event: ev.event, data: ev.data ?? null, at };
    previous = at;
    return stored;
  });
  return [executionId, first, last, toJson(body)];
}

/** Events of batch rows in row order; a seq written twice keeps its later row's version. */
export function eventsOfBatches(executionId: string, bodies: readonly string[], afterSeq: number): ExecutionEvent[] {
  const bySeq = new Map<number, ExecutionEvent>();
  for (const body of bodies) {
    let at = '';
    for (const ev of fromJson(body) as (Omit<ExecutionEvent, 'executionId' | 'at'> & { at?: string })[]) {
      // left out: the time of the event before it in the same row (eventBatchRow)
      at = ev.at ?? at;
      if (ev.seq > afterSeq) bySeq.set(ev.seq, { executionId, seq: ev.seq, event: ev.event, data: ev.data, at });
    }
  }
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}

