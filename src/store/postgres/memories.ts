/**
 * Conversation memory: one row per message in `memories`, and each conversation's last seq in
 * `memory_conversations`. An append bumps that last seq with an upsert, which locks the
 * counter's row, so concurrent appends to one conversation run one after the other.
 */
import { checkMemoryMessages, memoryCount } from '../shared.js';
import type { MemoryEntry, MemoryRepo, MemoryRole, Now } from '../types.js';
import type { Pg } from './db.js';
import { MEMORY_COLUMNS as COLUMNS, toMemoryEntry as toEntry, type MemoryRow as Row } from '../rows/memories.js';

/** PostgreSQL's LIMIT: NULL is no limit. */
function sqlLimit(n: number): number | null {
  return n === Infinity ? null : n;
}

export class PgMemories implements MemoryRepo {
  constructor(private readonly db: Pg, private readonly now: Now) {}

  async append(workflowId: string, conversationId: string, messages: readonly { role: MemoryRole; content: string }[], keep: number): Promise<MemoryEntry[]> {
    checkMemoryMessages(messages);
    const kept = memoryCount(keep, 'keep');
    if (messages.length === 0) return [];
    const createdAt = this.now().toISOString();
    return this.db.tx(async (q) => {
      const bumped = await q.query<{ last_seq: number }>(`INSERT INTO memory_conversations AS m (workflow_id, conversation_id, last_seq) VALUES ($1, $2, $3)
        ON CONFLICT (workflow_id, conversation_id) DO UPDATE SET last_seq = m.last_seq + excluded.last_seq RETURNING last_seq`,
      [workflowId, conversationId, messages.length]);
      const last = (bumped.rows[0] as { last_seq: number }).last_seq;
      const first = last - messages.length + 1;
      const entries = messages.map((m, i): MemoryEntry => ({ conversationId, seq: first + i, role: m.role, content: m.content, createdAt }));
      await q.query(`INSERT INTO memories (workflow_id, ${COLUMNS})
        SELECT $1, $2, $3::int8 + o - 1, r, c, $4 FROM unnest($5::text[], $6::text[]) WITH ORDINALITY AS t(r, c, o)`,
      [workflowId, conversationId, first, createdAt, entries.map((e) => e.role), entries.map((e) => e.content)]);
      if (kept === Infinity) return entries;
      await q.query('DELETE FROM memories WHERE workflow_id = $1 AND conversation_id = $2 AND seq <= $3', [workflowId, conversationId, last - kept]);
      return entries.filter((e) => e.seq > last - kept);
    });
  }

  async list(workflowId: string, conversationId: string, limit?: number): Promise<MemoryEntry[]> {
    const n = memoryCount(limit, 'limit');
    if (n === 0) return [];
    const { rows } = await this.db.query<Row>(`SELECT * FROM (
      SELECT ${COLUMNS} FROM memories WHERE workflow_id = $1 AND conversation_id = $2 ORDER BY seq DESC LIMIT $3
    ) newest ORDER BY seq`, [workflowId, conversationId, sqlLimit(n)]);
    return rows.map(toEntry);
  }

  async listAll(workflowId: string, limit: number): Promise<MemoryEntry[]> {
    const n = memoryCount(limit, 'limit');
    if (n === 0) return [];
    const { rows } = await this.db.query<Row>(`SELECT ${COLUMNS} FROM memories WHERE workflow_id = $1 ORDER BY conversation_id, seq LIMIT $2`, [workflowId, sqlLimit(n)]);
    return rows.map(toEntry);
  }

  async delete(workflowId: string, conversationId: string): Promise<number> {
    // the conversation's last seq stays, so its seqs go on increasing if it is written again
    return (await this.db.query('DELETE FROM memories WHERE workflow_id = $1 AND conversation_id = $2', [workflowId, conversationId])).rowCount ?? 0;
  }

  async deleteWorkflow(workflowId: string): Promise<number> {
    return this.db.tx(async (q) => {
      const removed = (await q.query('DELETE FROM memories WHERE workflow_id = $1', [workflowId])).rowCount ?? 0;
      await q.query('DELETE FROM memory_conversations WHERE workflow_id = $1', [workflowId]);
      return removed;
    });
  }
}
