/** Server-sent events over a Koa response: open, send, close; aborts when the client goes away. */
import { PassThrough } from 'node:stream';
import type { Ctx } from './types.js';

export interface SseStream {
  send(event: string, data: unknown, id?: number): void;
  /** a comment line: readers skip it; the first write also sends the headers */
  comment(text: string): void;
  close(): void;
  /** aborted when the client disconnects (or after close) */
  signal: AbortSignal;
}

const KEEPALIVE_MS = 15_000;

export function openSse(ctx: Ctx): SseStream {
  const stream = new PassThrough();
  const gone = new AbortController();
  ctx.status = 200;
  ctx.type = 'text/event-stream';
  ctx.set('Cache-Control', 'no-cache, no-transform');
  ctx.set('X-Accel-Buffering', 'no');
  ctx.req.socket.setNoDelay(true);
  ctx.body = stream;
  let closed = false;
  // comments keep proxies from closing an idle stream
  const keepalive = setInterval(() => stream.write(': keepalive\n\n'), KEEPALIVE_MS);
  keepalive.unref();
  const close = (): void => {
    if (closed) return;
    closed = true;
    clearInterval(keepalive);
    stream.end();
    gone.abort();
  };
  ctx.res.once('close', close);
  return {
    send(event, data, id) {
      if (closed) return;
      const idLine = id === undefined ? '' : `id: ${id}\n`;
      stream.write(`${idLine}event: ${event}\ndata: ${JSON.stringify(data ?? null)}\n\n`);
    },
    comment(text) {
      if (!closed) stream.write(`: ${text.replace(/[\r\n]/g, ' ')}\n\n`);
    },
    close,
    signal: gone.signal,
  };
}
