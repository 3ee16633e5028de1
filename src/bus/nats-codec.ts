/**
 * How the NATS adapter turns bus messages into client calls and back: JSON payloads, header
 * records, messages put back together from pieces (nats-chunks.ts), and client errors as
 * TroupeError codes (TIMEOUT → BUS_TIMEOUT, 503 → NO_RESPONDERS, closed or draining connection →
 * BUS_CLOSED, MAX_PAYLOAD_EXCEEDED → BUS_MESSAGE_TOO_LARGE).
 */
import { Empty, ErrorCode, headers as natsHeaders, NatsError } from 'nats';
import type { Msg, MsgHdrs } from 'nats';
import { TroupeError, toTroupeError } from '../errors.js';
import { noRespondersError, timeoutError } from './checks.js';
import { CHUNK_HEADER, chunkOf, tooLargeError, type Reassembly } from './nats-chunks.js';
import type { BusMsg } from './types.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encode(data: unknown): Uint8Array {
  if (data === undefined) return Empty;
  const json = JSON.stringify(data);
  return json === undefined ? Empty : encoder.encode(json);
}

/** JSON payloads decode to values; a non-JSON payload (a foreign publisher) stays a string. */
export function decode(bytes: Uint8Array): unknown {
  if (bytes.length === 0) return undefined;
  const text = decoder.decode(bytes);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export function toNatsHeaders(h: Record<string, string> | undefined): MsgHdrs | undefined {
  if (h === undefined) return undefined;
  const keys = Object.keys(h);
  if (keys.length === 0) return undefined;
  const out = natsHeaders();
  for (const k of keys) out.set(k, h[k] as string);
  return out;
}

/** `m` as a bus message, with `bytes` as its payload when it was put back together from pieces. */
export function toBusMsg(m: Msg, bytes: Uint8Array = m.data): BusMsg {
  const msg: BusMsg = { subject: m.subject, data: decode(bytes) };
  if (m.reply) msg.reply = m.reply;
  if (m.headers !== undefined) {
    const h: Record<string, string> = {};
    let any = false;
    for (const [k, values] of m.headers) {
      const v = values[0];
      if (v !== undefined && k !== CHUNK_HEADER) {
        h[k] = v;
        any = true;
      }
    }
    if (any) msg.headers = h;
  }
  return msg;
}

/**
 * The bus message `m` is or completes, for a plain subscription: null while pieces of it are
 * still to come (or when it was a broken piece, which `report` hears about).
 */
export function receive(m: Msg, reassembly: Reassembly, report: (err: TroupeError) => void): BusMsg | null {
  const info = chunkOf(m.headers);
  if (info === null) return toBusMsg(m);
  if (info === 'invalid') {
    report(new TroupeError('BUS_MESSAGE_INCOMPLETE', `a message on "${m.subject}" has a malformed ${CHUNK_HEADER} header and was dropped`, { details: { subject: m.subject } }));
    return null;
  }
  const whole = reassembly.add(info, m);
  return whole === null ? null : toBusMsg(whole.first, whole.bytes);
}

export function mapClientError(err: unknown, subject: string, timeoutMs: number): TroupeError {
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
      case ErrorCode.MaxPayloadExceeded:
        // the server's limit changed under us (a reconnect to another server): say which it is
        return tooLargeError(`a message on "${subject}" is over the NATS server's max_payload`, { subject });
      default:
        break;
    }
  }
  return toTroupeError(err);
}
