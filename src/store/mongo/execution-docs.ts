/** Document ⇄ record mapping for executions, block logs and events. */
import { iterationKeyOf } from '../../model/block-run.js';
import type { AnyBulkWriteOperation, Filter } from 'mongodb';
import { contextText, fromJson, iso, isoOrNull, normalizeLog, toJson } from '../shared.js';
import type { BlockLog, BoundaryBatch, ExecutionEvent, ExecutionPatch, ExecutionRecord, ExecutionStatus } from '../types.js';
import type { BlockLogDoc, EventDoc, ExecutionDoc } from './collections.js';
import { checkDocumentSize } from './errors.js';

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
    context: contextText(rec.context), createdAt, triggerType: triggerTypeOf(rec.trigger),
  };
}

/** The trigger's `type`, kept beside its JSON so that lists can filter on it (indexed). */
function triggerTypeOf(trigger: unknown): string | null {
  const type = (trigger as { type?: unknown } | null | undefined)?.type;
  return typeof type === 'string' ? type : null;
}

/**
 * Records by trigger type. Those written before `triggerType` existed have only the JSON text,
 * which Troupe always writes with `type` first: matched by its start.
 */
export function triggerTypeFilter(type: string): Filter<ExecutionDoc> {
  const start = `^${escapeRegExp(JSON.stringify({ type }).slice(0, -1))}[,}]`;
  return { $or: [{ triggerType: type }, { triggerType: { $exists: false }, trigger: { $regex: start } }] };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Patch → `$set` fields; fields absent from the patch are left alone. */
export function patchFields(patch: ExecutionPatch): Partial<ExecutionDoc> {
  const set: Partial<ExecutionDoc> = {};
  if (patch.workflowId !== undefined) set.workflowId = patch.workflowId;
  if (patch.version !== undefined) set.version = patch.version;
  if (patch.status !== undefined) set.status = patch.status;
  if ('trigger' in patch) {
    set.trigger = toJson(patch.trigger);
    set.triggerType = triggerTypeOf(patch.trigger);
  }
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
    executionId, blockId: log.blockId, iterationKey: iterationKeyOf(log.iteration), order: log.order,
    status: log.status, body: toJson(normalizeLog(log)),
  };
}

export function eventDoc(ev: ExecutionEvent): EventDoc {
  return { executionId: ev.executionId, seq: ev.seq, event: ev.event, data: toJson(ev.data), at: iso(ev.at) };
}

export function toEvent(doc: EventDoc): ExecutionEvent {
  return { executionId: doc.executionId, seq: doc.seq, event: doc.event, data: fromJson(doc.data), at: doc.at };
}

/** What one block boundary writes, in order: the record to insert, the `$set`, then log and event operations. */
export interface BoundaryWrites {
  created: ExecutionDoc | null;
  set: Partial<ExecutionDoc>;
  logOps: AnyBulkWriteOperation<BlockLogDoc>[];
  eventOps: AnyBulkWriteOperation<EventDoc>[];
}

/**
 * Builds (and JSON-encodes) every document of a boundary before the first write, and refuses one
 * above MongoDB's 16 MiB limit then: a bad value writes nothing, with or without a transaction.
 * The `$set` is checked alone; what it makes of the stored record is checked by the server.
 */
export function boundaryWrites(id: string, batch: BoundaryBatch, now: () => string): BoundaryWrites {
  const created = batch.create ? executionDoc(batch.create, iso(batch.create.createdAt ?? now())) : null;
  if (created !== null) checkDocumentSize(created, `execution ${id}`);
  const set = batch.patch ? patchFields(batch.patch) : {};
  checkDocumentSize(set, `the update of execution ${id}`);
  const logOps: AnyBulkWriteOperation<BlockLogDoc>[] = (batch.dropLogs ?? []).map((drop) => ({
    deleteOne: { filter: { executionId: id, blockId: drop.blockId, iterationKey: iterationKeyOf(drop.iteration) } },
  }));
  for (const log of batch.logs ?? []) {
    const doc = logDoc(id, log);
    checkDocumentSize(doc, `the log of block ${doc.blockId} of execution ${id}`);
    logOps.push({ replaceOne: { filter: { executionId: id, blockId: doc.blockId, iterationKey: doc.iterationKey }, replacement: doc, upsert: true } });
  }
  const eventOps: AnyBulkWriteOperation<EventDoc>[] = (batch.events ?? []).map((ev) => {
    const doc = eventDoc(ev);
    checkDocumentSize(doc, `event ${doc.seq} of execution ${id}`);
    return { replaceOne: { filter: { executionId: id, seq: doc.seq }, replacement: doc, upsert: true } };
  });
  return { created, set, logOps, eventOps };
}
