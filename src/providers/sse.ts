import type { IncomingMessage } from 'node:http';
import { TroupeError } from '../errors.js';

/** One server-sent event as the providers stream them. */
export interface SseEvent {
  event: string;
  data: string;
}

/** a single event larger than this is not a token stream */
const EVENT_LIMIT = 4 * 1024 * 1024;

/** Reads `text/event-stream` into events (`event:` defaults to "message"; data lines joined by \n). */
export async function* readSse(res: IncomingMessage): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res as AsyncIterable<Buffer>) {
    buffer += decoder.decode(chunk, { stream: true });
    if (buffer.length > EVENT_LIMIT) throw new TroupeError('RESPONSE_TOO_LARGE', 'an event of the model stream is too large');
    let end: number;
    while ((end = eventEnd(buffer)) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^(\r?\n){1,2}/, '');
      const event = parseEvent(block);
      if (event !== null) yield event;
    }
  }
  const rest = parseEvent(buffer + decoder.decode());
  if (rest !== null) yield rest;
}

/** index where the first complete event ends (before its blank line), or -1 */
function eventEnd(buffer: string): number {
  const lf = buffer.indexOf('\n\n');
  const crlf = buffer.indexOf('\r\n\r\n');
  if (lf < 0) return crlf;
  if (crlf < 0) return lf;
  return Math.min(lf, crlf);
}

function parseEvent(block: string): SseEvent | null {
  let event = 'message';
  const data: string[] = [];
  for (const raw of block.split(/\r?\n/)) {
    if (raw === '' || raw.startsWith(':')) continue;
    const colon = raw.indexOf(':');
    const field = colon < 0 ? raw : raw.slice(0, colon);
    const value = colon < 0 ? '' : raw.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  return data.length === 0 ? null : { event, data: data.join('\n') };
}
