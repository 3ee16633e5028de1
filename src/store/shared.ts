/** Helpers shared by both adapters, so their observable behaviour cannot drift apart. */
import { TroupeError, ValidationError } from '../errors.js';
import { MAX_PAGE_SIZE } from './types.js';
import type { BlockLog, BoundaryBatch, ExecutionEvent, LogIdentity, MemoryRole } from './types.js';

export function clampLimit(limit: number): number {
  if (!Number.isFinite(limit)) return MAX_PAGE_SIZE;
  return Math.min(MAX_PAGE_SIZE, Math.max(1, Math.floor(limit)));
}

/** Cursors are opaque to callers: base64url of a JSON array of strings (the sort key). */
export function encodeCursor(parts: string[]): string {
  return Buffer.from(JSON.stringify(parts), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string, arity: number): string[] {
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parts = undefined;
  }
  if (!Array.isArray(parts) || parts.length !== arity || !parts.every((p) => typeof p === 'string')) {
    throw new ValidationError('INVALID_REQUEST', 'invalid cursor', [{ path: '/cursor', message: 'not a cursor returned by this list' }]);
  }
  return parts as string[];
}

/** The version a version list's cursor names (its last item's): the next page lists older ones. */
export function versionCursor(cursor: string): number {
  const text = decodeCursor(cursor, 1)[0] ?? '';
  const version = Number(text);
  if (!/^[1-9]\d{0,14}$/.test(text) || !Number.isSafeInteger(version)) {
    throw new ValidationError('INVALID_REQUEST', 'invalid cursor', [{ path: '/cursor', message: 'not a cursor returned by this list' }]);
  }
  return version;
}

/**
 * One page of a short list read whole (a workflow's keys, the secret names): items in `sortKey`
 * order after the cursor's key, so a page boundary holds even when items come and go between
 * requests.
 */
export function pageOf<T>(items: readonly T[], sortKey: (item: T) => string, opts: { limit: number; cursor: string | null }): { items: T[]; nextCursor: string | null } {
  const after = opts.cursor === null ? null : (decodeCursor(opts.cursor, 1)[0] ?? '');
  const sorted = items.map((item) => ({ item, key: sortKey(item) })).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const rest = after === null ? sorted : sorted.filter((e) => e.key > after);
  const limit = clampLimit(opts.limit);
  const page = rest.slice(0, limit);
  const last = page[page.length - 1];
  return { items: page.map((e) => e.item), nextCursor: rest.length > limit && last !== undefined ? encodeCursor([last.key]) : null };
}

/**
 * One page of a query that read `limit + 1` rows in page order: the first `limit` as items, and a
 * cursor after the last of them when the extra row shows there is more.
 */
export function pageOfRows<R, T>(rows: readonly R[], limit: number, toItem: (row: R) => T, cursorOf: (item: T, row: R) => string[]): { items: T[]; nextCursor: string | null } {
  const kept = rows.slice(0, limit);
  const items = kept.map(toItem);
  const lastRow = kept[kept.length - 1];
  const lastItem = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && lastRow !== undefined && lastItem !== undefined ? encodeCursor(cursorOf(lastItem, lastRow)) : null };
}

/** Normalizes any accepted date string to one sortable form (so string order = time order). */
/** `toISOString()`'s own form; a day past 28 still needs the calendar (Date.parse rolls 02-30 over). */
const CANONICAL_ISO = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;

export function iso(value: string): string {
  // the timestamps Troupe writes itself are already canonical: no Date round trip for them
  if (CANONICAL_ISO.test(value)) return value;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw new TroupeError('STORE_ERROR', `invalid timestamp: ${value}`);
  return d.toISOString();
}

export function isoOrNull(value: string | null | undefined): string | null {
  return value === null || value === undefined ? null : iso(value);
}

/** JSON text of an opaque payload; `undefined` is stored as null. Throws on cycles/BigInt. */
export function toJson(value: unknown): string {
  return JSON.stringify(value ?? null);
}

/**
 * A record's context as both adapters store it (JSON text, null when absent): what they write,
 * and what a guard compares against.
 */
export function contextText(context: unknown): string | null {
  return context === undefined || context === null ? null : toJson(context);
}

export function fromJson(text: string | null | undefined): unknown {
  return text === null || text === undefined ? null : JSON.parse(text);
}


/** The stored form of a log: every field present, timestamps normalized. */
export function normalizeLog(log: BlockLog): BlockLog {
  const stored: BlockLog = {
    blockId: log.blockId, blockName: log.blockName, blockType: log.blockType, status: log.status, order: log.order,
    startedAt: isoOrNull(log.startedAt), endedAt: isoOrNull(log.endedAt), durationMs: log.durationMs ?? null,
    input: log.input ?? null, output: log.output ?? null, error: log.error ?? null,
    errorHandled: log.errorHandled === true, attempts: log.attempts, iteration: log.iteration ?? null,
  };
  // assigned in this order (the stored key order), not spread: a spread of a fresh object costs
  // more than the assignment, for every log written
  if (Array.isArray(log.attemptLog)) stored.attemptLog = log.attemptLog;
  if (Array.isArray(log.activated)) stored.activated = log.activated;
  if (typeof log.carriedFrom === 'string') stored.carriedFrom = log.carriedFrom;
  return stored;
}

