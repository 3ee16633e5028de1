/**
 * Executions running in this process, seen as numbered events. The numbers are the run's own
 * (ExecutionRun counts them once, for the store and this feed alike), so a follower can switch
 * between the store and the live feed without gaps or repeats, and a resumed run's events go on
 * after the stored ones.
 */
import type { ExecutionEvent } from '../runtime/types.js';

export interface SeqEvent {
  seq: number;
  event: string;
  data: unknown;
}

type Listener = (event: SeqEvent) => void;

interface Entry {
  /** the number of the last event before this run's first: the stored events of the run it resumes */
  base: number;
  /** every event so far; null once it grew past the cap (followers then read the store) */
  history: SeqEvent[] | null;
  /** made by the first follower: most executions (a sync execute's) never have one */
  listeners: Set<Listener> | null;
}

/** a long execution keeps at most this many events in memory for late followers */
const HISTORY_CAP = 5000;

export class LiveExecutions {
  private readonly entries = new Map<string, Entry>();

  /** Registers an execution about to start; returns the listener to hand to Engine.start. */
  /** `base`: the number of the last stored event of the run this one resumes (its StartRequest's `resume.lastSeq`). */
  open(id: string, observe?: (event: ExecutionEvent) => void, base = 0): (event: ExecutionEvent, seq: number) => void {
    const entry: Entry = { base, history: [], listeners: null };
    this.entries.set(id, entry);
    return (event, seq) => {
      const numbered: SeqEvent = { seq, event: event.type, data: event.data };
      if (entry.history !== null) {
        entry.history.push(numbered);
        if (entry.history.length > HISTORY_CAP) entry.history = null;
      }
      observe?.(event);
      if (entry.listeners !== null) for (const l of entry.listeners) l(numbered);
      // a parked execution's run ends with `waiting`; the run that resumes it opens a new entry
      if (event.type === 'done' || event.type === 'waiting') this.entries.delete(id);
    };
  }

  /** Forgets an execution that will produce no more events (start failed, or it ended). */
  close(id: string): void {
    this.entries.delete(id);
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  /**
   * How many events came before this run's first (a resumed run's stored ones, which a follower
   * reads from the store first); 0 for a run that started here, null when not live here.
   */
  before(id: string): number | null {
    return this.entries.get(id)?.base ?? null;
  }

  /**
   * Replays the history to `listener`, then keeps it subscribed; returns the unsubscribe
   * function, or null when the execution is not live here or its history was dropped.
   */
  follow(id: string, listener: Listener): (() => void) | null {
    const entry = this.entries.get(id);
    if (entry === undefined || entry.history === null) return null;
    for (const e of entry.history) listener(e);
    const listeners = (entry.listeners ??= new Set());
    listeners.add(listener);
    return () => listeners.delete(listener);
  }
}
