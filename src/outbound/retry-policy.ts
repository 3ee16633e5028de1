import type { ErrorCode } from '../errors.js';
import { BLOCKED_ADDRESS_CODE } from './guarded-agent.js';

/**
 * What SPEC §3 retries and how long it waits. Pure functions: the client feeds them the
 * outcome of an attempt and the injected clock/random.
 */

/** An attempt that ended without a usable response. */
export class AttemptFailure extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  constructor(code: ErrorCode, message: string, retryable: boolean, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'AttemptFailure';
    this.code = code;
    this.retryable = retryable;
  }
}

/** Socket-level failures worth another try: refused, reset, DNS, unreachable. */
const RETRYABLE_NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'ETIMEDOUT',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
  'ERR_STREAM_PREMATURE_CLOSE',
  'ERR_BAD_RESPONSE', // axios: the response stream was aborted mid-way
]);

/** Problems with the request itself: the next attempt would fail the same way. */
const REQUEST_ERROR_CODES: ReadonlySet<string> = new Set(['ERR_INVALID_CHAR', 'ERR_INVALID_HTTP_TOKEN', 'ERR_INVALID_URL', 'ERR_BAD_OPTION_VALUE']);

interface CodedError {
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** The first errno-style code on an error, its cause, or (happy eyeballs) its inner errors. */
function errorCodeOf(err: unknown, depth = 0): string | undefined {
  if (err === null || typeof err !== 'object' || depth > 3) return undefined;
  const e = err as CodedError;
  if (e.cause !== undefined) {
    const inner = errorCodeOf(e.cause, depth + 1);
    if (inner !== undefined) return inner;
  }
  if (typeof e.code === 'string') return e.code;
  if (Array.isArray(e.errors)) return errorCodeOf(e.errors[0], depth + 1);
  return undefined;
}

/** Turns a transport error into the failure the block reports. */
export function classifyNetworkError(err: unknown): AttemptFailure {
  if (err instanceof AttemptFailure) return err;
  const code = errorCodeOf(err);
  const detail = err instanceof Error && err.message ? err.message : String(code ?? err);
  if (code === BLOCKED_ADDRESS_CODE) return new AttemptFailure('BLOCKED_ADDRESS', detail, false, err);
  if (code !== undefined && REQUEST_ERROR_CODES.has(code)) {
    return new AttemptFailure('INVALID_CONFIG', `invalid request: ${detail}`, false, err);
  }
  const retryable = code !== undefined && RETRYABLE_NETWORK_CODES.has(code);
  const label = code !== undefined && code !== detail ? `${code}: ${detail}` : detail;
  return new AttemptFailure('CONNECTION_FAILED', `connection failed (${label})`, retryable, err);
}

export function isRetryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599);
}

/** Full jitter: a uniform wait between 0 and the capped exponential step. `retry` counts from 1. */
export function backoffDelay(retry: number, baseMs: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** (retry - 1));
  return Math.round(random() * ceiling);
}

/** Retry-After as delta-seconds or an HTTP-date, in ms from `nowMs`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
