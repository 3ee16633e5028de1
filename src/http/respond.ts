/** Answers about a started execution in the three modes of SPEC §4.2: sync, async, stream. */
import type { Logger } from 'pino';
import type { ExecutionHandle } from '../engine/engine.js';
import type { ExecutionResult } from '../runtime/types.js';
import type { ExecutionService } from '../service/executions.js';
import type { SeqEvent } from '../service/live.js';
import { publicLog, statusUrl, syncBody, syncStatus, waitingBody } from './present.js';
import { openSse } from './sse.js';
import type { Ctx } from './types.js';

export type ExecutionMode = 'sync' | 'async' | 'stream';

/** Headers a response block may not set: framing, and the ids that tie the answer to our records, are ours. */
const RESERVED_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'x-execution-id', 'x-request-id']);

export function writeResult(ctx: Ctx, result: ExecutionResult): void {
  if (result.status === 'waiting') {
    // parked (SPEC §2.1): answered now, the end is read from the record
    ctx.status = 202;
    ctx.set('Location', statusUrl(result.id));
    ctx.body = waitingBody(result.id);
    return;
  }
  const response = result.status === 'completed' ? result.response : null;
  if (response === null) {
    ctx.status = syncStatus(result);
    ctx.body = syncBody(result);
    return;
  }
  ctx.status = response.status;
  for (const [name, value] of Object.entries(response.headers)) {
    if (!RESERVED_HEADERS.has(name.toLowerCase())) ctx.set(name, value);
  }
  if (typeof response.data === 'string') {
    if (!ctx.response.get('Content-Type')) ctx.type = 'text/plain';
    ctx.body = response.data;
  } else {
    if (!ctx.response.get('Content-Type')) ctx.type = 'application/json';
    ctx.body = JSON.stringify(response.data ?? null);
  }
}

/** The SSE wire form of an event: `done` carries the sync body. */
export function sseData(e: SeqEvent): unknown {
  if (e.event === 'done') return syncBody(e.data as ExecutionResult);
  if (e.event === 'waiting') return waitingBody((e.data as { executionId?: string; id?: string }).executionId ?? (e.data as { id: string }).id);
  return e.event.startsWith('block.') && isObject(e.data) ? publicLog(e.data) : e.data;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Streams events to the client until `done` (then closes), the client leaves, or the feed
 * breaks (`event: error`, the only case it is sent). `skipThrough` drops already-seen events.
 */
export function streamEvents(ctx: Ctx, executions: ExecutionService, id: string, logger: Logger, skipThrough = 0): void {
  const sse = openSse(ctx);
  const onEvent = (e: SeqEvent): void => {
    if (e.seq > skipThrough) sse.send(e.event, sseData(e), e.seq);
  };
  executions.follow(id, onEvent, sse.signal).then(
    () => sse.close(),
    (err: unknown) => {
      logger.error({ err, executionId: id }, 'event stream failed');
      sse.send('error', { code: 'INTERNAL', message: 'the event stream failed' });
      sse.close();
    },
  );
}

/** 202: the execution is accepted and its record exists. */
export function respondAccepted(ctx: Ctx, id: string): void {
  ctx.set('X-Execution-Id', id);
  ctx.status = 202;
  ctx.set('Location', statusUrl(id));
  ctx.body = { executionId: id, statusUrl: statusUrl(id) };
}

export async function respondToExecution(
  ctx: Ctx,
  handle: ExecutionHandle,
  mode: ExecutionMode,
  executions: ExecutionService,
  logger: Logger,
): Promise<void> {
  if (mode === 'async') {
    respondAccepted(ctx, handle.id);
    return;
  }
  ctx.set('X-Execution-Id', handle.id);
  if (mode === 'stream') {
    streamEvents(ctx, executions, handle.id, logger);
    return;
  }
  writeResult(ctx, await handle.done);
}
