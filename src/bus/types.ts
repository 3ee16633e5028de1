/**
 * The bus port. Two adapters implement it with identical, NATS-shaped semantics
 * (test/contract/bus.test.ts proves it): MemoryBus (embedded default) and NatsBus.
 *
 * Message data are JSON values and immutable by convention: the memory adapter hands the same
 * object to every subscriber without copying, the NATS adapter JSON-encodes it. A handler that
 * mutates received data is a bug.
 *
 * Delivery is always asynchronous: a handler never runs inside publish().
 *
 * Size: the memory adapter passes any message; the NATS adapter splits one over the server's
 * max_payload and the subscription puts it back together (nats-chunks.ts), for plain
 * subscriptions and request inboxes. What it cannot carry is BUS_MESSAGE_TOO_LARGE: over 64 MiB,
 * a split message to a queue group, a durable message over max_payload (docs/operations.md).
 */
export interface BusMsg<T = unknown> {
  subject: string;
  data: T;
  /** set on requests: where reply() sends the answer */
  reply?: string;
  headers?: Record<string, string>;
}

export interface Subscription {
  readonly subject: string;
  unsubscribe(): void;
}

export interface PublishOptions {
  reply?: string;
  headers?: Record<string, string>;
}

export interface RequestOptions {
  /** default DEFAULT_REQUEST_TIMEOUT_MS */
  timeoutMs?: number;
  headers?: Record<string, string>;
}

export interface DurableOptions {
  /** the message's identity: a second publish with the same id is stored once */
  msgId: string;
  headers?: Record<string, string>;
}

/** A JetStream stream the NATS adapter keeps durable messages in (created or updated on first use). */
export interface DurableStream {
  name: string;
  subjects: string[];
  /** how long messages are kept */
  maxAgeMs: number;
}

export interface SubscribeOptions {
  /**
   * queue group: each message goes to exactly one member of the group. NATS: a message split for
   * being over max_payload reaches no member (BUS_MESSAGE_TOO_LARGE through the error hook)
   */
  queue?: string;
}

export interface Bus {
  /** fire-and-forget; throws INVALID_SUBJECT, BUS_UNAVAILABLE (see `connected`), BUS_CLOSED or BUS_MESSAGE_TOO_LARGE */
  publish(subject: string, data: unknown, opts?: PublishOptions): void;
  subscribe<T = unknown>(subject: string, handler: (msg: BusMsg<T>) => void, opts?: SubscribeOptions): Subscription;
  /**
   * rejects with TroupeError BUS_TIMEOUT, NO_RESPONDERS (at once when nobody listens), BUS_CLOSED,
   * BUS_UNAVAILABLE (NATS reconnecting) or BUS_MESSAGE_TOO_LARGE
   */
  request<T = unknown>(subject: string, data: unknown, opts?: RequestOptions): Promise<BusMsg<T>>;
  /** answer a request; a no-op when msg carries no reply subject */
  reply(msg: BusMsg, data: unknown, opts?: { headers?: Record<string, string> }): void;
  /**
   * Publishes a message the bus keeps (webhook events, SPEC §4.3): resolves once it is stored
   * where a consumer that was not listening can still read it. NATS: a JetStream stream that
   * covers the subject acknowledged it (`msgId` de-duplicates a repeat within the stream's
   * window); without JetStream on the server, a publish that reached the server (reported once
   * through `onWarning`). Memory: delivered like `publish`; in one process the caller's store is
   * what outlives a crash. Subscribers receive it like any published message. Never split: over
   * NATS's max_payload it rejects with BUS_MESSAGE_TOO_LARGE.
   */
  publishDurable(subject: string, data: unknown, opts: DurableOptions): Promise<void>;
  /** resolves when everything published so far has reached the server (memory: was delivered) */
  flush(): Promise<void>;
  /** drains pending deliveries; afterwards publish/subscribe/request fail with BUS_CLOSED */
  close(): Promise<void>;
  /**
   * False while messages cannot reach the server (NATS reconnecting after a lost connection,
   * or closed): a publish then throws BUS_UNAVAILABLE (BUS_CLOSED once closed) rather than be
   * dropped, which the NATS client does silently. Memory: true until closed.
   */
  readonly connected: boolean;
  readonly kind: 'memory' | 'nats';
}

/** Called with every exception a subscription handler throws; delivery continues regardless. */
export type BusErrorHook = (err: unknown, msg: BusMsg) => void;

export interface BusAdapterOptions {
  onError?: BusErrorHook;
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 5000;
