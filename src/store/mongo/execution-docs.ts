/** Document ⇄ record mapping for executions, block logs and events. */
import { contextText, fromJson, iso, isoOrNull, iterationKey, normalizeLog, toJson } from '../shared.js';
import type { BlockLog, ExecutionEvent, ExecutionPatch, ExecutionRecord, ExecutionStatus } from '../types.js';
import type { BlockLogDoc, EventDoc, ExecutionDoc } from './collections.js';

export function toExecution(doc: ExecutionDoc, withContext: boolean): ExecutionRecord {
  const rec: ExecutionRecord = {
    id: doc._id, workflowId: doc.workflowId, version: doc.version, status: doc.status as ExecutionStatus,
    trigger: fromJson(doc.trigger), input: fromJson(doc.input), output: fromJson(doc.output), error: fromJson(doc.error),
    startedAt: doc.startedAt, endedAt: doc.endedAt, durationMs: doc.durationMs, createdAt: doc.createdAt,
  };
  if (withContext && doc.context !== null && doc.context !== undefined) rec.context = fromJson(doc.context);
  return rec;
}

export function executionDoc(rec: ExecutionRecord, createdAt: string): ExecutionDoc {
  return {
    _id: rec.id, workflowId: rec.workflowId, version: rec.version, status: rec.status,
    trigger: toJson(rec.trigger), input: toJson(rec.input), output: toJson(rec.output), error: toJson(rec.error),
    startedAt: isoOrNull(rec.startedAt), endedAt: isoOrNull(rec.endedAt), durationMs: rec.durationMs ?? null,
    context: contextText(rec.context), createdAt,
  };
}

/** Patch → `$set` fields; fields absent from the patch are left alone. */
export function patchFields(patch: ExecutionPatch): Partial<ExecutionDoc> {
  const set: Partial<ExecutionDoc> = {};
  if (patch.workflowId !== undefined) set.workflowId = patch.workflowId;
  if (patch.version !== undefined) set.version = patch.version;
  if (patch.status !== undefined) set.status = patch.status;
  if ('trigger' in patch) set.trigger = toJson(patch.trigger);
  if ('input' in patch) set.input = toJson(patch.input);
  if ('output' in patch) set.output = toJson(patch.output);
  if ('error' in patch) set.error = toJson(patch.error);
  if ('startedAt' in patch) set.startedAt = isoOrNull(patch.startedAt);
  if ('endedAt' in patch) set.endedAt = isoOrNull(patch.endedAt);
  if ('durationMs' in patch) set.durationMs = patch.durationMs ?? null;
  if ('context' in patch) set.context = contextText(patch.context);
  return set;
}

export function logDoc(executionId: string, log: BlockLog): BlockLogDoc {
  return {
    executionId, blockId: log.blockId, iterationKey: iterationKey(log.iteration), order: log.order,
    status: log.status, body: toJson(normalizeLog(log)),
  };
}

export function eventDoc(ev: ExecutionEvent): EventDoc {
  return { executionId: ev.executionId, seq: ev.seq, event: ev.event, data: toJson(ev.data), at: iso(ev.at) };
}

export function toEvent(doc: EventDoc): ExecutionEvent {
  return { executionId: doc.executionId, seq: doc.seq, event: doc.event, data: fromJson(doc.data), at: doc.at };
}
