/**
 * `{sub}.{TROUPE_CHAT_HOST}` (SPEC §4.4): its `/` is the chat page of `sub`, served by the same
 * route as `/chat/{sub}/`. Everything else on that host (the page's /api/chat calls) is routed as
 * usual.
 */
import type { Middleware } from 'koa';
import type { AppState } from '../types.js';

export function chatHostRewrite(chatHost: string): Middleware<AppState> {
  const suffix = `.${chatHost.toLowerCase()}`;
  return async (ctx, next) => {
    if ((ctx.method === 'GET' || ctx.method === 'HEAD') && ctx.path === '/') {
      const host = ctx.hostname.toLowerCase();
      if (host.endsWith(suffix)) {
        const sub = host.slice(0, -suffix.length);
        if (/^[a-z0-9-]+$/.test(sub)) ctx.path = `/chat/${sub}/`;
      }
    }
    await next();
  };
}
