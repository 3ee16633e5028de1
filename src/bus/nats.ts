/**
 * The distributed bus: the Bus port over a NATS connection (`nats` 2.x client).
 *
 * Data travel as JSON (UTF-8); an empty payload is `undefined`. Subjects, queue names and headers
 * are checked with the same rules as the memory adapter before anything reaches the client, so
 * both adapters fail alike; client errors become TroupeError codes (nats-codec.ts).
 *
 * A message larger than the server's max_payload is split into pieces and put back together by
 * plain subscriptions and request inboxes (nats-chunks.ts), so what runs on the in-process bus
 * runs here too. What remains, each a BUS_MESSAGE_TOO_LARGE: a message over MAX_MESSAGE_BYTES;
 * a durable message over max_payload (JetStream keeps each message whole); and a split message
 * that reaches a queue-group subscription, which the group would spread over its members: the
 * member that gets its first piece reports it through the error hook and, for a request, answers
 * with that error, so the requester gets it instead of a timeout.
 */
import { connect, ErrorCode, nanos, NatsError } from 'nats';
import type { ConnectionOptions, JetStreamManager, Msg, NatsConnection } from 'nats';
import { TroupeError } from '../errors.js';
import {
  assertHeaders,
  assertSubject,
  assertSubscription,
  assertTimeout,
  closedError,
  defaultErrorHook,
  unavailableError,
} from './checks.js';
import { ERROR_HEADER, Reassembly, chunkOf, headerBytes, splitMessage, tooLargeError, type ChunkInfo, type PartialBudget } from './nats-chunks.js';
import { encode, mapClientError, receive, toNatsHeaders } from './nats-codec.js';
import { RequestMux } from './nats-requests.js';
import { maskNatsUrl, parseNatsUrl } from './nats-url.js';
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

/** the client's default, when the server has not said its own yet */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

export class NatsBus implements Bus {
  readonly kind = 'nats' as const;
  private readonly onError: BusErrorHook;
  private closed = false;
  /** the streams made (true) or found missing from the server (false: no JetStream), once */
  private durable: Promise<boolean> | null = null;
  /** the pieces of unfinished split messages, across this bus's subscriptions */
  private readonly partials: PartialBudget = { bytes: 0 };
  private readonly requests: RequestMux;

  /** whether the client has a server now (see Bus.connected); follows the client's status */
  private linked = true;

  private constructor(private readonly nc: NatsConnection, private readonly opts: NatsBusOptions) {
    this.onError = opts.onError ?? defaultErrorHook;
    this.requests = new RequestMux(nc, this.partials, (err, msg) => this.report(err, msg));
    void this.followStatus();
  }

