/**
 * The one place where errors become HTTP answers: `{ error: { code, message, details } }`, with
 * `details` always present (null when there is nothing to add), as SPEC §4 writes the shape.
 * Only TroupeErrors with a client-facing code keep their message; anything else is logged and
 * answered 500 INTERNAL with a generic message (koa's `expose` rule).
 */
import type { Middleware, ParameterizedContext } from 'koa';
import type { Logger } from 'pino';
import { isTroupeError, UnprocessableRequest, type ErrorCode } from '../../errors.js';
import type { AppState } from '../types.js';

export const STATUS_BY_CODE: Partial<Record<ErrorCode, number>> = {
  INVALID_JSON: 400,
  INVALID_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_DEPLOYED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  NOT_WAITING: 409,
  REQUEST_TIMEOUT: 408,
  PAYLOAD_TOO_LARGE: 413,
  HEADERS_TOO_LARGE: 431,
  INVALID_WORKFLOW: 422,
  INVALID_INPUT: 422,
  RATE_LIMITED: 429,
  // a webhook whose secret is not set: the operator's to fix, and the name is no secret
  MISSING_SECRET: 500,
  NOT_IMPLEMENTED: 501,
  OVERLOADED: 503,
  NOT_READY: 503,
  // NATS is away: nothing was accepted, and it is back in a moment
  BUS_UNAVAILABLE: 503,
};

/** generic codes for errors raised by koa itself (http-errors with `expose`) */
const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'INVALID_REQUEST', 401: 'UNAUTHORIZED', 403: 'FORBIDDEN', 404: 'NOT_FOUND', 405: 'METHOD_NOT_ALLOWED', 413: 'PAYLOAD_TOO_LARGE',
};

export interface ErrorBody {
  error: { code: string; message: string; details: unknown };
}

export function errorBody(code: string, message: string, details: unknown = null): ErrorBody {
  return { error: { code, message, details: details ?? null } };
}

interface Answer {
  status: number;
  body: ErrorBody;
  retryAfterSec?: number;
}

function retryAfter(details: unknown): number | undefined {
  if (details === null || typeof details !== 'object') return undefined;
  const value = (details as Record<string, unknown>)['retryAfterSec'];
  return typeof value === 'number' && value > 0 ? Math.ceil(value) : undefined;
}

export function toAnswer(err: unknown): Answer {
  if (isTroupeError(err)) {
    const status = err instanceof UnprocessableRequest ? 422 : STATUS_BY_CODE[err.code];
    if (status !== undefined) {
      const seconds = retryAfter(err.details);
      return { status, body: errorBody(err.code, err.message, err.details), ...(seconds === undefined ? {} : { retryAfterSec: seconds }) };
    }
    if (err.code === 'STORE_ERROR') {
      return { status: 503, body: errorBody('STORE_ERROR', 'the store is unavailable; retry later'), retryAfterSec: 1 };
    }
  }
  const e = err as { status?: unknown; expose?: unknown; message?: unknown } | null;
  if (e !== null && typeof e === 'object' && e.expose === true && typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    const code = CODE_BY_STATUS[e.status] ?? 'INVALID_REQUEST';
    return { status: e.status, body: errorBody(code, typeof e.message === 'string' ? e.message : 'bad request') };
  }
  return { status: 500, body: errorBody('INTERNAL', 'internal error') };
}

export function errorHandler(logger: Logger): Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.body == null) unmatched(ctx);
    } catch (err) {
      const answer = toAnswer(err);
      logFailure(logger, ctx.state, answer, err);
      if (answer.retryAfterSec !== undefined) ctx.set('Retry-After', String(answer.retryAfterSec));
      ctx.status = answer.status;
      ctx.body = answer.body;
    }
  };
}

/**
 * The router's answers without a body. It answers a method it does not know at all (TRACE,
 * PROPFIND) with 501 and an `Allow` of the path's routes, even when no route has the path: that
 * is a path that does not exist (404, as for known methods), not a method it refuses.
 */
function unmatched(ctx: ParameterizedContext<AppState>): void {
  const unknownMethod = ctx.status === 501;
  if (ctx.status === 405 || (unknownMethod && ctx.response.get('Allow') !== '')) {
    ctx.status = 405;
    ctx.body = errorBody('METHOD_NOT_ALLOWED', `${ctx.method} is not allowed on ${ctx.path}`);
  } else if (ctx.status === 404 || unknownMethod) {
    ctx.remove('Allow');
    ctx.status = 404;
    ctx.body = errorBody('NOT_FOUND', `no route for ${ctx.method} ${ctx.path}`);
  }
}

/**
 * Faults are logged with their error; back-pressure (503 OVERLOADED, NOT_READY) is the service
 * working as designed under load, so it is a warning without a stack, and client errors are only
 * in the access log.
 */
function logFailure(logger: Logger, state: AppState, answer: Answer, err: unknown): void {
  if (answer.status < 500) return;
  const where = { requestId: state.requestId, route: state.route };
  const code = answer.body.error.code;
  if (code === 'OVERLOADED' || code === 'NOT_READY' || code === 'BUS_UNAVAILABLE') logger.warn({ ...where, code }, 'request refused');
  else logger.error({ ...where, err }, 'request failed');
}
