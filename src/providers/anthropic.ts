import type { IncomingMessage } from 'node:http';
import { TroupeError } from '../errors.js';
import { joinUrl, parseArguments, readStreamedAnswer } from './shared.js';
import { readSse } from './sse.js';
import { readLimited, type ProviderTransport } from './transport.js';
import type { ModelAnswer, ModelRequest, ModelTurn, ToolCall } from './types.js';

/**
 * Anthropic's messages API (`POST {baseUrl}/v1/messages`). It has no JSON-schema response
 * format, so structured output is asked for as a tool whose input is the answer: the model must
 * call it (or, when the block has tools of its own, call one of them or it), and the tool's
 * input is the answer's content.
 */
export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
const API_VERSION = '2023-06-01';
const DEFAULT_MAX_TOKENS = 4096;
const ANSWER_LIMIT = 16 * 1024 * 1024;
const PROVIDER = 'the Anthropic API';

export async function completeAnthropic(transport: ProviderTransport, request: ModelRequest & { baseUrl: string }, signal: AbortSignal, onToken?: (text: string) => void): Promise<ModelAnswer> {
  const headers: Record<string, string> = { 'anthropic-version': API_VERSION, accept: onToken ? 'text/event-stream' : 'application/json' };
  if (request.apiKey !== undefined && request.apiKey !== '') headers['x-api-key'] = request.apiKey;
  const options = { timeoutMs: request.timeoutMs, retries: request.retries, signal, provider: PROVIDER, onToken, apiKey: request.apiKey };
  const url = joinUrl(request.baseUrl.replace(/\/v1\/?$/, ''), 'v1/messages');
  const raw = await transport.postJson(url, headers, requestBody(request, onToken !== undefined), options, (res, sink) =>
    sink === undefined
      ? readWhole(res, request)
      : readStreamedAnswer(res, PROVIDER, sink, { stream: () => readStream(res, request, sink), whole: () => readWhole(res, request), text: (a) => a.text }),
  );
  return fromRaw(raw, request);
}

function requestBody(request: ModelRequest, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { model: request.model, max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS, messages: toMessages(request.messages) };
  if (request.system !== undefined) body['system'] = request.system;
  if (request.temperature !== undefined) body['temperature'] = request.temperature;
  const tools = (request.tools ?? []).map((t) => ({ name: t.name, description: t.description ?? '', input_schema: t.parameters }));
  const schema = request.responseSchema;
  if (schema !== undefined) {
    tools.push({ name: schema.name, description: 'Give your final answer by calling this tool; its input is the answer.', input_schema: schema.schema });
    body['tool_choice'] = tools.length === 1 ? { type: 'tool', name: schema.name } : { type: 'any' };
  }
  if (tools.length > 0) body['tools'] = tools;
  if (stream) body['stream'] = true;
  return body;
}

/** Tool results go back as user turns; consecutive ones share one message, as the API requires. */
function toMessages(turns: readonly ModelTurn[]): unknown[] {
  const out: Array<{ role: string; content: unknown }> = [];
  for (const [i, turn] of turns.entries()) {
    // the API refuses an empty text turn anywhere but at the end
    if (turn.role !== 'tool' && !('toolCalls' in turn) && turn.content === '' && i < turns.length - 1) continue;
    if (turn.role === 'tool') {
      const result = { type: 'tool_result', tool_use_id: turn.toolCallId, content: turn.content };
      const prev = out[out.length - 1];
      if (prev?.role === 'user' && Array.isArray(prev.content)) (prev.content as unknown[]).push(result);
      else out.push({ role: 'user', content: [result] });
    } else if ('toolCalls' in turn) {
      const parts: unknown[] = turn.content === '' ? [] : [{ type: 'text', text: turn.content }];
      for (const c of turn.toolCalls) parts.push({ type: 'tool_use', id: c.id, name: c.name, input: c.arguments ?? {} });
      out.push({ role: 'assistant', content: parts });
    } else {
      out.push({ role: turn.role, content: turn.content });
    }
  }
  return out;
}

/** What a call gathered, before the structured-output tool is told apart from real tool calls. */
interface RawAnswer {
  text: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  stopReason: string;
  calls: ToolCall[];
}

