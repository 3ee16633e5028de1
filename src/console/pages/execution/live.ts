/**
 * An execution as it happens: the record, then its events (SPEC §4.2) merged into the block
 * logs as they arrive, and the record read again when the run ends (its final word).
 */
import { useEffect, useState } from 'react';
import { api, enc, explain } from '../../api';
import { followEvents } from '../../sse';
import type { BlockLog, Execution } from '../../types';

const ENDED = new Set(['completed', 'failed', 'cancelled']);
const WAITING_POLL_MS = 1000;

export const logKey = (l: BlockLog): string => `${l.blockId}|${JSON.stringify(l.iteration ?? null)}`;

function merge(logs: BlockLog[], entry: BlockLog): BlockLog[] {
  const key = logKey(entry);
  const at = logs.findIndex((l) => logKey(l) === key);
  if (at < 0) return [...logs, entry];
  const next = logs.slice();
  next[at] = { ...logs[at], ...entry };
  return next;
}

/** The state an event means (block.started: running), whatever the log it carries says yet. */
function fromEvent(event: string, log: BlockLog): BlockLog {
  const kind = event.slice('block.'.length);
  const status = kind === 'started' ? 'running' : kind;
  if (!STATES.has(status)) return log;
  // block.started carries no start time: the moment it arrives stands in until the block ends
  const startedAt = log.startedAt ?? (kind === 'started' ? new Date().toISOString() : undefined);
  return { ...log, status: status as BlockLog['status'], ...(startedAt ? { startedAt } : {}) };
}

const STATES = new Set(['running', 'waiting', 'completed', 'failed', 'skipped', 'cancelled']);

export interface Live {
  execution: Execution | undefined;
  logs: BlockLog[];
  error: string | undefined;
  reload: () => void;
}

export function useLiveExecution(id: string): Live {
  const [execution, setExecution] = useState<Execution | undefined>();
  const [logs, setLogs] = useState<BlockLog[]>([]);
  const [error, setError] = useState<string | undefined>();
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const stop = new AbortController();
    const read = (): Promise<Execution> => api<Execution>('GET', `/api/executions/${enc(id)}`).then((e) => {
      if (!stop.signal.aborted) {
        setExecution(e);
        setLogs(e.logs ?? []);
      }
      return e;
    });
    // a parked execution's stream ends at once: its record is read again until it resumes
    const pollWhileWaiting = (e: Execution): void => {
      if (e.status !== 'waiting' || stop.signal.aborted) return;
      const timer = setTimeout(() => setTick((t) => t + 1), WAITING_POLL_MS);
      stop.signal.addEventListener('abort', () => clearTimeout(timer));
    };
    read().then((e) => {
      if (ENDED.has(e.status)) return undefined;
      if (e.status === 'waiting') return pollWhileWaiting(e);
      return followEvents(id, (ev) => {
        if (ev.event.startsWith('block.') && ev.data !== null && typeof ev.data === 'object') setLogs((l) => merge(l, fromEvent(ev.event, ev.data as BlockLog)));
        if (ev.event.startsWith('execution.')) setExecution((x) => (x ? { ...x, status: ev.event.slice(10) as Execution['status'] } : x));
      }, stop.signal).then(() => read()).then(pollWhileWaiting);
    }).catch((err: unknown) => {
      if (!stop.signal.aborted) setError(explain(err));
    });
    return () => stop.abort();
  }, [id, tick]);
  return { execution, logs, error, reload: () => setTick((t) => t + 1) };
}

/** The state each block shows on the graph: running if any iteration runs, else its latest log's. */
export function blockStates(logs: BlockLog[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of [...logs].sort((a, b) => (a.order ?? 0) - (b.order ?? 0))) {
    if (out[l.blockId] === 'running' || out[l.blockId] === 'waiting') continue;
    out[l.blockId] = l.status;
  }
  return out;
}
