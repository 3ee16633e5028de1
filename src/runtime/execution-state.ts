import type { ErrorInfo } from '../errors.js';
import type { CompiledWorkflow } from '../model/graph.js';
import { selectFinalOutput } from '../model/output.js';
import type { BlockReport } from '../../actors/messages.js';
import type { BlockLogEntry, ExecutionError, ExecutionResult, IterationRef, ResponseOutput } from './types.js';

type Settled = Extract<BlockReport, { type: 'BLOCK.SETTLED' }>;

/**
 * The execution context of SPEC §2, kept by the execution actor and visible in the record:
 * block states and outputs, active connections, routing decisions, the logs.
 */
export interface ExecutionContextData {
  states: Record<string, BlockLogEntry['status']>;
  outputs: Record<string, Record<string, unknown>>;
  activeConnections: number[];
  decisions: Record<string, string | null>;
  logs: BlockLogEntry[];
  nextOrder: number;
  settledTopLevel: number;
  /** loop/parallel iteration state by container block id (the latest run of a nested container) */
  iterations: Record<string, IterationState>;
}

export interface IterationState {
  total: number | null;
  running: number[];
  finished: number;
  results: unknown[];
}

export function applyIteration(
  iterations: Record<string, IterationState>,
  e: { containerId: string; index: number; phase: 'started' | 'finished'; total: number | null; result?: unknown },
): Record<string, IterationState> {
  const fresh: IterationState = { total: e.total, running: [], finished: 0, results: [] };
  const current = e.phase === 'started' && e.index === 0 ? fresh : (iterations[e.containerId] ?? fresh);
  const next: IterationState =
    e.phase === 'started'
      ? { ...current, total: e.total, running: [...current.running, e.index] }
      : {
          ...current,
          running: current.running.filter((i) => i !== e.index),
          finished: current.finished + 1,
          results: Object.assign([...current.results], { [e.index]: e.result ?? null }),
        };
  return { ...iterations, [e.containerId]: next };
}

export function emptyContextData(workflow: CompiledWorkflow): ExecutionContextData {
  const states: Record<string, BlockLogEntry['status']> = {};
  for (const id of workflow.topLevel) states[id] = 'pending';
  return { states, outputs: {}, activeConnections: [], decisions: {}, logs: [], nextOrder: 0, settledTopLevel: 0, iterations: {} };
}

export function logKey(blockId: string, iteration: IterationRef | null): string {
  return iteration === null ? blockId : `${blockId}@${iteration.container}#${iteration.index}`;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function startedLog(workflow: CompiledWorkflow, blockId: string, at: number, order: number, iteration: IterationRef | null): BlockLogEntry {
  const block = workflow.blocks.get(blockId);
  return {
    blockId,
    blockName: block?.name ?? blockId,
    blockType: block?.type ?? 'unknown',
    status: 'running',
    order,
    startedAt: iso(at),
    endedAt: null,
    durationMs: null,
    input: null,
    output: null,
    error: null,
    errorHandled: false,
    attempts: 0,
    iteration,
  };
}

/** Log of a settled block; a skipped block never started, so it takes the next order number. */
export function settledLog(workflow: CompiledWorkflow, report: Settled, previous: BlockLogEntry | undefined, order: number): BlockLogEntry {
  const base = previous ?? startedLog(workflow, report.blockId, report.endedAt, order, report.iteration);
  return {
    ...base,
    status: report.status,
    startedAt: report.status === 'skipped' ? null : base.startedAt,
    endedAt: iso(report.endedAt),
    durationMs: report.startedAt === null ? null : report.endedAt - report.startedAt,
    input: report.input,
    output: report.output,
    error: report.error,
    errorHandled: report.errorHandled,
    attempts: report.attempts,
  };
}

/** Marks the logs of blocks still running as cancelled when the execution ends early. */
export function cancelRunning(logs: BlockLogEntry[], at: number): BlockLogEntry[] {
  return logs.map((log) =>
    log.status === 'running'
      ? { ...log, status: 'cancelled', endedAt: iso(at), durationMs: log.startedAt === null ? null : at - Date.parse(log.startedAt) }
      : log,
  );
}

export function decisionOf(blockType: string, output: Record<string, unknown> | null): string | null | undefined {
  if (output === null) return undefined;
  if (blockType === 'condition') return (output['selectedBranch'] as string | null | undefined) ?? null;
  if (blockType === 'router') return (output['selectedRoute'] as string | null | undefined) ?? null;
  return undefined;
}

export function executionError(error: ErrorInfo | null, blockId: string | null): ExecutionError {
  return { code: error?.code ?? 'INTERNAL', message: error?.message ?? 'block failed', blockId };
}

export function asResponse(output: Record<string, unknown>): ResponseOutput {
  return {
    status: typeof output['status'] === 'number' ? output['status'] : 200,
    headers: (output['headers'] as Record<string, string> | undefined) ?? {},
    data: output['data'] ?? null,
  };
}

export function finalOutput(workflow: CompiledWorkflow, data: ExecutionContextData): unknown {
  const completed = new Map<string, Record<string, unknown>>();
  for (const id of workflow.topLevel) {
    const output = data.outputs[id];
    if (output !== undefined && data.states[id] === 'completed') completed.set(id, output);
  }
  return selectFinalOutput(workflow, completed);
}

export function buildResult(
  base: { id: string; workflowId: string; version: number; startedAt: number },
  end: { status: ExecutionResult['status']; output: unknown; error: ExecutionError | null; response: ResponseOutput | null; at: number },
): ExecutionResult {
  return {
    id: base.id,
    workflowId: base.workflowId,
    version: base.version,
    status: end.status,
    output: end.output,
    error: end.error,
    response: end.response,
    startedAt: new Date(base.startedAt).toISOString(),
    endedAt: new Date(end.at).toISOString(),
    durationMs: end.at - base.startedAt,
  };
}
