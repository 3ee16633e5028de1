/**
 * SPEC §5's lifecycle events, published in order even across a bus outage.
 *
 * An execution can end while NATS is away (it often ends *because* NATS went away: its next
 * publish fails with BUS_UNAVAILABLE). Its `failed` event would then be lost, and a subscriber
 * that saw `started` would wait forever. So an event the bus refuses while it reconnects is held
 * here, and the held events are published, oldest first, once the bus has been back for a grace
 * period (see DEFAULT_GRACE_MS). New events queue behind held ones, so subscribers see each
 * execution's events in order. Held events live in memory: at most `capacity`, the
 * oldest dropped past it with one warning per outage; a bus that closes for good (the process
 * stops) drops them, said once.
 *
 * Both adapters: the memory bus refuses only once closed (BUS_CLOSED), so nothing is ever held
 * there; the NATS bus refuses with BUS_UNAVAILABLE while `connected` is false.
 */
import type { Bus } from '../bus/types.js';
import { TroupeError } from '../errors.js';
import type { CancelTimer, Clock } from '../model/clock.js';
import { systemClock } from './clock.js';

export interface OutboxOptions {
  /** events held at most (default 10 000) */
  capacity?: number;
  /** how long the bus must have been back before held events go out (default 3 s) */
  graceMs?: number;
  /** what the retries wait on and the grace period is read against (default the system clock) */
  clock?: Clock;
}

const DEFAULT_CAPACITY = 10_000;
/**
 * Core NATS delivers a message only to the subscribers connected at that moment, and the other
 * services' clients come back on their own schedule (the nats clients retry every 2 s by
 * default): held events wait that long after our own reconnect, so that they find them.
 */
const DEFAULT_GRACE_MS = 3_000;
const RETRY_MS = 250;

interface Held {
  subject: string;
  payload: unknown;
}

export class EventOutbox {
  private queue: Held[] = [];
  private timer: CancelTimer | undefined;
  /** one overflow warning per outage: reset once everything held is out */
  private warned = false;
  /** when the bus was first seen connected again since events were held */
  private upSince: number | undefined;
  private readonly capacity: number;
  private readonly graceMs: number;
  private readonly clock: Clock;

  constructor(
    private readonly bus: Bus,
    private readonly report: (err: unknown) => void,
    opts: OutboxOptions = {},
  ) {
    this.capacity = opts.capacity ?? DEFAULT_CAPACITY;
    this.graceMs = opts.graceMs ?? DEFAULT_GRACE_MS;
    this.clock = opts.clock ?? systemClock;
  }

  /** how many events wait for the bus */
  get held(): number {
    return this.queue.length;
  }

  /** Publishes now, or holds it behind the events already waiting. Never throws. */
  publish(subject: string, payload: unknown): void {
    if (this.queue.length === 0) {
      if (this.attempt(subject, payload) === 'done') return;
      this.upSince = undefined;
    } else if (this.queue.length >= this.capacity) {
      this.overflow();
    }
    this.queue.push({ subject, payload });
    this.later();
  }

  private later(): void {
    // it only waits for the bus: it must not keep a stopping process alive
    this.timer ??= this.clock.setTimer(RETRY_MS, this.retry, { background: true });
  }

  private readonly retry = (): void => {
    this.timer = undefined;
    if (!this.bus.connected) {
      this.upSince = undefined;
      // a refused attempt costs nothing, and tells reconnecting (held) from closed (dropped)
      const head = this.queue[0];
      if (head !== undefined && this.attempt(head.subject, head.payload) === 'done') this.queue.shift();
      if (this.queue.length > 0) this.later();
      return;
    }
    const now = this.clock.now();
    this.upSince ??= now;
    if (now - this.upSince < this.graceMs) this.later();
    else this.drain();
  };

  /** Publishes what is held, in order, until the bus refuses again. */
  private drain(): void {
    let sent = 0;
    while (sent < this.queue.length) {
      const head = this.queue[sent] as Held;
      if (this.attempt(head.subject, head.payload) === 'hold') break;
      sent += 1;
    }
    if (sent > 0) this.queue = this.queue.slice(sent);
    if (this.queue.length > 0) {
      this.upSince = undefined;
      this.later();
      return;
    }
    this.warned = false;
  }

  /** 'hold' while the bus is reconnecting; 'done' when sent, or refused for good (reported). */
  private attempt(subject: string, payload: unknown): 'done' | 'hold' {
    try {
      this.bus.publish(subject, payload);
      return 'done';
    } catch (err) {
      if (err instanceof TroupeError && err.code === 'BUS_UNAVAILABLE') return 'hold';
      if (err instanceof TroupeError && err.code === 'BUS_CLOSED' && this.queue.length > 0) this.dropAll();
      else this.report(err);
      return 'done';
    }
  }

  private overflow(): void {
    this.queue.shift();
    if (this.warned) return;
    this.warned = true;
    this.report(new TroupeError('BUS_UNAVAILABLE', `${this.capacity} execution lifecycle events are waiting for the bus to come back: from now on the oldest are dropped to make room`, {
      details: { capacity: this.capacity },
    }));
  }

  private dropAll(): void {
    if (this.queue.length === 0) return;
    const lost = this.queue.length;
    this.queue = [];
    this.report(new TroupeError('BUS_CLOSED', `${lost} execution lifecycle events held during a bus outage were not published: the bus closed`, { details: { lost } }));
  }
}
