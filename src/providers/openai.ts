import type { IncomingMessage } from 'node:http';
import { TroupeError } from '../errors.js';
import { joinUrl, parseArguments, readStreamedAnswer } from './shared.js';
import { readSse } from './sse.js';
import { readLimited, type ProviderTransport } from './transport.js';
import type { ModelAnswer, ModelRequest, ModelTurn, ToolCall } from './types.js';

/**
 * OpenAI-compatible chat completions (`POST {baseUrl}/chat/completions`): OpenAI itself and the
 * servers that speak its protocol (Azure-style gateways, Ollama, vLLM, LiteLLM, ...).
 */
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';
const ANSWER_LIMIT = 16 * 1024 * 1024;
const PROVIDER = 'the OpenAI-compatible API';

export async function completeOpenAi(transport: ProviderTransport, request: ModelRequest & { baseUrl: string }, signal: AbortSignal, onToken?: (text: string) => void): Promise<ModelAnswer> {
  const headers: Record<string, string> = { accept: onToken ? 'text/event-stream' : 'application/json' };
  if (request.apiKey !== undefined && request.apiKey !== '') headers['authorization'] = `Bearer ${request.apiKey}`;
  const body = requestBody(request, onToken !== undefined);
  const options = { timeoutMs: request.timeoutMs, retries: request.retries, signal, provider: PROVIDER, onToken, apiKey: request.apiKey };
  const url = joinUrl(request.baseUrl, 'chat/completions');
  return transport.postJson(url, headers, body, options, (res, sink) =>
    sink === undefined
      ? readWhole(res, request)
      : readStreamedAnswer(res, PROVIDER, sink, { stream: () => readStream(res, request, sink), whole: () => readWhole(res, request), text: (a) => a.content }),
  );
}

function requestBody(request: ModelRequest, stream: boolean): Record<string, unknown> {
  const messages: unknown[] = request.system === undefined ? [] : [{ role: 'system', content: request.system }];
  for (const turn of request.messages) messages.push(toMessage(turn));
  const body: Record<string, unknown> = { model: request.model, messages };
  if (request.temperature !== undefined) body['temperature'] = request.temperature;
  if (request.maxTokens !== undefined) body['max_tokens'] = request.maxTokens;
  if (request.responseSchema !== undefined) {
    body['response_format'] = { type: 'json_schema', json_schema: { name: request.responseSchema.name, schema: request.responseSchema.schema } };
  }
  if (request.tools !== undefined && request.tools.length > 0) {
    body['tools'] = request.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description ?? '', parameters: t.parameters } }));
  }
  if (stream) {
    body['stream'] = true;
    body['stream_options'] = { include_usage: true };
  }
  return body;
}

function toMessage(turn: ModelTurn): unknown {
  if (turn.role === 'tool') return { role: 'tool', tool_call_id: turn.toolCallId, content: turn.content };
  if ('toolCalls' in turn) {
    const calls = turn.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments ?? {}) } }));
    return { role: 'assistant', content: turn.content === '' ? null : turn.content, tool_calls: calls };
  }
  return { role: turn.role, content: turn.content };
}

interface WireCall {
  id?: string;
  function?: { name?: string; arguments?: string };
}

interface WireAnswer {
  model?: string;
  choices?: Array<{ message?: { content?: string | null; tool_calls?: WireCall[] }; finish_reason?: string | null }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number };
}

async function readWhole(res: IncomingMessage, request: ModelRequest): Promise<ModelAnswer> {
  const text = await readLimited(res, ANSWER_LIMIT);
  let parsed: WireAnswer;
  try {
    parsed = JSON.parse(text) as WireAnswer;
  } catch {
    throw new TroupeError('MODEL_ERROR', 'the OpenAI-compatible API answered with something that is not JSON');
  }
  const choice = parsed.choices?.[0];
  if (choice === undefined) throw new TroupeError('MODEL_ERROR', 'the OpenAI-compatible API answered without a choice');
  const calls = (choice.message?.tool_calls ?? []).map((c, i) => toolCall(c, i));
  return {
    content: choice.message?.content ?? '',
    model: parsed.model ?? request.model,
    tokens: usage(parsed.usage),
    toolCalls: calls,
    finishReason: choice.finish_reason ?? 'stop',
  };
}

