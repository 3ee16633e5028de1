/**
 * Lean event records. An execution's SSE replay (`GET /api/executions/{id}/events` once it no
 * longer runs here) is rebuilt from what the record keeps anyway, instead of a second copy of
 * every block's input and output in the event stream:
 *
 * - `block.completed` / `block.failed` / `block.skipped` of a top-level block carry its log,
 *   which is stored as the block's log in the same batch and never changes afterwards: the
 *   stored event says only which log (`{ "$derived": "log", blockId }`). Blocks inside a loop or
 *   parallel (a non-null iteration) keep their data: a container's retry or a resumption drops
 *   and rewrites their logs, and the replay must show the attempt the live subscriber saw.
 * - `done` carries the execution's result, which is the record's end fields: the stored event
 *   keeps only the start time it was reported with and the response when it is not the output.
 * - `block.started` of a top-level block keeps its id and order; its names are its log's.
 * - Agent `chunk` events are stored as they were: a chunk's text boundaries are what the
 *   subscriber saw and cannot be derived from the final output.
 *
 * Events stored in full (by earlier versions, or by restart recovery) replay as they are.
 */
import type { BlockLog, ExecutionEvent as StoredEvent, ExecutionRecord } from '../store/types.js';
import type { BlockLogEntry, ExecutionResult } from './types.js';

interface FromLog {
  $derived: 'log';
  blockId: string;
}

/** a top-level block's start: its names are its log's; the order is kept (a resumed run may start it again) */
interface StartFromLog {
  $derived: 'start';
  blockId: string;
  order: number;
}

interface FromRecord {
  $derived: 'record';
  startedAt: string;
  /** 'output': the response is the execution's output (a response block ended it), else as it was */
  response: ExecutionResult['response'] | 'output';
}

const SETTLED = new Set(['block.completed', 'block.failed', 'block.skipped']);

/** What the store keeps of an event's data. */
export function storedEventData(event: string, data: unknown): unknown {
  if (SETTLED.has(event)) {
    const log = data as BlockLogEntry;
    if (log.iteration === null) return { $derived: 'log', blockId: log.blockId } satisfies FromLog;
    return data;
  }
  if (event === 'block.started') {
    const started = data as { blockId: string; order: number; iteration: unknown };
    if (started.iteration === null) return { $derived: 'start', blockId: started.blockId, order: started.order } satisfies StartFromLog;
    return data;
  }
  if (event === 'done') {
    const result = data as ExecutionResult;
    // a response block's answer is also the execution's output: the same object, kept once
    const response = result.response !== null && result.response === result.output ? 'output' : result.response;
    return { $derived: 'record', startedAt: result.startedAt, response } satisfies FromRecord;
  }
  return data;
}

function derivedKind(data: unknown): 'log' | 'start' | 'record' | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const kind = (data as { $derived?: unknown }).$derived;
  return kind === 'log' || kind === 'start' || kind === 'record' ? kind : undefined;
}

/** True when some event needs the record (with its logs) to be replayed. */
export function needsRecord(events: readonly StoredEvent[]): boolean {
  return events.some((e) => derivedKind(e.data) !== undefined);
}

/**
 * The events as they were sent live: derived data filled in from the record and its logs.
 * A log that is gone (a record from before a retry dropped it) leaves the event's data null.
 */
export function replayEvents(events: readonly StoredEvent[], rec: (ExecutionRecord & { logs: BlockLog[] }) | null): StoredEvent[] {
  if (rec === null || !needsRecord(events)) return [...events];
  const topLevel = new Map<string, BlockLog>();
  for (const log of rec.logs) if (log.iteration === null) topLevel.set(log.blockId, log);
  return events.map((e) => {
    const kind = derivedKind(e.data);
    if (kind === 'log') return { ...e, data: topLevel.get((e.data as FromLog).blockId) ?? null };
    if (kind === 'start') return { ...e, data: startOf(e.data as StartFromLog, topLevel.get((e.data as StartFromLog).blockId)) };
    if (kind === 'record') return { ...e, data: resultOf(rec, e.data as FromRecord) };
    return e;
  });
}

function startOf(kept: StartFromLog, log: BlockLog | undefined): unknown {
  if (log === undefined) return null;
  return { blockId: kept.blockId, blockName: log.blockName, blockType: log.blockType, order: kept.order, iteration: null };
}

function resultOf(rec: ExecutionRecord, kept: FromRecord): ExecutionResult {
  return {
    id: rec.id,
    workflowId: rec.workflowId,
    version: rec.version,
    status: rec.status as ExecutionResult['status'],
    output: rec.output,
    error: rec.error as ExecutionResult['error'],
    response: kept.response === 'output' ? (rec.output as ExecutionResult['response']) : kept.response,
    startedAt: kept.startedAt,
    endedAt: rec.endedAt ?? '',
    durationMs: rec.durationMs ?? 0,
  };
}
