/**
 * PostgreSQL failures as TroupeErrors. The SQLSTATE class says whether trying again can help:
 * a lost connection, a serialization failure or deadlock, a server shutting down or out of
 * resources can; a value the server refuses (a NUL character in text, a number out of range)
 * or a schema mismatch never will.
 */
import { TroupeError } from '../../errors.js';

/** SQLSTATE classes and codes worth a retry. */
const RETRYABLE_CLASSES: ReadonlySet<string> = new Set(['08', '40', '53', '57', '58']);
const RETRYABLE_CODES: ReadonlySet<string> = new Set(['55P03']);

/** The SQLSTATE of a server error (five characters), or undefined for other errors. */
export function sqlState(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || err instanceof TroupeError) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

export function isRetryableState(state: string): boolean {
  return RETRYABLE_CLASSES.has(state.slice(0, 2)) || RETRYABLE_CODES.has(state);
}

/** For `guarded`: server errors by their SQLSTATE; null leaves the default (retryable STORE_ERROR: IO, a dropped socket). */
export function classifyPgError(err: unknown, doing: string): TroupeError | null {
  const state = sqlState(err);
  if (state === undefined) return null;
  const message = err instanceof Error ? err.message : String(err);
  return new TroupeError('STORE_ERROR', `store failed while ${doing}: ${message} (SQLSTATE ${state})`, {
    cause: err,
    retryable: isRetryableState(state),
    details: { sqlstate: state },
  });
}

/** A unique violation (23505) on the named constraint, or on any when none is named. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  if (sqlState(err) !== '23505') return false;
  return constraint === undefined || (err as { constraint?: unknown }).constraint === constraint;
}
