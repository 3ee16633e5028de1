/** Response shapes: what the store and the engine hold, as the SPEC shows it to clients. */
import { topLevelRunKey } from '../model/block-run.js';
import type { ExecutionResult, WaitingEntry } from '../runtime/types.js';
import type { ExecutionDetail } from '../service/executions.js';
import type { ExecutionRecord, StoredWorkflow } from '../store/types.js';

/** The definition with its id, version and timestamps: a document that can be PUT back as is. */
export function workflowView(w: StoredWorkflow): Record<string, unknown> {
  return { ...w.definition, id: w.id, version: w.version, createdAt: w.createdAt, updatedAt: w.updatedAt };
}

export function executionSummary(r: ExecutionRecord): Record<string, unknown> {
  return {
    id: r.id, workflowId: r.workflowId, version: r.version, status: r.status, trigger: r.trigger, input: r.input,
    output: r.output, error: r.error, startedAt: r.startedAt, endedAt: r.endedAt, durationMs: r.durationMs,
  };
}

/**
 * The record as SPEC §4.2 shows it; a waiting one lists what it waits for (SPEC §2.1), an
 * approval with its one-time link when the admin asks (`links`: the link is derived, never stored).
 */
export function executionView(r: ExecutionDetail, links?: { linkFor(executionId: string, key: string, since: string): string }): Record<string, unknown> {
  const view: Record<string, unknown> = { ...executionSummary(r), context: r.context ?? null, logs: r.logs.map(publicLog) };
  if (r.status !== 'waiting') return view;
  const waiting = ((r.context as { waiting?: unknown } | null | undefined)?.waiting ?? []) as WaitingEntry[];
  view['waiting'] = waiting.map((w) => (w.kind === 'approval' && links !== undefined ? { ...w, approveUrl: links.linkFor(r.id, topLevelRunKey(w.blockId), w.since) } : w));
  return view;
}

/** A block log as SPEC §4.2 shows it: without `activated`, which is kept for crash resumption only. */
export function publicLog<T extends { activated?: unknown }>(log: T): Omit<T, 'activated'> {
  if (log.activated === undefined) return log;
  const { activated: _activated, ...shown } = log;
  return shown;
}

export function statusUrl(executionId: string): string {
  return `/api/executions/${encodeURIComponent(executionId)}`;
}

/** What a sync caller or a stream gets when the execution parks (SPEC §2.1). */
export function waitingBody(executionId: string): Record<string, unknown> {
  return { executionId, statusUrl: statusUrl(executionId), status: 'waiting' };
}

/** The sync body of SPEC §4.2 (also the data of the SSE `done` event). */
export function syncBody(result: ExecutionResult): Record<string, unknown> {
  return {
    success: result.status === 'completed',
    executionId: result.id,
    output: result.output ?? null,
    error: result.error,
    metadata: { startedAt: result.startedAt, endedAt: result.endedAt, durationMs: result.durationMs },
  };
}

/** 200 on success; 504 when the time limit ended it; 500 for any other failure or a cancellation. */
export function syncStatus(result: ExecutionResult): number {
  if (result.status === 'completed') return 200;
  return result.error?.code === 'EXECUTION_TIMEOUT' ? 504 : 500;
}
