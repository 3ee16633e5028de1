import type { Middleware, ParameterizedContext } from 'koa';
import type { Logger } from 'pino';
import type { AppMetrics } from '../metrics.js';
import type { AppState } from '../types.js';

/**
 * One structured log line and one latency sample per request. Only method, route, path, status
 * and timing are logged: never headers, query strings or bodies, where keys and secrets travel.
 */
function logRequest(logger: Logger, ctx: ParameterizedContext<AppState>, route: string, seconds: number): void {
  const executionId = ctx.response.get('X-Execution-Id');
  logger.info(
    {
      requestId: ctx.state.requestId, method: ctx.method, route, path: ctx.path, status: ctx.status,
      durationMs: Math.round(seconds * 1e6) / 1e3, ...(executionId ? { executionId } : {}),
    },
    'request',
  );
}

export function observe(logger: Logger, metrics: AppMetrics): Middleware<AppState> {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = ctx.state.route ?? 'unmatched';
      metrics.httpDuration.observe({ method: ctx.method, route, status: String(ctx.status) }, seconds);
      // the line is built only when it is written (a silent or warn-level logger skips it)
      if (logger.isLevelEnabled('info')) logRequest(logger, ctx, route, seconds);
    }
  };
}