  /**
   * `url` is NATS_URL: one server or a comma-separated list, credentials and `tls://` read by
   * nats-url.ts. Messages show it with its password or token masked.
   */
  static async connect(url: string, opts: NatsBusOptions = {}): Promise<NatsBus> {
    const target = parseNatsUrl(url);
    try {
      // noAsyncTraces: no Error object (stack capture) per request; we map errors ourselves.
      // A service keeps trying to reconnect, however long NATS is away (the client's default
      // gives up after ten tries, about 20 s, and the bus would be closed for good).
      const options: ConnectionOptions = {
        servers: target.servers, noAsyncTraces: true, maxReconnectAttempts: -1, reconnectTimeWait: 1000,
        ...(target.user === undefined ? {} : { user: target.user, pass: target.pass ?? '' }),
        ...(target.token === undefined ? {} : { token: target.token }),
        ...(target.tls ? { tls: {} } : {}),
        ...(opts.name === undefined ? {} : { name: opts.name }),
      };
      return new NatsBus(await connect(options), opts);
    } catch (err) {
      throw new TroupeError('CONNECTION_FAILED', `cannot connect to NATS at ${maskNatsUrl(url)}: ${(err as Error).message}`, {
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
    this.send(subject, data, opts?.reply, opts?.headers);
  }

  /** The one way out: whole when it fits the server's max_payload, else in pieces. */
  private send(subject: string, data: unknown, reply: string | undefined, headers: Record<string, string> | undefined, encoded?: Uint8Array): void {
    if (this.closed) throw closedError();
    // the client would accept it and drop it when it reconnects: refuse it while it can be seen
    if (!this.linked) throw unavailableError();
    assertSubject(subject);
    if (reply !== undefined) assertSubject(reply);
    assertHeaders(headers);
    const max = this.maxPayload();
    let bytes: Uint8Array;
    try {
      bytes = encoded ?? encode(data);
    } catch (err) {
      throw mapClientError(err, subject, 0);
    }
    try {
      if (bytes.length + headerBytes(headers) <= max) {
        this.nc.publish(subject, bytes, { reply, headers: toNatsHeaders(headers) });
        return;
      }
      for (const piece of splitMessage(bytes, headers, max)) {
        this.nc.publish(subject, piece.data, { reply: piece.first ? reply : undefined, headers: toNatsHeaders(piece.headers) });
      }
    } catch (err) {
      throw mapClientError(err, subject, 0);
    }
  }

  /** The server's own limit (it announces it on connect; it may differ after a reconnect). */
  private maxPayload(): number {
    return this.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD;
  }

  subscribe<T = unknown>(subject: string, handler: (msg: BusMsg<T>) => void, opts?: SubscribeOptions): Subscription {
    if (this.closed) throw closedError();
    const queue = opts?.queue;
    assertSubscription(subject, queue);
    const reportPiece = (err: TroupeError): void => this.report(err, { subject, data: undefined });
    const reassembly = new Reassembly(this.partials, reportPiece);
    const callback = (err: NatsError | null, m: Msg): void => {
      if (err !== null) {
        this.report(err, { subject, data: undefined });
        return;
      }
      const msg = queue === undefined ? receive(m, reassembly, reportPiece) : this.whole(m, queue);
      if (msg === null) return;
      try {
        handler(msg as BusMsg<T>);
      } catch (e) {
        this.report(e, msg);
      }
    };
    let sub;
    try {
      sub = this.nc.subscribe(subject, { callback, ...(queue === undefined ? {} : { queue }) });
    } catch (err) {
      throw mapClientError(err, subject, 0);
    }
    return {
      subject,
      unsubscribe: () => {
        reassembly.clear();
        // unsubscribing after close (or twice) is harmless, as in the memory adapter
        if (!sub.isClosed() && !this.nc.isClosed()) sub.unsubscribe();
      },
    };
  }

  /** A queue-group member takes whole messages only: its group spreads a split one's pieces. */
  private whole(m: Msg, queue: string): BusMsg | null {
    const info = chunkOf(m.headers);
    if (info === null) return receive(m, NO_PIECES, () => undefined);
    if (info !== 'invalid' && info.index === 0) this.refuseSplit(m, info, queue);
    return null;
  }

  private refuseSplit(m: Msg, info: ChunkInfo, queue: string): void {
    const err = tooLargeError(
      `a message of ${info.total} bytes on "${m.subject}" is over the NATS server's max_payload and reached queue group "${queue}", ` +
        'whose members would each get some of its pieces: messages that large reach plain subscriptions only',
      { subject: m.subject, queue, bytes: info.total },
    );
    this.report(err, { subject: m.subject, data: undefined });
    if (!m.reply) return;
    try {
      // the requester learns why at once instead of waiting for its timeout
      this.nc.publish(m.reply, encode({ code: err.code, message: err.message }), { headers: toNatsHeaders({ [ERROR_HEADER]: err.code }) });
    } catch {
      // the requester's timeout will tell it
    }
  }

  async request<T = unknown>(subject: string, data: unknown, opts?: RequestOptions): Promise<BusMsg<T>> {
    const timeoutMs = opts?.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    if (this.closed) throw closedError();
    assertSubject(subject);
    assertHeaders(opts?.headers);
    assertTimeout(timeoutMs);
    const send = (reply: string): void => this.send(subject, data, reply, opts?.headers);
    return (await this.requests.request(subject, timeoutMs, send)) as BusMsg<T>;
  }

  reply(msg: BusMsg, data: unknown, opts?: { headers?: Record<string, string> }): void {
    if (msg.reply === undefined) return;
    this.publish(msg.reply, data, opts?.headers === undefined ? undefined : { headers: opts.headers });
  }

  /** Durable messages are never split: a JetStream stream keeps, and its consumers read, each one whole. */
  async publishDurable(subject: string, data: unknown, opts: DurableOptions): Promise<void> {
    if (this.closed) throw closedError();
    assertSubject(subject);
    assertHeaders(opts.headers);
    const bytes = encode(data);
    const max = this.maxPayload();
    if (bytes.length + headerBytes({ ...opts.headers, 'Nats-Msg-Id': opts.msgId }) > max) {
      throw tooLargeError(`a durable message of ${bytes.length} bytes on "${subject}" is over the NATS server's max_payload of ${max} bytes (durable messages are kept whole)`, {
        subject, bytes: bytes.length, maxPayload: max,
      });
    }
    if (!(await this.streamsReady())) {
      this.send(subject, data, undefined, opts.headers, bytes);
      await this.flush();
      return;
    }
    try {
      await this.nc.jetstream().publish(subject, bytes, { msgID: opts.msgId, headers: toNatsHeaders(opts.headers) });
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
    this.requests.rejectAll(new TroupeError('BUS_CLOSED', 'the bus closed before the reply arrived'));
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

/** for whole messages, which never touch it */
const NO_PIECES = new Reassembly({ bytes: 0 }, () => undefined);

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
