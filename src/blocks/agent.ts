import { z } from 'zod';
import { TroupeError } from '../errors.js';
import { isWholePlaceholder, parseReference } from '../model/ref-parse.js';
import type { ModelRequest, ModelTurn } from '../providers/types.js';
import { MEMORY_KEEP, conversationIdSchema, conversationOf, memoryOf } from './agent-memory.js';
import { converse, toolsSchema } from './agent-tools.js';
import { baseRequest, modelSettingsShape, modelsOf, promptText } from './model-settings.js';
import { EVERY_ISSUE, idsOf, unsetWhenNull } from './schemas.js';
import { responseFormatName, responseFormatSchema, structuredFields } from './structured-output.js';
import type { BlockRunContext, BlockType } from './types.js';

/**
 * The agent block (SPEC §1.1): one conversation with a language model. Its text streams out as
 * `chunk` events while it arrives (unless the answer is structured: partial JSON is not text to
 * show); tools may be called in rounds; with `memory` the conversation is kept in the store.
 */
const messageSchema = z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.unknown() });

/**
 * Turns given as one reference (`"messages": "<mem.memories>"`, docs/agents.md) are a list only
 * once the run reads it. When the workflow is saved the reference stands for the turns it will
 * read, so the block counts as prompted; a reference is never left for judging at run time by
 * leaving the field out, which would make the agent look unprompted. When the block runs, the
 * config is resolved first and the list is checked as written.
 */
const turnsSchema = z.preprocess(
  (value) => (typeof value === 'string' && isWholePlaceholder(value) && parseReference(value) !== null ? [{ role: 'user', content: value }] : value),
  z.array(messageSchema),
);

/**
 * `true` is the settings' defaults and `false` (or null) no memory. Not a union of the two
 * forms: a union reports a bad field as the whole `memory` being invalid, so
 * `"window": "<start.window>"`, a value known only at run time, could not be told apart from a
 * wrong one when saving.
 */
const memorySchema = z.preprocess(
  (value) => (value === true ? {} : value === false || value === null ? undefined : value),
  z
    .object(
      {
        conversationId: unsetWhenNull(conversationIdSchema.optional()),
        window: unsetWhenNull(z.coerce.number({ error: 'must be a number' }).int().min(1).max(MEMORY_KEEP).default(20)),
      },
      'memory is true, false or { conversationId?, window? }',
    )
    .optional(),
);

const agentObject = z.object({
  ...modelSettingsShape,
  systemPrompt: z.unknown().optional(),
  userPrompt: z.unknown().optional(),
  messages: turnsSchema.default([]),
  responseFormat: responseFormatSchema.optional(),
  tools: toolsSchema,
  maxToolRounds: unsetWhenNull(z.coerce.number({ error: 'must be a number' }).int().min(1).max(50).default(8)),
  memory: memorySchema.optional(),
  stream: unsetWhenNull(z.boolean().default(true)),
});

/**
 * `prompt`, `system` and `memories` are the other spellings of `userPrompt`, `systemPrompt` and
 * `messages` (kept as fields of their own, so a reference in either is judged where it stands).
 * The checks across fields come before the spellings are merged: a transform does not run once
 * a field failed its type, and these must (EVERY_ISSUE).
 */
export const agentConfigSchema = agentObject
  .extend({ prompt: z.unknown().optional(), system: z.unknown().optional(), memories: turnsSchema.optional() })
  .superRefine(checkAcrossFields, EVERY_ISSUE)
  .transform(({ prompt, system, memories, ...config }) => ({
    ...config,
    userPrompt: config.userPrompt ?? prompt,
    systemPrompt: config.systemPrompt ?? system,
    messages: config.messages.length > 0 ? config.messages : (memories ?? []),
  }));

/** Given, in any form: an empty list is none, a value of the wrong type has its own issue. */
const givenMessages = (value: unknown): boolean => value !== undefined && !(Array.isArray(value) && value.length === 0);

