/**
 * Follows an execution's events (`GET /api/executions/{id}/events`, SPEC §4.2). Read with fetch,
 * not EventSource: EventSource cannot send the console header the session requires.
 */
import { CONSOLE_HEADERS, enc } from './api';

export interface ExecEvent {
  event: string;
  data: unknown;
}

function parse(chunk: string): ExecEvent | undefined {
  let event = 'message';
  const data: string[] = [];
  for (const line of chunk.split('\n')) {
    if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
  }
  if (data.length === 0) return undefined;
  try {
    return { event, data: JSON.parse(data.join('\n')) as unknown };
  } catch {
    return { event, data: data.join('\n') };
  }
}

/** Calls onEvent for each event until `done`, the stream ends, or signal aborts. */
export async function followEvents(id: string, onEvent: (e: ExecEvent) => void, signal: AbortSignal): Promise<void> {
  const res = await fetch(`/api/executions/${enc(id)}/events`, { headers: CONSOLE_HEADERS, credentials: 'same-origin', signal });
  if (!res.ok || res.body === null) throw new Error(`the live events could not be opened (HTTP ${res.status})`);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let cut = buffer.indexOf('\n\n');
    while (cut >= 0) {
      const e = parse(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
      if (e !== undefined) onEvent(e);
      cut = buffer.indexOf('\n\n');
    }
  }
}
