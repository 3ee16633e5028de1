import { z } from 'zod';
import { TroupeError } from '../errors.js';
import { MEMORY_KEEP, conversationIdSchema, conversationOf, memoryOf } from './agent-memory.js';
import { promptText } from './model-settings.js';
import { EVERY_ISSUE, isPlainObject, unsetWhenNull } from './schemas.js';
import type { BlockType, MemoryItem } from './types.js';

/**
 * The memory block (SPEC §1.1): conversation memory kept in the store per workflow and
 * conversation id. `add` appends a message, `get` reads a conversation (newest `limit`, oldest
 * first), `getAll` every conversation of the workflow, `delete` forgets one. Outputs `memories`
 * and `id` (the conversation id; null for getAll). A conversation keeps its newest 1,000 messages.
 */
const OPERATIONS = ['add', 'get', 'getAll', 'delete'] as const;
const GET_ALL_LIMIT = 10_000;

const memoryObject = z
  .object({
    operation: z.enum(OPERATIONS),
    conversationId: unsetWhenNull(conversationIdSchema.optional()),
    role: unsetWhenNull(z.enum(['user', 'assistant', 'system']).default('user')),
    content: z.unknown().optional(),
    limit: unsetWhenNull(z.coerce.number({ error: 'must be a number' }).int().min(1).max(GET_ALL_LIMIT).optional()),
  })
  .superRefine(needsContent, EVERY_ISSUE);

/** Runs beside a wrong type elsewhere (a bad `limit` hid it): reads the config as it came. */
function needsContent(config: { operation?: unknown; content?: unknown }, ctx: z.RefinementCtx): void {
  // a literal "" or null would fail every run (nothing to remember); a reference is judged then
  if (config.operation === 'add' && (config.content === undefined || config.content === null || config.content === '')) {
    ctx.addIssue({ code: 'custom', path: ['content'], message: 'add needs the content to remember' });
  }
}

/** `id` is accepted for `conversationId` (the output names it so). */
function acceptIdSpelling(config: unknown): unknown {
  if (!isPlainObject(config) || config['id'] === undefined || config['conversationId'] !== undefined) return config;
  const { id, ...rest } = config;
  return { ...rest, conversationId: id };
}

export const memoryConfigSchema = z.preprocess(acceptIdSpelling, memoryObject);

export type MemoryConfig = z.output<typeof memoryObject>;

const shown = (m: MemoryItem): Record<string, unknown> => ({ conversationId: m.conversationId, role: m.role, content: m.content, createdAt: m.createdAt });

export const memoryBlock: BlockType<MemoryConfig> = {
  type: 'memory',
  configSchema: memoryConfigSchema as unknown as z.ZodType<MemoryConfig>,
  literalFields: ['operation'],
  handles: () => ['success', 'error'],
  async run(ctx) {
    const config = ctx.config;
    const memory = memoryOf(ctx);
    if (config.operation === 'getAll') {
      const all = await memory.listAll(ctx.workflowId, config.limit ?? GET_ALL_LIMIT);
      return { output: { memories: all.map(shown), id: null }, handles: ['success'] };
    }
    const id = conversationOf(ctx, config.conversationId);
    if (config.operation === 'delete') {
      const deleted = await memory.delete(ctx.workflowId, id);
      return { output: { memories: [], id, deleted }, handles: ['success'] };
    }
    if (config.operation === 'add') {
      const content = promptText(config.content);
      if (content === '') throw new TroupeError('INVALID_CONFIG', 'add needs non-empty content to remember');
      await memory.append(ctx.workflowId, id, [{ role: config.role, content }], MEMORY_KEEP);
    }
    const memories = await memory.list(ctx.workflowId, id, config.limit);
    return { output: { memories: memories.map(shown), id }, handles: ['success'] };
  },
};
