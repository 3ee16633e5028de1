import { z } from 'zod';
import { TroupeError, toTroupeError } from '../errors.js';
import type { ModelAnswer, ModelPort, ModelRequest, ToolCall, ToolSpec } from '../providers/types.js';
import { EVERY_ISSUE, idsOf, isPlainObject } from './schemas.js';
import type { BlockRunContext } from './types.js';

/**
 * The agent's tools: a JSON-Schema-described function the model may call. A tool with `code`
 * runs in the function sandbox (its arguments as `args`) and its result goes back to the model,
 * round after round, until the model answers without a call. A call of a tool without code ends
 * the conversation: the calls are the block's `toolCalls` output, for the workflow to act on.
 */
export const toolSchema = z.object({
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a tool name is 1-64 letters, digits, _ or -'),
  description: z.string().optional(),
  // both providers refuse a tool whose parameters are not an object schema; authors often leave
  // out the "type": "object" around their properties, as the response format allows
  parameters: z
    .record(z.string(), z.unknown())
    .default({ properties: {} })
    .refine((p) => p['type'] === undefined || p['type'] === 'object', { message: 'tool parameters describe an object ("type": "object")', path: ['type'] })
    .transform((p) => ({ type: 'object', ...p })),
  code: z.string().optional(),
});

export type AgentTool = z.infer<typeof toolSchema>;

export const toolsSchema = z
  .array(toolSchema)
  .default([])
  .superRefine(uniqueNames, EVERY_ISSUE);

/** Runs when a tool has a field of the wrong type too (it hid duplicates): reads names as they came. */
function uniqueNames(tools: unknown, ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  idsOf(tools, 'name').forEach((name, i) => {
    if (name === undefined) return;
    if (seen.has(name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate tool name "${name}"` });
    seen.add(name);
  });
}

/** One call the model made, as the block's `toolCalls` output shows it. */
export interface ToolCallRecord extends ToolCall {
  result?: unknown;
  error?: { code: string; message: string };
}

export interface Conversation {
  answer: ModelAnswer;
  /** the text of every round, joined by a blank line: what was streamed */
  text: string;
  tokens: ModelAnswer['tokens'];
  toolCalls: ToolCallRecord[];
}

export async function converse(
  models: ModelPort,
  request: ModelRequest,
  ctx: BlockRunContext<unknown>,
  tools: readonly AgentTool[],
  maxRounds: number,
  onToken?: (text: string) => void,
): Promise<Conversation> {
  const tokens = { prompt: 0, completion: 0, total: 0 };
  const toolCalls: ToolCallRecord[] = [];
  const texts: string[] = [];
  if (tools.length > 0) request.tools = tools.map(toSpec);
  for (let round = 1; ; round++) {
    const answer = await models.complete(request, ctx.signal, onToken === undefined ? undefined : separated(texts, onToken));
    if (answer.content !== '') texts.push(answer.content);
    tokens.prompt += answer.tokens.prompt;
    tokens.completion += answer.tokens.completion;
    tokens.total += answer.tokens.total;
    const calls = answer.toolCalls;
    // a declared tool without code is for the workflow: the conversation ends with the calls
    const forWorkflow = calls.some((c) => tools.some((t) => t.name === c.name && t.code === undefined));
    if (calls.length === 0 || forWorkflow) {
      toolCalls.push(...calls);
      return { answer, text: texts.join(SEPARATOR), tokens, toolCalls };
    }
    if (round > maxRounds) {
      throw new TroupeError('MAX_ITERATIONS', `the model was still calling tools after ${maxRounds} rounds (maxToolRounds)`, { details: { toolCalls } });
    }
    request.messages.push({ role: 'assistant', content: answer.content, toolCalls: calls });
    for (const call of calls) {
      const record = await runTool(ctx, tools, call);
      toolCalls.push(record);
      const content = record.error === undefined ? JSON.stringify(record.result ?? null) : JSON.stringify({ error: record.error.message });
      request.messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content });
    }
  }
}

const SEPARATOR = '\n\n';

/** The stream of a later round starts with the blank line `text` has between rounds. */
function separated(texts: readonly string[], onToken: (text: string) => void): (text: string) => void {
  let first = true;
  return (text) => {
    if (first && texts.length > 0) onToken(SEPARATOR);
    first = false;
    onToken(text);
  };
}

function toSpec(tool: AgentTool): ToolSpec {
  const spec: ToolSpec = { name: tool.name, parameters: tool.parameters };
  if (tool.description !== undefined) spec.description = tool.description;
  return spec;
}

/** A tool's failure is told to the model (it may recover); a cancellation ends the block. */
async function runTool(ctx: BlockRunContext<unknown>, tools: readonly AgentTool[], call: ToolCall): Promise<ToolCallRecord> {
  const code = tools.find((t) => t.name === call.name)?.code;
  // told to the model, which may correct itself in the next round
  if (code === undefined) return { ...call, error: { code: 'UNKNOWN_TOOL', message: `there is no tool named "${call.name}"` } };
  if (!isPlainObject(call.arguments)) return { ...call, error: { code: 'INVALID_ARGUMENTS', message: 'the arguments are not a JSON object' } };
  const { source, bindings } = ctx.bindCode(code);
  try {
    const { result } = await ctx.services.sandbox.runFunction(source, { ...bindings, args: call.arguments }, {
      timeoutMs: ctx.services.functionTimeoutMs,
      memoryMb: ctx.services.functionMemoryMb,
      signal: ctx.signal,
      caller: { workflowId: ctx.workflowId },
    });
    return { ...call, result };
  } catch (err) {
    const e = toTroupeError(err);
    if (e.code === 'CANCELLED' || ctx.signal.aborted) throw e;
    return { ...call, error: { code: e.code, message: e.message } };
  }
}
