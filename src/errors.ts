/**
 * The one errors module. Every failure that crosses a boundary (block → execution → HTTP/CLI)
 * is a TroupeError with a stable `code`; HTTP maps codes to statuses in one place
 * (src/http/middleware/errors.ts) and never exposes messages of non-Troupe errors.
 */
export type ErrorCode =
  | 'INVALID_WORKFLOW'
  | 'INVALID_INPUT'
  | 'INVALID_JSON'
  | 'INVALID_REQUEST'
  | 'INVALID_CONFIG'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'NOT_DEPLOYED'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  /** request headers over Node's limit (431), refused before the app sees the request */
  | 'HEADERS_TOO_LARGE'
  /** a request that did not arrive within Node's request timeout (408) */
  | 'REQUEST_TIMEOUT'
  | 'RATE_LIMITED'
  | 'OVERLOADED'
  | 'MISSING_SECRET'
  | 'FUNCTION_ERROR'
  | 'FUNCTION_TIMEOUT'
  | 'FUNCTION_MEMORY'
  | 'EXPRESSION_ERROR'
  | 'NO_ROUTE'
  | 'MODEL_ERROR'
  | 'INVALID_MODEL_OUTPUT'
  | 'BLOCK_TIMEOUT'
  | 'EXECUTION_TIMEOUT'
  | 'CANCELLED'
  | 'INTERRUPTED'
  | 'HTTP_ERROR'
  | 'HTTP_TIMEOUT'
  | 'CONNECTION_FAILED'
  | 'BLOCKED_ADDRESS'
  | 'RESPONSE_TOO_LARGE'
  | 'TOO_MANY_REDIRECTS'
  | 'MAX_ITERATIONS'
  /** execution limits (src/model/limits.ts, docs/config.md): they fail the execution, never the process */
  | 'BRANCH_LIMIT'
  | 'ITERATION_LIMIT'
  | 'RESULTS_LIMIT'
  | 'MEMORY_LIMIT'
  /** restart recovery gave up on an execution whose resumption kept ending the process (docs/operations.md) */
  | 'RESUME_LIMIT'
  | 'BUS_TIMEOUT'
  | 'NO_RESPONDERS'
  | 'BUS_CLOSED'
  | 'BUS_UNAVAILABLE'
  /** a bus message over what the bus can carry (docs/operations.md: large messages on NATS) */
  | 'BUS_MESSAGE_TOO_LARGE'
  /** the pieces of a split bus message stopped coming: the subscription dropped it */
  | 'BUS_MESSAGE_INCOMPLETE'
  | 'INVALID_SUBJECT'
  | 'STORE_ERROR'
  | 'INTERNAL'
  | 'NOT_IMPLEMENTED'
  | 'METHOD_NOT_ALLOWED'
  | 'NOT_READY'
  /** an approval decision for a block that is not waiting for one (SPEC §4.2) */
  | 'NOT_WAITING'
  /** an approval's timeoutMs passed and the block has no `timeout` connection (SPEC §2.1) */
  | 'APPROVAL_TIMEOUT'
  /** a workflow block's child execution failed or was cancelled (its error in details) */
  | 'CHILD_FAILED'
  /** workflow blocks nested deeper than TROUPE_MAX_CALL_DEPTH */
  | 'CALL_DEPTH_EXCEEDED';

export interface ErrorOptions {
  details?: unknown;
  cause?: unknown;
  retryable?: boolean;
}

export class TroupeError extends Error {
  readonly code: ErrorCode;
  readonly details: unknown;
  readonly retryable: boolean;

  constructor(code: ErrorCode, message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TroupeError';
    this.code = code;
    this.details = options.details;
    this.retryable = options.retryable ?? false;
  }

  toJSON(): { code: ErrorCode; message: string; details?: unknown } {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }
}

export interface ValidationIssue {
  /** JSON Pointer into the submitted document, e.g. "/connections/3/to". */
  path: string;
  message: string;
}

export class ValidationError extends TroupeError {
  readonly issues: ValidationIssue[];
  constructor(code: 'INVALID_WORKFLOW' | 'INVALID_INPUT' | 'INVALID_REQUEST' | 'INVALID_CONFIG', message: string, issues: ValidationIssue[]) {
    super(code, message, { details: { issues } });
    this.name = 'ValidationError';
    this.issues = issues;
  }
}

/**
 * A request that is well formed but asks for what cannot be done (422 INVALID_REQUEST, SPEC
 * §4.2): a rerun from a block that did not run, or with an input it would not read.
 */
export class UnprocessableRequest extends ValidationError {
  constructor(message: string, issues: ValidationIssue[]) {
    super('INVALID_REQUEST', message, issues);
    this.name = 'UnprocessableRequest';
  }
}

export function isTroupeError(err: unknown): err is TroupeError {
  return err instanceof TroupeError;
}

/** Wrap anything thrown into a TroupeError without leaking internals of unknown errors. */
export function toTroupeError(err: unknown, fallback: ErrorCode = 'INTERNAL'): TroupeError {
  if (err instanceof TroupeError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new TroupeError(fallback, message, { cause: err });
}

/** The `{ code, message }` shape kept in outputs and records. */
export interface ErrorInfo {
  code: string;
  message: string;
  [extra: string]: unknown;
}

export function errorInfo(err: unknown): ErrorInfo {
  const e = toTroupeError(err);
  const extra = e.details !== null && typeof e.details === 'object' && !Array.isArray(e.details) ? e.details : {};
  return { ...(extra as Record<string, unknown>), code: e.code, message: e.message };
}