interface WireChunk {
  error?: { message?: string };
  model?: string;
  choices?: Array<{ delta?: { content?: string | null; tool_calls?: Array<WireCall & { index?: number }> }; finish_reason?: string | null }>;
  usage?: WireAnswer['usage'] | null;
}

async function readStream(res: IncomingMessage, request: ModelRequest, onToken: (text: string) => void): Promise<ModelAnswer> {
  let content = '';
  let model = request.model;
  let finishReason = 'stop';
  let tokens = usage(undefined);
  const calls = new Map<number, { id: string; name: string; args: string }>();
  let finished = false;
  for await (const event of readSse(res)) {
    // read on to the end of the response after [DONE]: leaving early would cost the connection
    if (finished && event.data === '[DONE]') continue;
    if (event.data === '[DONE]') {
      finished = true;
      continue;
    }
    const chunk = parseChunk(event.data);
    if (chunk.error !== undefined) throw new TroupeError('MODEL_ERROR', `the OpenAI-compatible API: ${chunk.error.message ?? 'stream error'}`);
    if (chunk.model !== undefined) model = chunk.model;
    if (chunk.usage) tokens = usage(chunk.usage);
    const choice = chunk.choices?.[0];
    if (choice === undefined) continue;
    if (choice.finish_reason) {
      finishReason = choice.finish_reason;
      finished = true;
    }
    const piece = choice.delta?.content;
    if (typeof piece === 'string' && piece !== '') {
      content += piece;
      onToken(piece);
    }
    for (const delta of choice.delta?.tool_calls ?? []) gatherCall(calls, delta);
  }
  // without a finish reason or [DONE] the answer was cut off, however normal the end looked
  if (!finished) throw new TroupeError('MODEL_ERROR', 'the OpenAI-compatible API stream ended before the answer was complete');
  const toolCalls = [...calls.values()].map((c, i) => toolCall({ id: c.id, function: { name: c.name, arguments: c.args } }, i));
  return { content, model, tokens, toolCalls, finishReason };
}

function parseChunk(data: string): WireChunk {
  try {
    return JSON.parse(data) as WireChunk;
  } catch {
    throw new TroupeError('MODEL_ERROR', 'the OpenAI-compatible API streamed an event that is not JSON');
  }
}

/** Tool calls stream in pieces keyed by index: the id and name first, the arguments in parts. */
function gatherCall(calls: Map<number, { id: string; name: string; args: string }>, delta: WireCall & { index?: number }): void {
  let index = delta.index ?? 0;
  let call = calls.get(index);
  // some servers (Ollama) send every call whole at index 0: a new id is a new call
  if (call !== undefined && delta.id && call.id !== '' && delta.id !== call.id) {
    index = Math.max(...calls.keys()) + 1;
    call = undefined;
  }
  call ??= { id: '', name: '', args: '' };
  if (delta.id) call.id = delta.id;
  if (delta.function?.name) call.name = delta.function.name;
  if (delta.function?.arguments) call.args += delta.function.arguments;
  calls.set(index, call);
}

function toolCall(wire: WireCall, index: number): ToolCall {
  return { id: wire.id || `call_${index}`, name: wire.function?.name ?? '', arguments: parseArguments(wire.function?.arguments ?? '') };
}

function usage(wire: WireAnswer['usage'] | undefined): ModelAnswer['tokens'] {
  const prompt = wire?.prompt_tokens ?? 0;
  const completion = wire?.completion_tokens ?? 0;
  return { prompt, completion, total: wire?.total_tokens ?? prompt + completion };
}