function fromRaw(raw: RawAnswer, request: ModelRequest): ModelAnswer {
  const schemaName = request.responseSchema?.name;
  const answer = schemaName === undefined ? undefined : raw.calls.find((c) => c.name === schemaName);
  const toolCalls = raw.calls.filter((c) => c !== answer);
  return {
    content: answer === undefined ? raw.text : JSON.stringify(answer.arguments),
    model: raw.model,
    tokens: { prompt: raw.inputTokens, completion: raw.outputTokens, total: raw.inputTokens + raw.outputTokens },
    toolCalls,
    finishReason: answer === undefined ? raw.stopReason : 'stop',
  };
}

interface WireBlock {
  type?: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
}

async function readWhole(res: IncomingMessage, request: ModelRequest): Promise<RawAnswer> {
  let parsed: { model?: string; content?: WireBlock[]; stop_reason?: string | null; usage?: { input_tokens?: number; output_tokens?: number } };
  try {
    parsed = JSON.parse(await readLimited(res, ANSWER_LIMIT)) as typeof parsed;
  } catch (err) {
    if (err instanceof TroupeError) throw err;
    throw new TroupeError('MODEL_ERROR', 'the Anthropic API answered with something that is not JSON');
  }
  const blocks = parsed.content ?? [];
  return {
    text: blocks.filter((b) => b.type === 'text').map((b) => b.text ?? '').join(''),
    model: parsed.model ?? request.model,
    inputTokens: parsed.usage?.input_tokens ?? 0,
    outputTokens: parsed.usage?.output_tokens ?? 0,
    stopReason: parsed.stop_reason ?? 'end_turn',
    calls: blocks.filter((b) => b.type === 'tool_use').map((b, i) => ({ id: b.id ?? `toolu_${i}`, name: b.name ?? '', arguments: b.input ?? {} })),
  };
}

interface StreamEvent {
  type?: string;
  index?: number;
  message?: { model?: string; usage?: { input_tokens?: number; output_tokens?: number } };
  content_block?: WireBlock;
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
  usage?: { output_tokens?: number };
  error?: { message?: string };
}

async function readStream(res: IncomingMessage, request: ModelRequest, onToken: (text: string) => void): Promise<RawAnswer> {
  const raw: RawAnswer = { text: '', model: request.model, inputTokens: 0, outputTokens: 0, stopReason: 'end_turn', calls: [] };
  const tools = new Map<number, { id: string; name: string; json: string }>();
  let finished = false;
  for await (const sse of readSse(res)) {
    const event = parseEvent(sse.data);
    if (event.type === 'error') throw new TroupeError('MODEL_ERROR', `the Anthropic API: ${event.error?.message ?? 'stream error'}`);
    // read on to the end of the response: leaving early would cost the connection
    if (event.type === 'message_stop') finished = true;
    if (!finished) applyEvent(raw, tools, event, onToken);
  }
  // without message_stop the answer was cut off, however normal the end looked
  if (!finished) throw new TroupeError('MODEL_ERROR', 'the Anthropic API stream ended before the answer was complete');
  raw.calls = [...tools.entries()].sort(([a], [b]) => a - b).map(([, t], i) => ({ id: t.id || `toolu_${i}`, name: t.name, arguments: parseArguments(t.json) }));
  return raw;
}

function applyEvent(raw: RawAnswer, tools: Map<number, { id: string; name: string; json: string }>, event: StreamEvent, onToken: (text: string) => void): void {
  const index = event.index ?? 0;
  if (event.type === 'message_start') {
    raw.model = event.message?.model ?? raw.model;
    raw.inputTokens = event.message?.usage?.input_tokens ?? 0;
    raw.outputTokens = event.message?.usage?.output_tokens ?? 0;
  } else if (event.type === 'content_block_start' && event.content_block?.type === 'tool_use') {
    tools.set(index, { id: event.content_block.id ?? '', name: event.content_block.name ?? '', json: '' });
  } else if (event.type === 'content_block_delta' && event.delta?.type === 'text_delta' && event.delta.text) {
    raw.text += event.delta.text;
    onToken(event.delta.text);
  } else if (event.type === 'content_block_delta' && event.delta?.type === 'input_json_delta') {
    const tool = tools.get(index);
    if (tool !== undefined) tool.json += event.delta.partial_json ?? '';
  } else if (event.type === 'message_delta') {
    if (event.delta?.stop_reason) raw.stopReason = event.delta.stop_reason;
    if (event.usage?.output_tokens !== undefined) raw.outputTokens = event.usage.output_tokens;
  }
}

function parseEvent(data: string): StreamEvent {
  try {
    return JSON.parse(data) as StreamEvent;
  } catch {
    throw new TroupeError('MODEL_ERROR', 'the Anthropic API streamed an event that is not JSON');
  }
}
