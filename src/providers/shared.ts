import { nestsDeeperThan } from '../model/json.js';

/** `{base}/{path}` whatever slashes the configured base URL ends with. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path}`;
}

/** Tool arguments arrive as JSON text; text that is not JSON is kept as it came. */
export function parseArguments(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    const parsed = JSON.parse(text) as unknown;
    return nestsDeeperThan(parsed) ? text : parsed;
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
