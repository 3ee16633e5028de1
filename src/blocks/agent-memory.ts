import { z } from 'zod';
import { TroupeError } from '../errors.js';
import type { BlockRunContext, MemoryPort } from './types.js';

/**
 * Conversation memory shared by the memory block and the agent's `memory` option: messages kept
 * per workflow and conversation id in the store, so a conversation survives restarts. Without
 * an explicit `conversationId` the execution's own is used (a chat message's conversation).
 */
export const MEMORY_KEEP = 1000;

export const conversationIdSchema = z.string().trim().min(1, 'a conversationId is required').max(256, 'a conversationId is at most 256 characters');

export function memoryOf(ctx: BlockRunContext<unknown>): MemoryPort {
  const memory = ctx.services.memory;
  if (memory === undefined) throw new TroupeError('INTERNAL', `${ctx.block.type} blocks need the conversation memory store, and this runtime has none`);
  return memory;
}

export function conversationOf(ctx: BlockRunContext<unknown>, configured: string | undefined): string {
  const id = configured ?? ctx.conversationId;
  if (id === undefined || id.trim() === '') {
    throw new TroupeError('INVALID_CONFIG', 'no conversationId: set one in the block config (e.g. "<start.conversationId>"); only a chat message brings its own');
  }
  const parsed = conversationIdSchema.safeParse(id);
  if (!parsed.success) throw new TroupeError('INVALID_CONFIG', `conversationId: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}
