import type { Clock } from '../model/clock.js';

/** The request the api block hands to the outbound client, after references are resolved. */
export interface OutboundRequest {
  url: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  headers: Record<string, string>;
  body?: unknown;
  timeoutMs: number;
  retries: number;
  retryBaseMs: number;
  retryMaxMs: number;
  maxResponseBytes: number;
  /**
   * The Idempotency-Key a POST or PATCH that may be repeated carries when the author set none:
   * derived from the block run (see BlockRunContext.runKey), so a run repeated after a crash
   * sends the same key; a random one when absent
   */
  idempotencyKey?: string;
}

/** One attempt of a send, as shown in the block log. */
export interface AttemptInfo {
  attempt: number;
  /** HTTP status of the final hop when a response arrived */
  status?: number;
  /** error code when no response arrived (HTTP_TIMEOUT, CONNECTION_FAILED, ...) */
  errorCode?: string;
  /** the wait before the next attempt (absent on the last one) */
  delayMs?: number;
  /** a parsed Retry-After of this attempt's response, in ms */
  retryAfterMs?: number;
}

export interface OutboundResult {
  status: number;
  headers: Record<string, string>;
  data: unknown;
  attempts: AttemptInfo[];
  /** set on a 429: the server's Retry-After in ms when it gave one */
  retryAfterMs?: number;
}

/** One resolved address, as dns.lookup({ all: true }) reports it. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Hostname → addresses. Tests inject one to map names like `metadata.test` anywhere. */
export type LookupFn = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export interface OutboundClientOptions {
  /** TROUPE_ALLOW_PRIVATE_NETWORK: skip the private/loopback/link-local refusal entirely */
  allowPrivateNetwork: boolean;
  /** hostnames (`api.internal`, `*.corp.example`), IPs or CIDRs reachable even when private */
  allowHosts: readonly string[];
  /** requests per second per host, shared by every send of the client */
  hostRps: number;
  /** requests in flight per host */
  hostMaxInflight: number;
  clock?: Clock;
  /** jitter source in [0, 1) */
  random?: () => number;
  lookup?: LookupFn;
}

export interface OutboundClient {
  send(request: OutboundRequest, signal: AbortSignal): Promise<OutboundResult>;
  /** closes pooled connections; later sends fail */
  close(): void;
}
