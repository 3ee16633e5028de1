/**
 * Conversation memory on SQLite: one row per message in `memories`, and the conversation's last
 * seq in `memory_conversations`. A conversation's entries are always the consecutive seqs up to
 * that last one, so the newest `keep` are those with seq > last - keep.
 */
import { checkMemoryMessages, memoryCount } from '../shared.js';
import type { MemoryEntry, MemoryRepo, MemoryRole, Now } from '../types.js';
import type { Db } from './db.js';
import { MEMORY_COLUMNS as COLUMNS, toMemoryEntry as toEntry, type MemoryRow as Row } from '../rows/memories.js';

/** SQLite's LIMIT: -1 is no limit. */
function sqlLimit(n: number): number {
  return n === Infinity ? -1 : n;
}

export class SqliteMemories implements MemoryRepo {
  private readonly bumpLastSeq;
  private readonly insertEntry;
  private readonly trimEntries;
  private readonly selectNewest;
  private readonly selectWorkflow;
  private readonly removeConversation;
  private readonly removeWorkflowEntries;
  private readonly removeWorkflowCounters;

  constructor(private readonly db: Db, private readonly now: Now) {
    this.bumpLastSeq = db.prepare<[string, string, number], { last_seq: number }>(`INSERT INTO memory_conversations (workflow_id, conversation_id, last_seq)
      VALUES (?, ?, ?) ON CONFLICT (workflow_id, conversation_id) DO UPDATE SET last_seq = last_seq + excluded.last_seq RETURNING last_seq`);
    this.insertEntry = db.prepare(`INSERT INTO memories (workflow_id, ${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`);
    this.trimEntries = db.prepare('DELETE FROM memories WHERE workflow_id = ? AND conversation_id = ? AND seq <= ?');
    this.selectNewest = db.prepare<[string, string, number], Row>(`SELECT * FROM (
      SELECT ${COLUMNS} FROM memories WHERE workflow_id = ? AND conversation_id = ? ORDER BY seq DESC LIMIT ?
    ) ORDER BY seq`);
    this.selectWorkflow = db.prepare<[string, number], Row>(`SELECT ${COLUMNS} FROM memories WHERE workflow_id = ? ORDER BY conversation_id, seq LIMIT ?`);
    // the conversation's last seq stays, so its seqs go on increasing if it is written again
    this.removeConversation = db.prepare('DELETE FROM memories WHERE workflow_id = ? AND conversation_id = ?');
    this.removeWorkflowEntries = db.prepare('DELETE FROM memories WHERE workflow_id = ?');
    this.removeWorkflowCounters = db.prepare('DELETE FROM memory_conversations WHERE workflow_id = ?');
  }

  async append(workflowId: string, conversationId: string, messages: readonly { role: MemoryRole; content: string }[], keep: number): Promise<MemoryEntry[]> {
    checkMemoryMessages(messages);
    const kept = memoryCount(keep, 'keep');
    if (messages.length === 0) return [];
    const createdAt = this.now().toISOString();
    return this.db.transaction(() => {
      const last = (this.bumpLastSeq.get(workflowId, conversationId, messages.length) as { last_seq: number }).last_seq;
      const first = last - messages.length + 1;
      const entries = messages.map((m, i): MemoryEntry => ({ conversationId, seq: first + i, role: m.role, content: m.content, createdAt }));
      for (const e of entries) this.insertEntry.run(workflowId, conversationId, e.seq, e.role, e.content, createdAt);
      if (kept === Infinity) return entries;
      this.trimEntries.run(workflowId, conversationId, last - kept);
      return entries.filter((e) => e.seq > last - kept);
    }).immediate();
  }

  async list(workflowId: string, conversationId: string, limit?: number): Promise<MemoryEntry[]> {
    const n = memoryCount(limit, 'limit');
    if (n === 0) return [];
    return this.selectNewest.all(workflowId, conversationId, sqlLimit(n)).map(toEntry);
  }

  async listAll(workflowId: string, limit: number): Promise<MemoryEntry[]> {
    const n = memoryCount(limit, 'limit');
    if (n === 0) return [];
    return this.selectWorkflow.all(workflowId, sqlLimit(n)).map(toEntry);
  }

  async delete(workflowId: string, conversationId: string): Promise<number> {
    return this.removeConversation.run(workflowId, conversationId).changes;
  }

  async deleteWorkflow(workflowId: string): Promise<number> {
    return this.db.transaction(() => {
      const removed = this.removeWorkflowEntries.run(workflowId).changes;
      this.removeWorkflowCounters.run(workflowId);
      return removed;
    }).immediate();
  }
}
