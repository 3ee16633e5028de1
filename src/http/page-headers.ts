import type { Ctx } from './types.js';

/**
 * Headers of a page the service renders for a visitor (chat, approval link): never cached, and
 * never framed by another site — frame-ancestors only works as a header (a page's meta CSP
 * cannot say it), so clickjacking is refused here.
 */
export function pageHeaders(ctx: Ctx): void {
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Content-Security-Policy', "frame-ancestors 'none'");
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
}
