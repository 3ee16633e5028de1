/**
 * The bus port. Two adapters implement it with identical, NATS-shaped semantics
 * (test/contract/bus.test.ts proves it): MemoryBus (embedded default) and NatsBus.
 *
 * Message data are JSON values and immutable by convention: the memory adapter hands the same
 * object to every subscriber without copying, the NATS adapter JSON-encodes it. A handler that
 * mutates received data is a bug.
 *
 * Delivery is always asynchronous: a handler never runs inside publish().
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

export interface SubscribeOptions {
  /** queue group: each message goes to exactly one member of the group */
  queue?: string;
}

export interface Bus {
  /** fire-and-forget; throws INVALID_SUBJECT or BUS_CLOSED */
  publish(subject: string, data: unknown, opts?: PublishOptions): void;
  subscribe<T = unknown>(subject: string, handler: (msg: BusMsg<T>) => void, opts?: SubscribeOptions): Subscription;
  /** rejects with TroupeError BUS_TIMEOUT, NO_RESPONDERS (at once when nobody listens), BUS_CLOSED */
  request<T = unknown>(subject: string, data: unknown, opts?: RequestOptions): Promise<BusMsg<T>>;
  /** answer a request; a no-op when msg carries no reply subject */
  reply(msg: BusMsg, data: unknown, opts?: { headers?: Record<string, string> }): void;
  /** resolves when everything published so far has reached the server (memory: was delivered) */
  flush(): Promise<void>;
  /** drains pending deliveries; afterwards publish/subscribe/request fail with BUS_CLOSED */
  close(): Promise<void>;
  readonly kind: 'memory' | 'nats';
}

/** Called with every exception a subscription handler throws; delivery continues regardless. */
export type BusErrorHook = (err: unknown, msg: BusMsg) => void;

export interface BusAdapterOptions {
  onError?: BusErrorHook;
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 5000;
