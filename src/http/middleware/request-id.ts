import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { AppState } from '../types.js';

const ACCEPTED = /^[A-Za-z0-9._:-]{1,128}$/;

/** X-Request-Id: kept from the client when it looks like an id, generated otherwise. */
export function requestId(): Middleware<AppState> {
  return async (ctx, next) => {
    const given = ctx.get('X-Request-Id');
    ctx.state.requestId = ACCEPTED.test(given) ? given : randomUUID();
    ctx.set('X-Request-Id', ctx.state.requestId);
    await next();
  };
}
