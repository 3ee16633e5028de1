/**
 * The embedded bus: NATS subject semantics inside one process, no server.
 *
 * Speed matters (the runtime publishes several messages per block), so:
 * - data is passed by reference, never serialized: messages are immutable values by convention
 *   (the NATS adapter JSON-encodes, so a handler that mutates data would behave differently);
 * - receivers are resolved at publish time (like a server routing a message) and queued; one
 *   microtask delivers everything queued so far, in order, so per-subscription order holds and no
 *   handler ever runs inside publish().
 */
import type { TroupeError } from '../errors.js';
import {
  assertHeaders,
  assertSubject,
  assertSubscription,
  assertTimeout,
  closedError,
  defaultErrorHook,
  noRespondersError,
  timeoutError,
} from './checks.js';
import { SubscriptionIndex, type MemSub } from './memory-index.js';
import { DEFAULT_REQUEST_TIMEOUT_MS } from './types.js';
import type {
  Bus,
  BusAdapterOptions,
  BusErrorHook,
  BusMsg,
  DurableOptions,
  PublishOptions,
  RequestOptions,
  SubscribeOptions,
  Subscription,
} from './types.js';

interface PendingRequest {
  sub: MemSub;
  timer: ReturnType<typeof setTimeout> | undefined;
  reject: (err: TroupeError) => void;
}

let instances = 0;

export class MemoryBus implements Bus {
  readonly kind = 'memory' as const;
  private readonly index = new SubscriptionIndex();
  private readonly onError: BusErrorHook;
  private readonly inboxPrefix: string;
  private readonly requests = new Map<string, PendingRequest>();
  private requestSeq = 0;
  private closed = false;
  // Deliveries waiting for the next microtask: receivers[i] gets msgs[i].
  private receivers: MemSub[] = [];
  private msgs: BusMsg[] = [];
  private spareReceivers: MemSub[] = [];
  private spareMsgs: BusMsg[] = [];
  private flushWaiters: Array<() => void> = [];
  private scheduled = false;

  constructor(opts: BusAdapterOptions = {}) {
    this.onError = opts.onError ?? defaultErrorHook;
    this.inboxPrefix = `_INBOX.mem${++instances}x${Math.random().toString(36).slice(2, 10)}`;
  }

  publish(subject: string, data: unknown, opts?: PublishOptions): void {
    if (this.closed) throw closedError();
    assertSubject(subject);
    if (opts?.reply !== undefined) assertSubject(opts.reply);
    assertHeaders(opts?.headers);
    this.route(makeMsg(subject, data, opts?.reply, opts?.headers));
  }

  subscribe<T = unknown>(subject: string, handler: (msg: BusMsg<T>) => void, opts?: SubscribeOptions): Subscription {
    if (this.closed) throw closedError();
    assertSubscription(subject, opts?.queue);
    const sub: MemSub = { subject, queue: opts?.queue, handler: handler as (msg: BusMsg) => void, active: true };
    this.index.add(sub);
    return {
      subject,
      unsubscribe: () => this.drop(sub),
    };
  }

  request<T = unknown>(subject: string, data: unknown, opts?: RequestOptions): Promise<BusMsg<T>> {
    const timeoutMs = opts?.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    try {
      if (this.closed) throw closedError();
      assertSubject(subject);
      assertHeaders(opts?.headers);
      assertTimeout(timeoutMs);
    } catch (err) {
      return Promise.reject(err);
    }
    const inbox = `${this.inboxPrefix}.${++this.requestSeq}`;
    return new Promise<BusMsg<T>>((resolve, reject) => {
      const sub: MemSub = {
        subject: inbox,
        queue: undefined,
        active: true,
        handler: (msg) => {
          this.settleRequest(inbox);
          resolve(msg as BusMsg<T>);
        },
      };
      this.index.add(sub);
      const receivers = this.route(makeMsg(subject, data, inbox, opts?.headers));
      if (receivers === 0) {
        this.drop(sub);
        reject(noRespondersError(subject));
        return;
      }
      const pending: PendingRequest = { sub, timer: undefined, reject };
      pending.timer = setTimeout(() => {
        this.settleRequest(inbox);
        reject(timeoutError(subject, timeoutMs));
      }, timeoutMs);
      this.requests.set(inbox, pending);
    });
  }

  reply(msg: BusMsg, data: unknown, opts?: { headers?: Record<string, string> }): void {
    if (msg.reply === undefined) return;
    this.publish(msg.reply, data, opts?.headers === undefined ? undefined : { headers: opts.headers });
  }

  /** In one process nothing outlives a crash on the bus: delivered like publish (see Bus). */
  async publishDurable(subject: string, data: unknown, opts: DurableOptions): Promise<void> {
    this.publish(subject, data, opts.headers === undefined ? undefined : { headers: opts.headers });
    await this.flush();
  }

  /** in one process nothing stands between publisher and subscriber: connected until closed */
  get connected(): boolean {
    return !this.closed;
  }

  flush(): Promise<void> {
    if (this.receivers.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.flushWaiters.push(resolve));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.flush();
    for (const inbox of [...this.requests.keys()]) {
      const pending = this.requests.get(inbox);
      this.settleRequest(inbox);
      pending?.reject(closedError());
    }
    this.index.clear();
  }

  /** Queues `msg` for every current receiver; returns how many there are. */
  private route(msg: BusMsg): number {
    const before = this.receivers.length;
    const n = this.index.collect(msg.subject, this.receivers);
    for (let i = 0; i < n; i++) this.msgs.push(msg);
    if (n > 0 && !this.scheduled) {
      this.scheduled = true;
      queueMicrotask(this.deliver);
    }
    return this.receivers.length - before;
  }

  private readonly deliver = (): void => {
    this.scheduled = false;
    const receivers = this.receivers;
    const msgs = this.msgs;
    const waiters = this.flushWaiters;
    // Swap in empty buffers first: handlers publishing now queue for the next microtask.
    this.receivers = this.spareReceivers;
    this.msgs = this.spareMsgs;
    this.flushWaiters = [];
    for (let i = 0; i < receivers.length; i++) {
      const sub = receivers[i] as MemSub;
      if (sub.active) this.invoke(sub, msgs[i] as BusMsg);
    }
    receivers.length = 0;
    msgs.length = 0;
    this.spareReceivers = receivers;
    this.spareMsgs = msgs;
    for (const resolve of waiters) resolve();
  };

  private invoke(sub: MemSub, msg: BusMsg): void {
    try {
      sub.handler(msg);
    } catch (err) {
      try {
        this.onError(err, msg);
      } catch {
        // an error hook that throws must not stop delivery to the other subscribers either
      }
    }
  }

  private drop(sub: MemSub): void {
    if (!sub.active) return;
    sub.active = false;
    this.index.remove(sub);
  }

  private settleRequest(inbox: string): void {
    const pending = this.requests.get(inbox);
    if (pending === undefined) return;
    this.requests.delete(inbox);
    clearTimeout(pending.timer);
    this.drop(pending.sub);
  }
}

function makeMsg(subject: string, data: unknown, reply: string | undefined, headers: Record<string, string> | undefined): BusMsg {
  const msg: BusMsg = { subject, data };
  if (reply !== undefined) msg.reply = reply;
  // copied so that a caller reusing its headers object cannot change a message in flight;
  // an empty set is dropped, as NATS sends no header block for it
  if (headers !== undefined && Object.keys(headers).length > 0) msg.headers = { ...headers };
  return msg;
}