/** Reads the config as it came, since it runs when another field has the wrong type too. */
function checkAcrossFields(config: Record<string, unknown>, ctx: z.RefinementCtx): void {
  // as the spellings merge: a userPrompt that reads null gives way to prompt
  const prompted = (config['userPrompt'] ?? config['prompt']) !== undefined;
  if (!prompted && !givenMessages(config['messages']) && !givenMessages(config['memories'])) {
    ctx.addIssue({ code: 'custom', path: ['userPrompt'], message: 'an agent needs a userPrompt (or messages)' });
  }
  // Anthropic is asked for structured output through a tool of that name
  const formatName = responseFormatName(config['responseFormat']);
  idsOf(config['tools'], 'name').forEach((name, i) => {
    if (formatName !== undefined && name === formatName) {
      ctx.addIssue({ code: 'custom', path: ['tools', i, 'name'], message: `a tool may not have the response format's name ("${name}")` });
    }
  });
}

export type AgentConfig = z.output<typeof agentObject>;

export const agentBlock: BlockType<AgentConfig> = {
  type: 'agent',
  configSchema: agentConfigSchema as unknown as z.ZodType<AgentConfig>,
  codeFields: ['tools'],
  handles: () => ['success', 'error'],
  async run(ctx) {
    const config = ctx.config;
    const remembered = await recall(ctx, config);
    const prompt = config.userPrompt === undefined ? undefined : promptText(config.userPrompt);
    const request = buildRequest(config, remembered?.turns ?? [], remembered?.system, prompt);
    if (request.messages.length === 0) throw new TroupeError('INVALID_CONFIG', 'the agent has nothing to send: its prompt and messages are empty');
    const streamed = config.stream && config.responseFormat === undefined;
    const talk = await converse(modelsOf(ctx), request, ctx, config.tools, config.maxToolRounds, streamed ? (t) => ctx.emitChunk(t) : undefined);
    // a structured answer is the last round's JSON; text is every round's, as it was streamed
    const content = config.responseFormat === undefined ? talk.text : talk.answer.content;
    const structured = config.responseFormat === undefined ? {} : structuredFields(content, config.responseFormat.schema);
    if (remembered !== undefined) {
      // empty turns are not kept: some providers refuse them inside a conversation
      const exchange = [{ role: 'user' as const, content: prompt ?? '' }, { role: 'assistant' as const, content }].filter((m) => m.content !== '');
      await memoryOf(ctx).append(ctx.workflowId, remembered.conversationId, exchange, MEMORY_KEEP);
    }
    const output = { ...structured, content, model: talk.answer.model, tokens: talk.tokens, toolCalls: talk.toolCalls };
    return { output, handles: ['success'] };
  },
};

interface Recalled {
  conversationId: string;
  turns: ModelTurn[];
  system: string | undefined;
}

async function recall(ctx: BlockRunContext<AgentConfig>, config: AgentConfig): Promise<Recalled | undefined> {
  const settings = config.memory;
  if (settings === undefined) return undefined;
  const conversationId = conversationOf(ctx, settings.conversationId);
  const entries = await memoryOf(ctx).list(ctx.workflowId, conversationId, settings.window);
  // a window may open on an answer; a conversation sent to a model starts with the user
  while (entries[0] !== undefined && entries[0].role === 'assistant') entries.shift();
  const system = entries.filter((e) => e.role === 'system').map((e) => e.content);
  const turns: ModelTurn[] = entries.filter((e) => e.role !== 'system').map((e) => ({ role: e.role as 'user' | 'assistant', content: e.content }));
  return { conversationId, turns, system: system.length === 0 ? undefined : system.join('\n\n') };
}

function buildRequest(config: AgentConfig, remembered: ModelTurn[], rememberedSystem: string | undefined, prompt: string | undefined): ModelRequest {
  const given = config.messages.map((m) => ({ role: m.role, content: promptText(m.content) }));
  const messages: ModelTurn[] = [...remembered];
  for (const m of given) if (m.role !== 'system') messages.push({ role: m.role, content: m.content });
  if (prompt !== undefined && prompt !== '') messages.push({ role: 'user', content: prompt });
  const request: ModelRequest = { ...baseRequest(config), messages };
  // system text: the block's, then what memory and the given messages hold
  const systemParts = [config.systemPrompt === undefined ? '' : promptText(config.systemPrompt), rememberedSystem ?? '', ...given.filter((m) => m.role === 'system').map((m) => m.content)].filter((s) => s !== '');
  if (systemParts.length > 0) request.system = systemParts.join('\n\n');
  if (config.responseFormat !== undefined) request.responseSchema = config.responseFormat;
  return request;
}
