/**
 * What MongoDB refuses that SQLite does not: a document above 16 MiB. The SQLite adapter
 * stores an execution's context, output or a block log of any size, so on MongoDB the same
 * write must fail clearly (a STORE_ERROR that is not retryable, since writing it again can
 * never succeed) and, where it can be known up front, before anything of the batch is written.
 */
import { BSON } from 'mongodb';
import { TroupeError } from '../../errors.js';

/** The server's `maxBsonObjectSize`, fixed at 16 MiB on every MongoDB version. */
export const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;

/** BSONObjectTooLarge, and "Resulting document after update is larger than 16777216". */
const TOO_LARGE_CODES: ReadonlySet<number> = new Set([10334, 17419]);
/** The driver's and the server's wording where the code alone does not say it (BadValue, bulk checks). */
const TOO_LARGE_MESSAGE = /too large|larger than (the maximum size|\d+)|size must be between 0 and/i;

export function documentTooLarge(what: string, bytes: number | null, cause?: unknown): TroupeError {
  const size = bytes === null ? '' : ` (${bytes} bytes)`;
  return new TroupeError('STORE_ERROR', `${what} is too large for MongoDB${size}: a document holds at most ${MAX_DOCUMENT_BYTES} bytes`, {
    retryable: false,
    details: { reason: 'DOCUMENT_TOO_LARGE', limit: MAX_DOCUMENT_BYTES, ...(bytes === null ? {} : { bytes }) },
    ...(cause === undefined ? {} : { cause }),
  });
}

/** Throws documentTooLarge before the write when `doc` (as BSON) exceeds the limit. */
export function checkDocumentSize(doc: object, what: string): void {
  const bytes = BSON.calculateObjectSize(doc as BSON.Document);
  if (bytes > MAX_DOCUMENT_BYTES) throw documentTooLarge(what, bytes);
}

export function isDocumentTooLarge(err: unknown): boolean {
  if (typeof err !== 'object' || err === null || err instanceof TroupeError) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === 'number' && TOO_LARGE_CODES.has(code)) return true;
  return typeof message === 'string' && TOO_LARGE_MESSAGE.test(message);
}

/** For `guarded`: the driver errors this adapter names itself; null leaves the default (retryable STORE_ERROR). */
export function classifyMongoError(err: unknown, doing: string): TroupeError | null {
  return isDocumentTooLarge(err) ? documentTooLarge(`what ${doing} wrote`, null, err) : null;
}