export function conflict(what: string, id: string): TroupeError {
  return new TroupeError('CONFLICT', `${what} ${id} already exists`, { details: { id } });
}

export function notFound(what: string, id: string): TroupeError {
  return new TroupeError('NOT_FOUND', `${what} ${id} not found`, { details: { id } });
}

export function storeError(err: unknown, doing: string): TroupeError {
  if (err instanceof TroupeError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new TroupeError('STORE_ERROR', `store failed while ${doing}: ${message}`, { cause: err, retryable: true });
}

/**
 * Checks the fields the schema requires before anything is written. Adapters still rely on
 * their transaction for atomicity; this only gives both the same error for a malformed item.
 */
export function checkBatch(executionId: string, batch: BoundaryBatch): void {
  if (batch.create !== undefined && batch.create.id !== executionId) {
    throw new TroupeError('STORE_ERROR', `the record to create has id ${batch.create.id}, not ${executionId}`, { details: { executionId } });
  }
  const drops = batch.dropLogs ?? [];
  for (let i = 0; i < drops.length; i++) {
    const d = drops[i] as LogIdentity;
    if (typeof d.blockId !== 'string' || d.blockId === '') {
      throw new TroupeError('STORE_ERROR', `log to drop ${i}: blockId is required`, { details: { index: i, field: 'blockId' } });
    }
  }
  const logs = batch.logs ?? [];
  for (let i = 0; i < logs.length; i++) checkLog(logs[i] as BlockLog, i);
  const events = batch.events ?? [];
  for (let i = 0; i < events.length; i++) checkEvent(executionId, events[i] as ExecutionEvent, i);
}

function checkLog(log: BlockLog, i: number): void {
  if (typeof log.blockId !== 'string' || log.blockId === '') throw badLog(i, 'blockId');
  if (typeof log.status !== 'string') throw badLog(i, 'status');
  if (typeof log.order !== 'number' || !Number.isFinite(log.order)) throw badLog(i, 'order');
}

function badLog(i: number, field: string): TroupeError {
  return new TroupeError('STORE_ERROR', `block log ${i}: ${field} is required`, { details: { index: i, field } });
}

function checkEvent(executionId: string, ev: ExecutionEvent, i: number): void {
  if (!Number.isInteger(ev.seq) || typeof ev.event !== 'string') {
    throw new TroupeError('STORE_ERROR', `event ${i}: integer seq and event name are required`, { details: { index: i } });
  }
  if (ev.executionId !== executionId) {
    throw new TroupeError('STORE_ERROR', `event ${i} belongs to execution ${ev.executionId}, not ${executionId}`, { details: { index: i } });
  }
}

const MEMORY_ROLES: readonly string[] = ['system', 'user', 'assistant'] satisfies MemoryRole[];

/**
 * A count for memories (`keep` of an append, `limit` of a list): floored, at least 0, and
 * Infinity (no bound) when the caller passes Infinity or, for a list limit, nothing.
 */
export function memoryCount(n: number | undefined, what: string): number {
  if (n === undefined || n === Infinity) return Infinity;
  if (typeof n !== 'number' || Number.isNaN(n)) throw new TroupeError('STORE_ERROR', `memory ${what} must be a number`, { details: { [what]: n } });
  return Math.max(0, Math.floor(n));
}

/** Checks the messages of a memory append before anything is written (same error on both adapters). */
export function checkMemoryMessages(messages: readonly { role: MemoryRole; content: string }[]): void {
  messages.forEach((m, i) => {
    if (!MEMORY_ROLES.includes(m.role)) throw new TroupeError('STORE_ERROR', `memory message ${i}: unknown role ${String(m.role)}`, { details: { index: i, field: 'role' } });
    if (typeof m.content !== 'string') throw new TroupeError('STORE_ERROR', `memory message ${i}: content must be a string`, { details: { index: i, field: 'content' } });
  });
}

/**
 * Wraps every method of a repository so driver errors leave the store as TroupeError
 * STORE_ERROR (TroupeErrors such as CONFLICT pass through unchanged). `classify` lets an
 * adapter name the driver errors it knows better (MongoDB's document size limit: not retryable).
 */
export function guarded<T extends object>(repo: T, name: string, classify?: (err: unknown, doing: string) => TroupeError | null): T {
  const proto = Object.getPrototypeOf(repo) as object;
  const out: Record<string, unknown> = {};
  for (const key of Object.getOwnPropertyNames(proto)) {
    const fn = (repo as Record<string, unknown>)[key];
    if (key === 'constructor' || typeof fn !== 'function') continue;
    const wrap = (err: unknown): TroupeError => classify?.(err, `${name}.${key}`) ?? storeError(err, `${name}.${key}`);
    const fail = (err: unknown): never => {
      throw wrap(err);
    };
    // not an async function: one would keep its arguments (an execution's whole write batch) alive
    // until the write is committed, though it no longer needs them once the call has begun
    out[key] = (...args: unknown[]): Promise<unknown> => {
      let result: unknown;
      try {
        result = (fn as (...a: unknown[]) => unknown).apply(repo, args);
      } catch (err) {
        return Promise.reject(wrap(err));
      }
      return Promise.resolve(result).then(undefined, fail);
    };
  }
  return out as T;
}
