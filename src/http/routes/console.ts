/**
 * The console's sign-in (SPEC §8): the admin token is posted once and answered with an HttpOnly,
 * SameSite=Strict session cookie scoped to /api; the token itself never rides in a URL nor
 * stays in the page. Sign-out ends the session on the server, not only in the browser.
 */
import { z } from 'zod';
import { TroupeError } from '../../errors.js';
import { CONSOLE_COOKIE, CONSOLE_COOKIE_PATH, CONSOLE_HEADER, type ConsoleSessions } from '../console-sessions.js';
import { fromConsolePage, hasAdminToken, unauthorized } from '../middleware/auth.js';
import { checkBody, errorResponse, type RouteSpec } from '../route-spec.js';
import type { Ctx } from '../types.js';

const signInSchema = z.object({ token: z.string().min(1).max(4096) }).strict();
const sessionSchema = z.object({ expiresAt: z.string().describe('ISO date-time: the session ends then, or at sign-out') });

function refuseForeign(ctx: Ctx): void {
  if (!fromConsolePage(ctx)) {
    throw new TroupeError('FORBIDDEN', `console requests must come from the console's own page (header ${CONSOLE_HEADER}: 1, same origin)`);
  }
}

function setCookie(ctx: Ctx, value: string, expires: Date): void {
  ctx.cookies.set(CONSOLE_COOKIE, value, {
    httpOnly: true, sameSite: 'strict', path: CONSOLE_COOKIE_PATH, secure: ctx.secure, overwrite: true, expires,
  });
}

async function signIn(ctx: Ctx, sessions: ConsoleSessions, adminToken: string): Promise<void> {
  refuseForeign(ctx);
  const body = checkBody((await ctx.state.readJson()) ?? {}, signInSchema);
  if (!hasAdminToken(`Bearer ${body.token}`, adminToken)) {
    throw unauthorized('that is not the admin token: use TROUPE_ADMIN_TOKEN, or the token printed at first start (admin-token in the data dir)');
  }
  sessions.end(ctx.cookies.get(CONSOLE_COOKIE));
  const session = sessions.create();
  setCookie(ctx, session.id, new Date(session.expiresAt));
  ctx.status = 201;
  ctx.body = { expiresAt: new Date(session.expiresAt).toISOString() };
}

const foreign403 = errorResponse("not from the console's own page: no X-Troupe-Console header, or another origin (FORBIDDEN)");

export function consoleRoutes(sessions: ConsoleSessions, adminToken: string): RouteSpec[] {
  return [
    {
      method: 'post', path: '/api/console/session', operationId: 'consoleSignIn', tag: 'console', auth: 'none',
      summary: 'Console sign-in with the admin token: sets an HttpOnly, SameSite=Strict session cookie (Path=/api)',
      requestHeaders: [{ name: CONSOLE_HEADER, description: 'must be `1` (only a same-origin script can send it)' }],
      body: { schema: signInSchema },
      responses: {
        201: { description: 'signed in', schema: sessionSchema, headers: ['Set-Cookie'] },
        400: errorResponse('no token (INVALID_REQUEST) or invalid JSON (INVALID_JSON)'),
        401: errorResponse('not the admin token (UNAUTHORIZED)'),
        403: foreign403,
      },
      handler: (ctx) => signIn(ctx, sessions, adminToken),
    },
    {
      method: 'get', path: '/api/console/session', operationId: 'consoleSession', tag: 'console', auth: 'none',
      summary: "The console session this browser holds, if any",
      requestHeaders: [{ name: CONSOLE_HEADER, description: 'must be `1`' }],
      responses: { 200: { description: 'signed in', schema: sessionSchema }, 401: errorResponse('no live session (UNAUTHORIZED)'), 403: foreign403 },
      handler: (ctx) => {
        refuseForeign(ctx);
        const expiresAt = sessions.expiry(ctx.cookies.get(CONSOLE_COOKIE));
        if (expiresAt === undefined) throw unauthorized('not signed in, or the session has ended: sign in with the admin token');
        ctx.body = { expiresAt: new Date(expiresAt).toISOString() };
      },
    },
    {
      method: 'delete', path: '/api/console/session', operationId: 'consoleSignOut', tag: 'console', auth: 'none',
      summary: 'Sign out: the session ends on the server and its cookie is dropped',
      requestHeaders: [{ name: CONSOLE_HEADER, description: 'must be `1`' }],
      responses: { 204: { description: 'signed out (also when there was no session)' }, 403: foreign403 },
      handler: (ctx) => {
        refuseForeign(ctx);
        sessions.end(ctx.cookies.get(CONSOLE_COOKIE));
        setCookie(ctx, '', new Date(0));
        ctx.status = 204;
      },
    },
  ];
}
