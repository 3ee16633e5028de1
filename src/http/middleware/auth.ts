import type { Middleware } from 'koa';
import { TroupeError } from '../../errors.js';
import { safeEqual } from '../../service/keys.js';
import { CONSOLE_COOKIE, CONSOLE_HEADER, type ConsoleSessions } from '../console-sessions.js';
import type { AppState, Ctx } from '../types.js';

/** true when the request carries `Authorization: Bearer <admin token>` (constant-time compare). */
export function hasAdminToken(authorization: string, adminToken: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return match?.[1] !== undefined && safeEqual(match[1], adminToken);
}

/** The admin token, or a console session (marked by consoleSession below): both are the admin. */
export function isAdmin(ctx: Ctx, adminToken: string): boolean {
  return ctx.state.consoleSession === true || hasAdminToken(ctx.get('Authorization'), adminToken);
}

export function unauthorized(message: string): TroupeError {
  return new TroupeError('UNAUTHORIZED', message);
}

export function adminAuth(adminToken: string): Middleware<AppState> {
  return async (ctx, next) => {
    if (!isAdmin(ctx as Ctx, adminToken)) {
      ctx.set('WWW-Authenticate', 'Bearer');
      throw unauthorized('a valid admin token is required (Authorization: Bearer <token>)');
    }
    await next();
  };
}

/**
 * A request from the console's own pages: the browser sent the header only a script of this
 * origin can add (another origin's would need a CORS preflight, never answered), and neither
 * Sec-Fetch-Site nor Origin says another site. With SameSite=Strict on the cookie, a page
 * elsewhere can neither send the session nor forge the request (CSRF).
 */
export function fromConsolePage(ctx: Ctx): boolean {
  if (ctx.get(CONSOLE_HEADER) !== '1') return false;
  const site = ctx.get('Sec-Fetch-Site');
  if (site !== '' && site !== 'same-origin') return false;
  const origin = ctx.get('Origin');
  return origin === '' || origin === `${ctx.protocol}://${ctx.host}`;
}

/** Marks a request carrying a live console session from the console's pages (`ctx.state.consoleSession`). */
export function consoleSession(sessions: ConsoleSessions): Middleware<AppState> {
  return async (ctx, next) => {
    const id = ctx.cookies.get(CONSOLE_COOKIE);
    if (id !== undefined && fromConsolePage(ctx as Ctx) && sessions.expiry(id) !== undefined) ctx.state.consoleSession = true;
    await next();
  };
}
