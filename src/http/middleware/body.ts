/**
 * Lazy body reading: routes read the body when their checks allow it (execute authenticates
 * before it parses, SPEC §4.2), always under the size limit. No Content-Type negotiation:
 * bodies are JSON.
 */
import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import { TroupeError } from '../../errors.js';
import { shallowBody } from '../../service/webhook-body.js';
import type { AppState } from '../types.js';

function tooLarge(limit: number): TroupeError {
  return new TroupeError('PAYLOAD_TOO_LARGE', `request body exceeds ${limit} bytes`, { details: { limit } });
}

export function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(tooLarge(limit));
  return new Promise<Buffer>((resolve, reject) => new BodyCollector(req, limit, resolve, reject).listen());
}

/**
 * Collects one request body under the limit. Its listeners are kept as fields so that cleanup
 * removes exactly the functions it added.
 */
class BodyCollector {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private readonly onData = this.data.bind(this);
  private readonly onEnd = this.end.bind(this);
  private readonly onError = this.error.bind(this);
  private readonly onAborted = this.aborted.bind(this);

  constructor(
    private readonly req: IncomingMessage,
    private readonly limit: number,
    private readonly resolve: (body: Buffer) => void,
    private readonly reject: (err: unknown) => void,
  ) {}

  listen(): void {
    this.req.on('data', this.onData);
    this.req.on('end', this.onEnd);
    this.req.on('error', this.onError);
    this.req.on('aborted', this.onAborted);
  }

  private cleanup(): void {
    this.req.off('data', this.onData);
    this.req.off('end', this.onEnd);
    this.req.off('error', this.onError);
    this.req.off('aborted', this.onAborted);
  }

  private data(chunk: Buffer): void {
    this.size += chunk.length;
    if (this.size > this.limit) {
      this.cleanup();
      this.req.resume(); // drain the rest without keeping it
      this.reject(tooLarge(this.limit));
      return;
    }
    this.chunks.push(chunk);
  }

  private end(): void {
    this.cleanup();
    this.resolve(Buffer.concat(this.chunks, this.size));
  }

  private error(err: Error): void {
    this.cleanup();
    this.reject(new TroupeError('INVALID_REQUEST', 'the request body could not be read', { cause: err }));
  }

  private aborted(): void {
    this.error(new Error('request aborted'));
  }
}

export function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  const text = raw.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    throw new TroupeError('INVALID_JSON', 'the request body is not valid JSON');
  }
  return shallowBody(text, value);
}

export function bodyReader(limit: number): Middleware<AppState> {
  return async (ctx, next) => {
    let pending: Promise<Buffer> | undefined;
    ctx.state.readBody = () => {
      pending ??= readRawBody(ctx.req, limit).then((raw) => {
        ctx.state.rawBody = raw;
        return raw;
      });
      return pending;
    };
    ctx.state.readJson = async () => parseJson(await ctx.state.readBody());
    await next();
  };
}

/**
 * For routes that take no body: a body sent anyway is still held to the limit (SPEC §4: bodies
 * over it get 413 on every route), so it is read (and dropped) once the route's authentication
 * has passed. A request that announces no body costs nothing.
 */
export async function refuseOversizedBody(ctx: { req: IncomingMessage; state: Pick<AppState, 'readBody'> }): Promise<void> {
  const { headers } = ctx.req;
  if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) return;
  await ctx.state.readBody();
}
