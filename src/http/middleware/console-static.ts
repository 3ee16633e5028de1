/**
 * Serves the built console (SPEC §8) from the folder `make setup` builds: `GET /` leads to
 * `/console/`, files under it are served as built, and any other path under it is the
 * single-page app's own route (index.html). A strict Content-Security-Policy keeps every
 * script, style and request on this origin: nothing from a CDN, nothing injected.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import type { Middleware } from 'koa';
import { TroupeError } from '../../errors.js';
import type { AppState } from '../types.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

const CSP = [
  "default-src 'self'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:",
  "connect-src 'self'", "worker-src 'self' blob:", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'",
].join('; ');

async function fileIn(root: string, relative: string): Promise<string | undefined> {
  const path = normalize(join(root, relative));
  if (path !== root && !path.startsWith(root + sep)) return undefined;
  try {
    return (await stat(path)).isFile() ? path : undefined;
  } catch {
    return undefined;
  }
}

export function consoleStatic(root: string): Middleware<AppState> {
  const base = normalize(root);
  return async (ctx, next) => {
    const get = ctx.method === 'GET' || ctx.method === 'HEAD';
    if (get && (ctx.path === '/' || ctx.path === '/console')) {
      ctx.redirect('/console/');
      return;
    }
    if (!get || !ctx.path.startsWith('/console/')) return next();
    let relative: string;
    try {
      relative = decodeURIComponent(ctx.path.slice('/console/'.length));
    } catch {
      throw new TroupeError('NOT_FOUND', `no console file ${ctx.path}`);
    }
    const file = (await fileIn(base, relative)) ?? (extname(relative) === '' ? await fileIn(base, 'index.html') : undefined);
    if (file === undefined) {
      const built = await fileIn(base, 'index.html');
      throw new TroupeError('NOT_FOUND', built ? `no console file ${ctx.path}` : 'the console is not built: run `make setup` (or `make console`) and restart');
    }
    ctx.set('Content-Security-Policy', CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    // hashed bundles never change; the page itself is always asked again
    ctx.set('Cache-Control', file.includes(`${sep}assets${sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
    ctx.type = TYPES[extname(file)] ?? 'application/octet-stream';
    ctx.body = createReadStream(file);
  };
}
