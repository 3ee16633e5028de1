import type { IncomingMessage } from 'node:http';
import { TroupeError } from '../errors.js';
import { jsonTextNestsTooDeep } from '../model/json.js';

/** `{base}/{path}` whatever slashes the configured base URL ends with. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path}`;
}

/** Tool arguments arrive as JSON text; text that is not JSON is kept as it came. */
export function parseArguments(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    const parsed = JSON.parse(text) as unknown;
    return jsonTextNestsTooDeep(text, parsed) ? text : parsed;
  } catch {
    return text;
  }
}

/** How a 200 to a streamed call came back: SSE as asked, whole JSON (servers that ignore `stream`), or neither. */
export function streamKind(contentType: string | undefined): 'sse' | 'json' | 'other' {
  const type = (contentType ?? '').toLowerCase();
  if (type.includes('text/event-stream')) return 'sse';
  if (type.includes('json')) return 'json';
  return 'other';
}

/**
 * A streamed call's answer: SSE as asked; whole JSON from a server that ignored `stream`, read
 * whole and its text sent as one token; anything else is MODEL_ERROR.
 */
export async function readStreamedAnswer<T>(
  res: IncomingMessage,
  provider: string,
  sink: (text: string) => void,
  reads: { stream(): Promise<T>; whole(): Promise<T>; text(answer: T): string },
): Promise<T> {
  const kind = streamKind(res.headers['content-type']);
  if (kind === 'sse') return reads.stream();
  if (kind === 'other') {
    res.resume();
    throw new TroupeError('MODEL_ERROR', `${provider} answered a streamed call with ${res.headers['content-type'] ?? 'no content type'}`);
  }
  const answer = await reads.whole();
  const text = reads.text(answer);
  if (text !== '') sink(text);
  return answer;
}
