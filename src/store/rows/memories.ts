/** The row of a conversation memory entry, shared by the SQL adapters (sqlite, postgres). */
import type { MemoryEntry, MemoryRole } from '../types.js';

export interface MemoryRow {
  conversation_id: string;
  seq: number;
  role: string;
  content: string;
  created_at: string;
}

export const MEMORY_COLUMNS = 'conversation_id, seq, role, content, created_at';

export function toMemoryEntry(row: MemoryRow): MemoryEntry {
  return { conversationId: row.conversation_id, seq: row.seq, role: row.role as MemoryRole, content: row.content, createdAt: row.created_at };
}
