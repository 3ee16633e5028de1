/**
 * Argument checks shared by both adapters, so that a bad subject, queue or header fails the same
 * way (TroupeError INVALID_SUBJECT, synchronously) whether the bus is in-process or NATS.
 */
import { TroupeError } from '../errors.js';
import { isValidQueueName, isValidSubject, isValidSubscription } from './subjects.js';
import type { BusErrorHook, BusMsg } from './types.js';

export function assertSubject(subject: string): void {
  if (typeof subject !== 'string' || !isValidSubject(subject)) {
    throw new TroupeError('INVALID_SUBJECT', `invalid subject "${String(subject)}"`, { details: { subject } });
  }
}

export function assertSubscription(subject: string, queue: string | undefined): void {
  if (typeof subject !== 'string' || !isValidSubscription(subject)) {
    throw new TroupeError('INVALID_SUBJECT', `invalid subscription subject "${String(subject)}"`, { details: { subject } });
  }
  if (queue !== undefined && (typeof queue !== 'string' || !isValidQueueName(queue))) {
    throw new TroupeError('INVALID_SUBJECT', `invalid queue group "${String(queue)}"`, { details: { queue } });
  }
}

/** the headers the NATS adapter marks split messages and refusals with (nats-chunks.ts) */
const RESERVED_HEADERS: ReadonlySet<string> = new Set(['troupe-chunk', 'troupe-error']);

/**
 * Header keys: printable ASCII without `:`; values: no CR/LF (the NATS header block rules).
 * `Troupe-Chunk` and `Troupe-Error` are the bus's own, on both adapters.
 */
export function assertHeaders(headers: Record<string, string> | undefined): void {
  if (headers === undefined) return;
  for (const [key, value] of Object.entries(headers)) {
    if (!/^[\x21-\x39\x3b-\x7e]+$/.test(key)) {
      throw new TroupeError('INVALID_SUBJECT', `invalid header name "${key}"`, { details: { header: key } });
    }
    if (RESERVED_HEADERS.has(key.toLowerCase())) {
      throw new TroupeError('INVALID_SUBJECT', `header name "${key}" is reserved by the bus`, { details: { header: key } });
    }
    if (typeof value !== 'string' || /[\r\n]/.test(value)) {
      throw new TroupeError('INVALID_SUBJECT', `invalid value for header "${key}"`, { details: { header: key } });
    }
  }
}

export function assertTimeout(timeoutMs: number): void {
  if (!Number.isFinite(timeoutMs) || timeoutMs < 1) {
    throw new TroupeError('INVALID_REQUEST', `request timeout must be a positive number of ms, got ${timeoutMs}`);
  }
}

export function unavailableError(message = 'the bus has lost its server and is reconnecting; retry later'): TroupeError {
  return new TroupeError('BUS_UNAVAILABLE', message, {
    retryable: true,
    details: { retryAfterSec: 1 },
  });
}

export function closedError(): TroupeError {
  return new TroupeError('BUS_CLOSED', 'the bus is closed');
}

export function timeoutError(subject: string, timeoutMs: number): TroupeError {
  return new TroupeError('BUS_TIMEOUT', `no reply on "${subject}" within ${timeoutMs} ms`, {
    details: { subject, timeoutMs },
    retryable: true,
  });
}

export function noRespondersError(subject: string): TroupeError {
  return new TroupeError('NO_RESPONDERS', `no responders on "${subject}"`, { details: { subject }, retryable: true });
}

/** The hook used when an adapter is given none: a handler bug must not vanish silently. */
export const defaultErrorHook: BusErrorHook = (err: unknown, msg: BusMsg) => {
  console.error(`[troupe bus] handler for "${msg.subject}" threw:`, err);
};
