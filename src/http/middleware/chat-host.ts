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
    const bare = /^\/chat\/([a-z0-9-]+)$/.exec(ctx.path);
    if ((ctx.method === 'GET' || ctx.method === 'HEAD') && bare !== null) {
      // the page's relative URLs need the slash
      ctx.status = 308;
      ctx.redirect(`/chat/${bare[1] ?? ''}/`);
      return;
    }
    if ((ctx.method === 'GET' || ctx.method === 'HEAD') && ctx.path === '/') {
      // a fully qualified name may end with a dot
      const host = ctx.hostname.toLowerCase().replace(/\.$/, '');
      if (host.endsWith(suffix)) {
        const sub = host.slice(0, -suffix.length);
        if (/^[a-z0-9-]+$/.test(sub)) ctx.path = `/chat/${sub}/`;
      }
    }
    await next();
  };
}
