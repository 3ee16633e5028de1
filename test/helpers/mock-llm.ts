/**
 * A scripted language-model server on loopback that speaks both protocols the providers use:
 * OpenAI chat completions (`POST /v1/chat/completions`) and Anthropic messages
 * (`POST /v1/messages`), whole or streamed (SSE) as the request asks. Each request takes the
 * next scripted reply; with none left it answers `echo: <last user text>`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MockReply {
  /** the answer's text; streamed in `pieces` when given (else word by word) */
  text?: string;
  pieces?: string[];
  toolCalls?: Array<{ name: string; arguments: unknown }>;
  /** answer this status with an error body instead */
  status?: number;
  headers?: Record<string, string>;
  errorMessage?: string;
  /** wait before answering, ms */
  delayMs?: number;
  /** wait between streamed pieces, ms */
  pieceDelayMs?: number;
  /** end the stream after the text, without the events that finish an answer */
  truncate?: boolean;
  /** answer whole JSON even when the call asked for a stream */
  ignoreStream?: boolean;
  /** stream every tool call whole at index 0, as Ollama does */
  sameIndex?: boolean;
  /** send the 200 headers, then drop the connection */
  resetAfterHeaders?: boolean;
  /** OpenAI streams: an error event after the text */
  streamError?: string;
}

export interface SeenRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, any>;
}

export interface MockLlm {
  /** base URL for OpenAI-compatible settings (…/v1) */
  openaiUrl: string;
  /** base URL for Anthropic settings */
  anthropicUrl: string;
  requests: SeenRequest[];
  /** TCP connections accepted so far */
  connections(): number;
  script(...replies: MockReply[]): void;
  /** forgets the replies not yet used and the requests seen */
  reset(): void;
  close(): Promise<void>;
}

export async function startMockLlm(): Promise<MockLlm> {
  const queue: MockReply[] = [];
  const requests: SeenRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, any>;
      requests.push({ path: req.url ?? '', headers: req.headers, body });
      const reply = queue.shift() ?? { text: `echo: ${lastUserText(body)}` };
      setTimeout(() => void answer(req.url ?? '', body, reply, res), reply.delayMs ?? 0);
    });
  });
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    openaiUrl: `http://127.0.0.1:${port}/v1`,
    anthropicUrl: `http://127.0.0.1:${port}`,
    requests,
    connections: () => connections,
    script: (...replies) => queue.push(...replies),
    reset: () => {
      queue.length = 0;
      requests.length = 0;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function lastUserText(body: Record<string, any>): string {
  const messages = (body['messages'] ?? []) as Array<{ role: string; content: unknown }>;
  const last = [...messages].reverse().find((m) => m.role === 'user');
  if (last === undefined) return '';
  if (typeof last.content === 'string') return last.content;
  return JSON.stringify(last.content);
}

async function answer(path: string, body: Record<string, any>, reply: MockReply, res: http.ServerResponse): Promise<void> {
  if (reply.status !== undefined && reply.status >= 400) {
    res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
    res.end(JSON.stringify({ error: { type: 'mock_error', message: reply.errorMessage ?? `mock status ${reply.status}` } }));
    return;
  }
  const anthropic = path.endsWith('/v1/messages');
  if (reply.resetAfterHeaders === true) {
    res.writeHead(200, { 'content-type': body['stream'] === true ? 'text/event-stream' : 'application/json' });
    res.flushHeaders();
    setTimeout(() => res.socket?.destroy(), 20);
    return;
  }
  const pieces = reply.pieces ?? (reply.text ?? '').split(/(?<= )/).filter((p) => p !== '');
  if (body['stream'] === true && reply.ignoreStream !== true) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const all = anthropic ? anthropicEvents(body, reply, pieces) : openaiEvents(body, reply, pieces);
    // text events only: message_start (Anthropic) and one event per piece
    const events = reply.truncate === true ? all.slice(0, (anthropic ? 2 : 0) + pieces.length) : all;
    for (const e of events) {
      res.write(e);
      if (reply.pieceDelayMs) await new Promise((r) => setTimeout(r, reply.pieceDelayMs));
    }
    res.end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(anthropic ? anthropicWhole(body, reply) : openaiWhole(body, reply)));
}

const usage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };

function openaiWhole(body: Record<string, any>, reply: MockReply): unknown {
  const calls = (reply.toolCalls ?? []).map((c, i) => ({ id: `call_${i}`, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } }));
  const message = { role: 'assistant', content: reply.text ?? null, ...(calls.length ? { tool_calls: calls } : {}) };
  return { id: 'chatcmpl-1', model: `${body['model']}-served`, choices: [{ index: 0, message, finish_reason: calls.length ? 'tool_calls' : 'stop' }], usage };
}

function openaiEvents(body: Record<string, any>, reply: MockReply, pieces: string[]): string[] {
  const model = `${body['model']}-served`;
  const out = pieces.map((p) => sse(undefined, { model, choices: [{ index: 0, delta: { content: p }, finish_reason: null }] }));
  if (reply.streamError !== undefined) return [...out, sse(undefined, { error: { message: reply.streamError } })];
  (reply.toolCalls ?? []).forEach((c, i) => {
    const args = JSON.stringify(c.arguments);
    if (reply.sameIndex === true) {
      out.push(sse(undefined, { model, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: `call_${i}`, type: 'function', function: { name: c.name, arguments: args } }] } }] }));
      return;
    }
    const half = Math.floor(args.length / 2);
    out.push(sse(undefined, { model, choices: [{ index: 0, delta: { tool_calls: [{ index: i, id: `call_${i}`, type: 'function', function: { name: c.name, arguments: args.slice(0, half) } }] } }] }));
    out.push(sse(undefined, { model, choices: [{ index: 0, delta: { tool_calls: [{ index: i, function: { arguments: args.slice(half) } }] } }] }));
  });
  out.push(sse(undefined, { model, choices: [{ index: 0, delta: {}, finish_reason: reply.toolCalls?.length ? 'tool_calls' : 'stop' }] }));
  out.push(sse(undefined, { model, choices: [], usage }));
  out.push('data: [DONE]\n\n');
  return out;
}

function anthropicWhole(body: Record<string, any>, reply: MockReply): unknown {
  const content: unknown[] = reply.text === undefined ? [] : [{ type: 'text', text: reply.text }];
  (reply.toolCalls ?? []).forEach((c, i) => content.push({ type: 'tool_use', id: `toolu_${i}`, name: c.name, input: c.arguments }));
  return { id: 'msg_1', type: 'message', role: 'assistant', model: `${body['model']}-served`, content, stop_reason: reply.toolCalls?.length ? 'tool_use' : 'end_turn', usage: { input_tokens: 11, output_tokens: 7 } };
}

function anthropicEvents(body: Record<string, any>, reply: MockReply, pieces: string[]): string[] {
  const out = [sse('message_start', { type: 'message_start', message: { model: `${body['model']}-served`, usage: { input_tokens: 11, output_tokens: 1 } } })];
  let index = 0;
  if (pieces.length > 0) {
    out.push(sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
    for (const p of pieces) out.push(sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: p } }));
    out.push(sse('content_block_stop', { type: 'content_block_stop', index }));
    index++;
  }
  for (const [i, c] of (reply.toolCalls ?? []).entries()) {
    const args = JSON.stringify(c.arguments);
    out.push(sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: `toolu_${i}`, name: c.name, input: {} } }));
    out.push(sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: args.slice(0, 3) } }));
    out.push(sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: args.slice(3) } }));
    out.push(sse('content_block_stop', { type: 'content_block_stop', index }));
    index++;
  }
  out.push(sse('message_delta', { type: 'message_delta', delta: { stop_reason: reply.toolCalls?.length ? 'tool_use' : 'end_turn' }, usage: { output_tokens: 7 } }));
  out.push(sse('message_stop', { type: 'message_stop' }));
  return out;
}

function sse(event: string | undefined, data: unknown): string {
  return `${event === undefined ? '' : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`;
}

/**
 * A scripted model server for one mocha suite: started before it, reset before each test,
 * closed after. The object answers for whichever server is running.
 */
export function useMockLlm(): MockLlm {
  let inner: MockLlm | undefined;
  const live = (): MockLlm => {
    if (inner === undefined) throw new Error('the mock model server is not running (use it inside tests)');
    return inner;
  };
  before(async () => {
    inner = await startMockLlm();
  });
  beforeEach(() => inner?.reset());
  after(() => inner?.close());
  return {
    get openaiUrl() {
      return live().openaiUrl;
    },
    get anthropicUrl() {
      return live().anthropicUrl;
    },
    get requests() {
      return live().requests;
    },
    connections: () => live().connections(),
    script: (...replies) => live().script(...replies),
    reset: () => live().reset(),
    close: () => live().close(),
  };
}
