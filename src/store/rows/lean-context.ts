/**
 * Lean records (issue 22): an ended execution's context repeats the output of every top-level
 * block, which the block's log holds too (the very same value: the ledger keeps the settled
 * block's output in both). The stored context keeps such an output's place in `outputs` (null)
 * and names the block in `$fromLogs`; reading the record puts the log's output back. Only a log
 * written in the same batch is trusted for this, checked by identity, so the stored log is the
 * JSON of that very value; a top-level log never changes once its execution has ended.
 *
 * Only ended records: a running or waiting record's context is compared as text by guards
 * (resumption, wake-ups) and read back by recovery, and stays as it was written.
 */
import { setOwn } from '../../model/own.js';
import type { BlockLog, ExecutionStatus } from '../types.js';

const FROM_LOGS = '$fromLogs';
const ENDED: ReadonlySet<string> = new Set<ExecutionStatus>(['completed', 'failed', 'cancelled']);

type Context = Record<string, unknown> & { outputs?: unknown };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The context to store: `context` itself unless some of its outputs can be read from `logs`. */
export function leanContext(context: unknown, status: string | undefined, logs: readonly BlockLog[] | undefined): unknown {
  if (status === undefined || !ENDED.has(status) || logs === undefined || logs.length === 0) return context;
  if (!isObject(context) || !isObject(context['outputs']) || FROM_LOGS in context) return context;
  const outputs = context['outputs'];
  const logged = loggedOutputs(logs);
  const derived: string[] = [];
  const lean: Record<string, unknown> = {};
  for (const blockId of Object.keys(outputs)) {
    const output = outputs[blockId];
    const fromLog = output !== null && output !== undefined && logged.get(blockId) === output;
    if (fromLog) derived.push(blockId);
    setOwn(lean, blockId, fromLog ? null : output);
  }
  if (derived.length === 0) return context;
  // copied key by key: a spread followed by a computed key left V8 a dictionary-mode object,
  // slower to build and to stringify (every ended S1 record)
  const stored: Record<string, unknown> = {};
  for (const key of Object.keys(context)) setOwn(stored, key, key === 'outputs' ? lean : context[key]);
  stored[FROM_LOGS] = derived;
  return stored;
}

/** Each block's output by its last top-level log with one. */
function loggedOutputs(logs: readonly BlockLog[]): Map<string, unknown> {
  const logged = new Map<string, unknown>();
  for (const log of logs) if ((log.iteration ?? null) === null && log.output !== null) logged.set(log.blockId, log.output);
  return logged;
}

/** Whether a stored context names outputs to read from its logs. */
export function needsLogs(context: unknown): boolean {
  return isObject(context) && Array.isArray(context[FROM_LOGS]);
}

/** The context as it was recorded: the outputs named in `$fromLogs` read back from the top-level logs. */
export function fullContext(context: unknown, logs: readonly BlockLog[]): unknown {
  if (!needsLogs(context)) return context;
  const { [FROM_LOGS]: named, ...rest } = context as Context;
  const outputs = isObject(rest.outputs) ? rest.outputs : {};
  const topLevel = new Map<string, unknown>();
  for (const log of logs) if ((log.iteration ?? null) === null) topLevel.set(log.blockId, log.output);
  for (const blockId of named as string[]) setOwn(outputs, blockId, topLevel.get(blockId) ?? null);
  return { ...rest, outputs };
}

