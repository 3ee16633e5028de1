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
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.resume(); // drain the rest without keeping it
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(new TroupeError('INVALID_REQUEST', 'the request body could not be read', { cause: err }));
    };
    const onAborted = (): void => onError(new Error('request aborted'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
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
