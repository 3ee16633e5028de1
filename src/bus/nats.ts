/**
 * The distributed bus: the Bus port over a NATS connection (`nats` 2.x client).
 *
 * Data travel as JSON (UTF-8); an empty payload is `undefined`. Subjects, queue names and headers
 * are checked with the same rules as the memory adapter before anything reaches the client, so
 * both adapters fail alike. Client errors are mapped to TroupeError codes: TIMEOUT → BUS_TIMEOUT,
 * 503 → NO_RESPONDERS, closed/draining connection → BUS_CLOSED.
 */
import { connect, Empty, ErrorCode, headers as natsHeaders, nanos, NatsError } from 'nats';
import type { JetStreamManager, Msg, MsgHdrs, NatsConnection } from 'nats';
import { TroupeError, toTroupeError } from '../errors.js';
import {
  assertHeaders,
  assertSubject,
  assertSubscription,
  assertTimeout,
  closedError,
  defaultErrorHook,
  unavailableError,
  noRespondersError,
  timeoutError,
} from './checks.js';
import { DEFAULT_REQUEST_TIMEOUT_MS } from './types.js';
import type {
  Bus,
  BusAdapterOptions,
  BusErrorHook,
  BusMsg,
  DurableOptions,
  DurableStream,
  PublishOptions,
  RequestOptions,
  SubscribeOptions,
  Subscription,
} from './types.js';

export interface NatsBusOptions extends BusAdapterOptions {
  /** connection name shown by the server (monitoring) */
  name?: string;
  /** the JetStream streams `publishDurable` stores in, made or updated on its first use */
  streams?: readonly DurableStream[];
  /** what goes wrong off the caller's path (a server without JetStream) */
  onWarning?: (message: string) => void;
}

/** how long JetStream remembers a message id to drop a repeat */
const DUPLICATE_WINDOW_MS = 2 * 60_000;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class NatsBus implements Bus {
  readonly kind = 'nats' as const;
  private readonly onError: BusErrorHook;
  private closed = false;
  /** the streams made (true) or found missing from the server (false: no JetStream), once */
  private durable: Promise<boolean> | null = null;

  /** whether the client has a server now (see Bus.connected); follows the client's status */
  private linked = true;

  private constructor(private readonly nc: NatsConnection, private readonly opts: NatsBusOptions) {
    this.onError = opts.onError ?? defaultErrorHook;
    void this.followStatus();
  }

  static async connect(url: string, opts: NatsBusOptions = {}): Promise<NatsBus> {
    try {
      // noAsyncTraces: no Error object (stack capture) per request; we map errors ourselves.
      // A service keeps trying to reconnect, however long NATS is away (the client's default
      // gives up after ten tries, about 20 s, and the bus would be closed for good).
      const nc = await connect({
        servers: url, noAsyncTraces: true, maxReconnectAttempts: -1, reconnectTimeWait: 1000,
        ...(opts.name === undefined ? {} : { name: opts.name }),
      });
      return new NatsBus(nc, opts);
    } catch (err) {
      throw new TroupeError('CONNECTION_FAILED', `cannot connect to NATS at ${url}: ${(err as Error).message}`, {
        cause: err,
        retryable: true,
      });
    }
  }

  get connected(): boolean {
    return this.linked && !this.closed && !this.nc.isClosed();
  }

  /** The client's disconnects and reconnects, until it closes. */
  private async followStatus(): Promise<void> {
    try {
      for await (const s of this.nc.status()) {
        if (s.type === 'disconnect' || s.type === 'reconnecting') this.linked = false;
        else if (s.type === 'reconnect') this.linked = true;
      }
    } catch {
      // the status feed ends with the connection
    }
  }

  publish(subject: string, data: unknown, opts?: PublishOptions): void {
    if (this.closed) throw closedError();
    // the client would accept it and drop it when it reconnects: refuse it while it can be seen
    if (!this.linked) throw unavailableError();
    assertSubject(subject);
    if (opts?.reply !== undefined) assertSubject(opts.reply);
    assertHeaders(opts?.headers);
    try {
      this.nc.publish(subject, encode(data), { reply: opts?.reply, headers: toNatsHeaders(opts?.headers) });
    } catch (err) {
      throw mapClientError(err, subject, 0);
    }
  }

  subscribe<T = unknown>(subject: string, handler: (msg: BusMsg<T>) => void, opts?: SubscribeOptions): Subscription {
    if (this.closed) throw closedError();
    assertSubscription(subject, opts?.queue);
    const callback = (err: NatsError | null, m: Msg): void => {
      if (err !== null) {
        this.report(err, { subject, data: undefined });
        return;
      }
      const msg = toBusMsg(m) as BusMsg<T>;
      try {
        handler(msg);
      } catch (e) {
        this.report(e, msg);
      }
    };
    let sub;
    try {
      sub = this.nc.subscribe(subject, { callback, ...(opts?.queue === undefined ? {} : { queue: opts.queue }) });
    } catch (err) {
      throw mapClientError(err, subject, 0);
    }
    return {
      subject,
      unsubscribe: () => {
        // unsubscribing after close (or twice) is harmless, as in the memory adapter
        if (!sub.isClosed() && !this.nc.isClosed()) sub.unsubscribe();
      },
    };
  }

  async request<T = unknown>(subject: string, data: unknown, opts?: RequestOptions): Promise<BusMsg<T>> {
    const timeoutMs = opts?.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    if (this.closed) throw closedError();
    assertSubject(subject);
    assertHeaders(opts?.headers);
    assertTimeout(timeoutMs);
    try {
      const m = await this.nc.request(subject, encode(data), { timeout: timeoutMs, headers: toNatsHeaders(opts?.headers) });
      return toBusMsg(m) as BusMsg<T>;
    } catch (err) {
      // the client cancels pending requests with a TIMEOUT error when the connection drains
      if (this.closed) throw new TroupeError('BUS_CLOSED', 'the bus closed before the reply arrived', { cause: err });
      throw mapClientError(err, subject, timeoutMs);
    }
  }

  reply(msg: BusMsg, data: unknown, opts?: { headers?: Record<string, string> }): void {
    if (msg.reply === undefined) return;
    this.publish(msg.reply, data, opts?.headers === undefined ? undefined : { headers: opts.headers });
  }

  async publishDurable(subject: string, data: unknown, opts: DurableOptions): Promise<void> {
    if (this.closed) throw closedError();
    assertSubject(subject);
    assertHeaders(opts.headers);
    if (!(await this.streamsReady())) {
      this.publish(subject, data, opts.headers === undefined ? undefined : { headers: opts.headers });
      await this.flush();
      return;
    }
    try {
      await this.nc.jetstream().publish(subject, encode(data), { msgID: opts.msgId, headers: toNatsHeaders(opts.headers) });
    } catch (err) {
      throw mapClientError(err, subject, 0);
    }
  }

  /**
   * Makes the configured streams (or updates their subjects and age), once. A server without
   * JetStream answers false: durable publishes then fall back to plain ones, said once.
   * A failure of another kind is not remembered, so the next publish tries again.
   */
  private streamsReady(): Promise<boolean> {
    this.durable ??= ensureStreams(this.nc, this.opts.streams ?? []).then(
      (enabled) => {
        if (!enabled) this.opts.onWarning?.('the NATS server has no JetStream: webhook events are published without being kept on the bus');
        return enabled;
      },
      (err: unknown) => {
        this.durable = null;
        throw mapClientError(err, '', 0);
      },
    );
    return this.durable;
  }

  async flush(): Promise<void> {
    if (this.closed || this.nc.isClosed()) return;
    await this.nc.flush();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.nc.isClosed()) return;
    try {
      await this.nc.drain();
    } catch (err) {
      if (!this.nc.isClosed()) throw mapClientError(err, '', 0);
    }
  }

  private report(err: unknown, msg: BusMsg): void {
    try {
      this.onError(err, msg);
    } catch {
      // a throwing error hook must not break the client's dispatch loop
    }
  }
}

