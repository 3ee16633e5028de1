/**
 * Executions running in this process, seen as numbered events. Numbers follow the engine's
 * persisted `seq` (every event, `done` included, in notify order), so a follower can switch
 * between the store and the live feed without gaps or repeats.
 */
import type { ExecutionEvent } from '../runtime/types.js';

export interface SeqEvent {
  seq: number;
  event: string;
  data: unknown;
}

type Listener = (event: SeqEvent) => void;

interface Entry {
  seq: number;
  /** every event so far; null once it grew past the cap (followers then read the store) */
  history: SeqEvent[] | null;
  listeners: Set<Listener>;
}

/** a long execution keeps at most this many events in memory for late followers */
const HISTORY_CAP = 5000;

export class LiveExecutions {
  private readonly entries = new Map<string, Entry>();

  /** Registers an execution about to start; returns the listener to hand to Engine.start. */
  open(id: string, observe?: (event: ExecutionEvent) => void): (event: ExecutionEvent) => void {
    const entry: Entry = { seq: 0, history: [], listeners: new Set() };
    this.entries.set(id, entry);
    return (event) => {
      entry.seq += 1;
      const numbered: SeqEvent = { seq: entry.seq, event: event.type, data: event.data };
      if (entry.history !== null) {
        entry.history.push(numbered);
        if (entry.history.length > HISTORY_CAP) entry.history = null;
      }
      observe?.(event);
      for (const l of entry.listeners) l(numbered);
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
   * Replays the history to `listener`, then keeps it subscribed; returns the unsubscribe
   * function, or null when the execution is not live here or its history was dropped.
   */
  follow(id: string, listener: Listener): (() => void) | null {
    const entry = this.entries.get(id);
    if (entry === undefined || entry.history === null) return null;
    for (const e of entry.history) listener(e);
    entry.listeners.add(listener);
    return () => entry.listeners.delete(listener);
  }
}
