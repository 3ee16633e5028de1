/**
 * What the execution actor does while blocks wait (SPEC §2.1; docs/waiting.md). While nothing
 * but waiting blocks remains, the time limit is paused. When the earliest due time is further
 * than `parkAfterMs` away, the execution parks: its run ends with status `waiting`, its state is
 * in the store (logs, the waits' due times) and the waker resumes it from there when a wait
 * falls due. Shorter waits stay in memory, so a sync caller gets its answer as before.
 */
import type { WaitingInfo } from '../src/blocks/types.js';
import type { CancelTimer, Clock } from '../src/model/clock.js';
import type { ExecutionLedger } from '../src/runtime/execution-state.js';
import type { WaitingEntry } from '../src/runtime/types.js';

/**
 * How long nothing but waiting blocks must hold before the execution parks: on NATS a block's
 * start arrives a few milliseconds after its upstream settled, and parking in that gap would
 * only delay that block until the wake-up.
 */
export const PARK_QUIET_MS = 200;

export interface WaitingState {
  /** top-level waiting blocks by block id */
  entries: Map<string, WaitingEntry>;
  /** the time limit left when it was paused; null while it runs */
  pausedLeftMs: number | null;
  /** cancels the park check's timer while it is armed */
  quiet: CancelTimer | null;
}

export interface WaitingHost {
  ledger: ExecutionLedger;
  clock: Clock;
  waits: WaitingState | null;
  /** when the time limit falls (ms since the epoch) while it runs */
  deadlineAt: number;
  /** a wait longer than this parks the execution (TROUPE_SYNC_WAIT_MS); absent: never parks */
  parkAfterMs?: number;
  limitMs?: number;
  timeoutMs: number;
}

export function noteWaiting(host: WaitingHost, blockId: string, info: WaitingInfo): WaitingEntry {
  const waits = (host.waits ??= { entries: new Map(), pausedLeftMs: null, quiet: null });
  const entry: WaitingEntry = { blockId, iteration: null, kind: info.kind, since: info.since };
  if (info.until !== undefined) entry.until = info.until;
  if (info.message !== undefined) entry.message = info.message;
  if (info.childExecutionId !== undefined) entry.childExecutionId = info.childExecutionId;
  waits.entries.set(blockId, entry);
  return entry;
}

export function waitSettled(host: WaitingHost, blockId: string): void {
  host.waits?.entries.delete(blockId);
}

/** The earliest due time of the waiting blocks (ms), or null when one waits with no due time. */
function earliestDue(waits: WaitingState): number | null {
  let earliest = Number.POSITIVE_INFINITY;
  for (const e of waits.entries.values()) {
    if (e.until === undefined) return null;
    earliest = Math.min(earliest, Date.parse(e.until));
  }
  return earliest;
}

export interface DeadlineControl {
  pause(): number;
  resume(leftMs: number): void;
}

/** Pauses and resumes the execution's time limit timer: waiting time does not count against it (SPEC §2.1). */
export function deadlineControl(host: { clock: Clock; deadline: CancelTimer | null; deadlineAt: number }, timeout: () => void): DeadlineControl {
  return {
    pause: () => {
      host.deadline?.();
      host.deadline = null;
      return Math.max(0, host.deadlineAt - host.clock.now());
    },
    resume: (leftMs) => {
      host.deadlineAt = host.clock.now() + leftMs;
      host.deadline = host.clock.setTimer(leftMs, timeout);
    },
  };
}

/**
 * After reports were applied: pauses or resumes the time limit, and arms the park check.
 * `park` is called when the execution should park now.
 */
export function reviewWaiting(host: WaitingHost, deadline: DeadlineControl, park: () => void): void {
  const waits = host.waits;
  if (waits === null) return;
  if (!host.ledger.onlyWaiting) {
    if (waits.pausedLeftMs !== null) deadline.resume(waits.pausedLeftMs);
    waits.pausedLeftMs = null;
    waits.quiet?.();
    waits.quiet = null;
    return;
  }
  waits.pausedLeftMs ??= deadline.pause();
  const due = earliestDue(waits);
  if (host.parkAfterMs === undefined || waits.quiet !== null) return;
  if (due !== null && due - host.clock.now() <= host.parkAfterMs) return;
  waits.quiet = host.clock.setTimer(PARK_QUIET_MS, () => {
    waits.quiet = null;
    if (host.ledger.onlyWaiting) park();
  });
}

export function clearWaiting(host: WaitingHost): void {
  host.waits?.quiet?.();
}

/** The running time used when parking: the whole limit less what was left of it when it paused. */
export function activeAtPark(host: WaitingHost): number {
  const limit = host.limitMs ?? host.timeoutMs;
  const left = host.waits?.pausedLeftMs ?? Math.max(0, host.deadlineAt - host.clock.now());
  return Math.max(0, limit - left);
}

export function waitingList(host: WaitingHost): WaitingEntry[] {
  return [...(host.waits?.entries.values() ?? [])];
}