async function ensureStreams(nc: NatsConnection, streams: readonly DurableStream[]): Promise<boolean> {
  let jsm: JetStreamManager;
  try {
    jsm = await nc.jetstreamManager();
  } catch (err) {
    if (err instanceof NatsError && (err.code === ErrorCode.JetStreamNotEnabled || err.code === ErrorCode.NoResponders)) return false;
    throw err;
  }
  for (const s of streams) {
    const config = { name: s.name, subjects: [...s.subjects], max_age: nanos(s.maxAgeMs), duplicate_window: nanos(Math.min(DUPLICATE_WINDOW_MS, s.maxAgeMs)) };
    const existing = await jsm.streams.info(s.name).catch((err: unknown) => {
      if (err instanceof NatsError && err.api_error?.err_code === STREAM_NOT_FOUND) return null;
      throw err;
    });
    if (existing === null) await jsm.streams.add(config);
    else await jsm.streams.update(s.name, config);
  }
  return true;
}

/** JetStream's API error code for "stream not found" */
const STREAM_NOT_FOUND = 10059;

function encode(data: unknown): Uint8Array {
  if (data === undefined) return Empty;
  const json = JSON.stringify(data);
  return json === undefined ? Empty : encoder.encode(json);
}

/** JSON payloads decode to values; a non-JSON payload (a foreign publisher) stays a string. */
function decode(bytes: Uint8Array): unknown {
  if (bytes.length === 0) return undefined;
  const text = decoder.decode(bytes);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function toNatsHeaders(h: Record<string, string> | undefined): MsgHdrs | undefined {
  if (h === undefined) return undefined;
  const keys = Object.keys(h);
  if (keys.length === 0) return undefined;
  const out = natsHeaders();
  for (const k of keys) out.set(k, h[k] as string);
  return out;
}

function toBusMsg(m: Msg): BusMsg {
  const msg: BusMsg = { subject: m.subject, data: decode(m.data) };
  if (m.reply) msg.reply = m.reply;
  if (m.headers !== undefined) {
    const h: Record<string, string> = {};
    let any = false;
    for (const [k, values] of m.headers) {
      const v = values[0];
      if (v !== undefined) {
        h[k] = v;
        any = true;
      }
    }
    if (any) msg.headers = h;
  }
  return msg;
}

function mapClientError(err: unknown, subject: string, timeoutMs: number): TroupeError {
  if (err instanceof TroupeError) return err;
  if (err instanceof NatsError) {
    switch (err.code) {
      case ErrorCode.Timeout:
        return timeoutError(subject, timeoutMs);
      case ErrorCode.NoResponders:
        return noRespondersError(subject);
      case ErrorCode.ConnectionClosed:
      case ErrorCode.ConnectionDraining:
        return new TroupeError('BUS_CLOSED', 'the NATS connection is closed', { cause: err });
      case ErrorCode.BadSubject:
        return new TroupeError('INVALID_SUBJECT', err.message, { cause: err, details: { subject } });
      default:
        break;
    }
  }
  return toTroupeError(err);
}
