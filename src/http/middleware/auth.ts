import type { Middleware } from 'koa';
import { TroupeError } from '../../errors.js';
import { safeEqual } from '../../service/keys.js';
import type { AppState } from '../types.js';

/** true when the request carries `Authorization: Bearer <admin token>` (constant-time compare). */
export function hasAdminToken(authorization: string, adminToken: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return match?.[1] !== undefined && safeEqual(match[1], adminToken);
}

export function unauthorized(message: string): TroupeError {
  return new TroupeError('UNAUTHORIZED', message);
}

export function adminAuth(adminToken: string): Middleware<AppState> {
  return async (ctx, next) => {
    if (!hasAdminToken(ctx.get('Authorization'), adminToken)) {
      ctx.set('WWW-Authenticate', 'Bearer');
      throw unauthorized('a valid admin token is required (Authorization: Bearer <token>)');
    }
    await next();
  };
}
