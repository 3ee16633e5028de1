/**
 * Messages larger than the NATS server's max_payload (1 MiB by default), split into ordered
 * pieces by the publisher and put back together by the subscription (SPEC §3 lets a block output
 * reach 10 MiB, and block outputs travel in bus messages: a run must not depend on the server's
 * limit).
 *
 * Every piece carries `Troupe-Chunk: <id>;<index>;<count>;<bytes>`; the first also carries the
 * message's own headers and reply subject. NATS keeps the order of one connection's messages on
 * each subscription, so a subscription sees the pieces of one message in order (perhaps
 * interleaved with other publishers' messages: hence the id), and sees nothing published after
 * them by the same connection before the last one: whole messages keep the per-publisher order.
 *
 * Core NATS may lose a message (a reconnect, a slow consumer): a message whose pieces stop
 * coming is dropped after PARTIAL_TIMEOUT_MS, and the pieces waiting in one bus never hold more
 * than MAX_PARTIAL_BYTES, so lost pieces cannot pile up.
 */
import type { Msg, MsgHdrs } from 'nats';
import { nuid } from 'nats';
import { TroupeError } from '../errors.js';

export const CHUNK_HEADER = 'Troupe-Chunk';
/** set on the reply a queue-group member sends when it cannot take a split request */
export const ERROR_HEADER = 'Troupe-Error';
/** a message above this (as JSON) is refused with BUS_MESSAGE_TOO_LARGE, split or not */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** how long the pieces of one message may take to arrive */
export const PARTIAL_TIMEOUT_MS = 30_000;
/** what the unfinished messages of one bus may hold at once */
export const MAX_PARTIAL_BYTES = 256 * 1024 * 1024;

/** room for the `Troupe-Chunk` line: the name, an id of 22 characters and three numbers */
const CHUNK_LINE_BYTES = 80;
/** `NATS/1.0\r\n` and the closing `\r\n` of a header block */
const HEADER_FRAME_BYTES = 12;
const encoder = new TextEncoder();

export interface Piece {
  data: Uint8Array;
  headers: Record<string, string>;
  /** only the first piece names the reply subject */
  first: boolean;
}

/** What a NATS header block of `headers` costs against max_payload. */
export function headerBytes(headers: Record<string, string> | undefined): number {
  if (headers === undefined) return 0;
  let n = HEADER_FRAME_BYTES;
  for (const [k, v] of Object.entries(headers)) n += encoder.encode(k).length + encoder.encode(v).length + 4;
  return n;
}

export function tooLargeError(message: string, details: Record<string, unknown>): TroupeError {
  return new TroupeError('BUS_MESSAGE_TOO_LARGE', message, { details });
}

/**
 * The pieces of `bytes`, each of which fits `maxPayload` with its headers. The message's headers
 * go on the first piece only; all pieces are cut the same size, with room for them.
 */
export function splitMessage(bytes: Uint8Array, headers: Record<string, string> | undefined, maxPayload: number): Piece[] {
  if (bytes.length > MAX_MESSAGE_BYTES) {
    throw tooLargeError(`a bus message of ${bytes.length} bytes is over the bus's limit of ${MAX_MESSAGE_BYTES} bytes`, { bytes: bytes.length, limit: MAX_MESSAGE_BYTES });
  }
  const size = maxPayload - headerBytes(headers) - CHUNK_LINE_BYTES - HEADER_FRAME_BYTES;
  // headers that leave no room worth splitting into cannot travel either
  if (size < maxPayload / 2) {
    throw tooLargeError(`the headers of a bus message take ${headerBytes(headers)} bytes of the server's ${maxPayload}`, { maxPayload });
  }
  const id = nuid.next();
  const count = Math.ceil(bytes.length / size);
  const pieces: Piece[] = [];
  for (let index = 0; index < count; index++) {
    const chunk = `${id};${index};${count};${bytes.length}`;
    pieces.push({
      data: bytes.subarray(index * size, Math.min(bytes.length, (index + 1) * size)),
      headers: index === 0 ? { ...headers, [CHUNK_HEADER]: chunk } : { [CHUNK_HEADER]: chunk },
      first: index === 0,
    });
  }
  return pieces;
}

export interface ChunkInfo {
  id: string;
  index: number;
  count: number;
  total: number;
}

