/**
 * Conversation memory on MongoDB: one document per remembered message in `memories`, and each
 * conversation's last seq in `memory_counters`. An append first takes a range of seqs from the
 * counter (one atomic `$inc`, so concurrent appends never share a seq or interleave), then
 * inserts its messages and deletes the entries beyond the newest `keep` (see trim). One document per
 * message, not one per conversation: a long conversation never meets the 16 MB document limit.
 */
import type { Collection, Db } from 'mongodb';
import { TroupeError } from '../../errors.js';
import { checkMemoryMessages, memoryCount } from '../shared.js';
import type { MemoryEntry, MemoryRepo, MemoryRole, Now } from '../types.js';
import { COLLECTIONS, isDuplicateKey } from './collections.js';
import type { MemoryCounterDoc, MemoryDoc } from './collections.js';

function counterKey(workflowId: string, conversationId: string): string {
  return JSON.stringify([workflowId, conversationId]);
}

function toEntry(doc: MemoryDoc): MemoryEntry {
  return { conversationId: doc.conversationId, seq: doc.seq, role: doc.role as MemoryRole, content: doc.content, createdAt: doc.createdAt };
}

export class MongoMemories implements MemoryRepo {
  private readonly memories: Collection<MemoryDoc>;
  private readonly counters: Collection<MemoryCounterDoc>;

  constructor(db: Db, private readonly now: Now) {
    this.memories = db.collection<MemoryDoc>(COLLECTIONS.memories);
    this.counters = db.collection<MemoryCounterDoc>(COLLECTIONS.memoryCounters);
  }

  async append(workflowId: string, conversationId: string, messages: readonly { role: MemoryRole; content: string }[], keep: number): Promise<MemoryEntry[]> {
    checkMemoryMessages(messages);
    const kept = memoryCount(keep, 'keep');
    if (messages.length === 0) return [];
    const createdAt = this.now().toISOString();
    const last = await this.takeSeqs(workflowId, conversationId, messages.length);
    const first = last - messages.length + 1;
    const docs: MemoryDoc[] = messages.map((m, i) => ({
      _id: `${counterKey(workflowId, conversationId)}#${first + i}`,
      workflowId,
      conversationId,
      seq: first + i,
      role: m.role,
      content: m.content,
      createdAt,
    }));
    await this.memories.insertMany(docs, { ordered: true });
    if (kept !== Infinity) await this.trim(workflowId, conversationId, last, kept);
    return docs.filter((d) => d.seq > last - kept).map(toEntry);
  }

  /**
   * Drops all but the newest `keep` entries, counted from the conversation's last seq as it is
   * now rather than from this append's: an append that took earlier seqs but inserted after a
   * later one trimmed would otherwise leave entries beyond `keep` until the next append. The
   * append that inserts last trims last, against a counter that already counts every other.
   */
  private async trim(workflowId: string, conversationId: string, last: number, keep: number): Promise<void> {
    const counter = await this.counters.findOne({ _id: counterKey(workflowId, conversationId) }, { projection: { lastSeq: 1 } });
    const newest = Math.max(last, counter?.lastSeq ?? last);
    await this.memories.deleteMany({ workflowId, conversationId, seq: { $lte: newest - keep } });
  }

  /** The last of `n` new consecutive seqs of the conversation. */
  private async takeSeqs(workflowId: string, conversationId: string, n: number): Promise<number> {
    const _id = counterKey(workflowId, conversationId);
    const update = { $setOnInsert: { workflowId, conversationId }, $inc: { lastSeq: n } };
    const options = { upsert: true, returnDocument: 'after' } as const;
    let counter: MemoryCounterDoc | null;
    try {
      counter = await this.counters.findOneAndUpdate({ _id }, update, options);
    } catch (err) {
      // the first two appends to a conversation at once: both upserts inserted, one lost the race
      if (!isDuplicateKey(err)) throw err;
      counter = await this.counters.findOneAndUpdate({ _id }, update, options);
    }
    if (counter === null) throw new TroupeError('STORE_ERROR', `memory of conversation ${conversationId} was not written`);
    return counter.lastSeq;
  }

  async list(workflowId: string, conversationId: string, limit?: number): Promise<MemoryEntry[]> {
    const n = memoryCount(limit, 'limit');
    if (n === 0) return [];
    const cursor = this.memories.find({ workflowId, conversationId }).sort({ seq: -1 });
    const docs = await (n === Infinity ? cursor : cursor.limit(n)).toArray();
    return docs.reverse().map(toEntry);
  }

  async listAll(workflowId: string, limit: number): Promise<MemoryEntry[]> {
    const n = memoryCount(limit, 'limit');
    if (n === 0) return [];
    const cursor = this.memories.find({ workflowId }).sort({ conversationId: 1, seq: 1 });
    const docs = await (n === Infinity ? cursor : cursor.limit(n)).toArray();
    return docs.map(toEntry);
  }

  async delete(workflowId: string, conversationId: string): Promise<number> {
    // the counter stays, so the conversation's seqs go on increasing
    const { deletedCount } = await this.memories.deleteMany({ workflowId, conversationId });
    return deletedCount;
  }

  async deleteWorkflow(workflowId: string): Promise<number> {
    const { deletedCount } = await this.memories.deleteMany({ workflowId });
    await this.counters.deleteMany({ workflowId });
    return deletedCount;
  }
}