/** The piece a message is, null when it is a whole one, 'invalid' for a header that is not ours. */
export function chunkOf(h: MsgHdrs | undefined): ChunkInfo | null | 'invalid' {
  if (h === undefined || !h.has(CHUNK_HEADER)) return null;
  const parts = h.get(CHUNK_HEADER).split(';');
  const [id, index, count, total] = [parts[0] ?? '', Number(parts[1]), Number(parts[2]), Number(parts[3])];
  const whole = [index, count, total].every((n) => Number.isSafeInteger(n) && n >= 0);
  if (parts.length !== 4 || id === '' || !whole || index >= count || total > MAX_MESSAGE_BYTES || count > total) return 'invalid';
  return { id, index, count, total };
}

/** The bytes of the unfinished messages of one bus, against MAX_PARTIAL_BYTES. */
export interface PartialBudget {
  bytes: number;
}

interface Partial {
  first: Msg;
  info: ChunkInfo;
  buffer: Uint8Array;
  filled: number;
  next: number;
  timer: NodeJS.Timeout;
}

/** A whole message put back together: its first piece (subject, reply, headers) and all its bytes. */
export interface Assembled {
  first: Msg;
  bytes: Uint8Array;
}

/** The unfinished messages of one subscription. */
export class Reassembly {
  private readonly partials = new Map<string, Partial>();

  constructor(
    private readonly budget: PartialBudget,
    private readonly report: (err: TroupeError) => void,
    private readonly timeoutMs = PARTIAL_TIMEOUT_MS,
  ) {}

  /** Takes one piece; returns the message once its last piece is in, else null. */
  add(info: ChunkInfo, m: Msg): Assembled | null {
    const partial = info.index === 0 ? this.open(info, m) : this.partials.get(info.id);
    // a piece whose first one was lost, or that came after its message was dropped
    if (partial === undefined) return null;
    if (info.index !== partial.next || info.count !== partial.info.count || partial.filled + m.data.length > partial.info.total) {
      this.drop(partial, `piece ${info.index} of ${info.count} arrived out of sequence`);
      return null;
    }
    partial.buffer.set(m.data, partial.filled);
    partial.filled += m.data.length;
    partial.next += 1;
    if (partial.next < partial.info.count) return null;
    this.release(partial);
    if (partial.filled !== partial.info.total) {
      this.report(incomplete(partial, `its pieces held ${partial.filled} of ${partial.info.total} bytes`));
      return null;
    }
    return { first: partial.first, bytes: partial.buffer };
  }

  /** Drops every unfinished message (the subscription ends). */
  clear(): void {
    for (const partial of [...this.partials.values()]) this.release(partial);
  }

  private open(info: ChunkInfo, m: Msg): Partial | undefined {
    const stale = this.partials.get(info.id);
    if (stale !== undefined) this.drop(stale, 'its first piece arrived again');
    if (this.budget.bytes + info.total > MAX_PARTIAL_BYTES) {
      this.report(incomplete({ first: m, info }, `unfinished messages already hold ${this.budget.bytes} bytes (at most ${MAX_PARTIAL_BYTES})`));
      return undefined;
    }
    this.budget.bytes += info.total;
    const partial: Partial = { first: m, info, buffer: new Uint8Array(info.total), filled: 0, next: 0, timer: undefined as unknown as NodeJS.Timeout };
    partial.timer = setTimeout(() => this.drop(partial, `its pieces did not all arrive within ${this.timeoutMs} ms`), this.timeoutMs);
    // a dropped message must not keep the process alive
    partial.timer.unref();
    this.partials.set(info.id, partial);
    return partial;
  }

  private drop(partial: Partial, why: string): void {
    if (this.partials.get(partial.info.id) !== partial) return;
    this.release(partial);
    this.report(incomplete(partial, why));
  }

  private release(partial: Partial): void {
    if (this.partials.get(partial.info.id) !== partial) return;
    this.partials.delete(partial.info.id);
    clearTimeout(partial.timer);
    this.budget.bytes -= partial.info.total;
  }
}

function incomplete(partial: { first: Msg; info: ChunkInfo }, why: string): TroupeError {
  const { first, info } = partial;
  return new TroupeError('BUS_MESSAGE_INCOMPLETE', `a message of ${info.total} bytes on "${first.subject}" in ${info.count} pieces was dropped: ${why}`, {
    details: { subject: first.subject, bytes: info.total, pieces: info.count },
  });
}
