/**
 * Conversation memory on MongoDB: one document per (workflow, conversation) holding its entries
 * and the last seq given out. An append is one findOneAndUpdate (upsert) that bumps `lastSeq`
 * with `$inc` and pushes the messages with `$push`/`$each`/`$slice`: atomic on the document, so
 * concurrent appends never share a seq or interleave, and the trim happens in the same write.
 * Seqs are not stored: the entries are always the consecutive seqs ending at `lastSeq`.
 */
import type { Collection, Db } from 'mongodb';
import { TroupeError } from '../../errors.js';
import { checkMemoryMessages, memoryCount } from '../shared.js';
import type { MemoryEntry, MemoryRepo, MemoryRole, Now } from '../types.js';
import { COLLECTIONS, isDuplicateKey } from './collections.js';
import type { MemoryDoc, MemoryEntryDoc } from './collections.js';

function memoryKey(workflowId: string, conversationId: string): string {
  return JSON.stringify([workflowId, conversationId]);
}

/** The entries of a tail of a conversation (any number of its newest), with their seqs. */
function toEntries(conversationId: string, lastSeq: number, tail: readonly MemoryEntryDoc[]): MemoryEntry[] {
  const first = lastSeq - tail.length + 1;
  return tail.map((e, i) => ({ conversationId, seq: first + i, role: e.role as MemoryRole, content: e.content, createdAt: e.createdAt }));
}

/** Projection of the newest `n` entries (n >= 1, Infinity for all). */
function newest(n: number): { lastSeq: 1; entries: 1 | { $slice: number } } {
  return { lastSeq: 1, entries: n === Infinity ? 1 : { $slice: -n } };
}

export class MongoMemories implements MemoryRepo {
  private readonly memories: Collection<MemoryDoc>;

  constructor(db: Db, private readonly now: Now) {
    this.memories = db.collection<MemoryDoc>(COLLECTIONS.memories);
  }

  async append(workflowId: string, conversationId: string, messages: readonly { role: MemoryRole; content: string }[], keep: number): Promise<MemoryEntry[]> {
    checkMemoryMessages(messages);
    const kept = memoryCount(keep, 'keep');
    if (messages.length === 0) return [];
    const createdAt = this.now().toISOString();
    const docs: MemoryEntryDoc[] = messages.map((m) => ({ role: m.role, content: m.content, createdAt }));
    // `$slice: 0` empties the array (keep 0); written as 0, not -0, which BSON would send as a double
    const push = kept === Infinity ? { $each: docs } : { $each: docs, $slice: kept === 0 ? 0 : -kept };
    const update = { $setOnInsert: { workflowId, conversationId }, $inc: { lastSeq: messages.length }, $push: { entries: push } };
    const options = { upsert: true, returnDocument: 'after', projection: newest(messages.length) } as const;
    const _id = memoryKey(workflowId, conversationId);
    let doc: MemoryDoc | null;
    try {
      doc = await this.memories.findOneAndUpdate({ _id }, update, options);
    } catch (err) {
      // the first two appends to a conversation at once: both upserts inserted, one lost the race
      if (!isDuplicateKey(err)) throw err;
      doc = await this.memories.findOneAndUpdate({ _id }, update, options);
    }
    if (doc === null) throw new TroupeError('STORE_ERROR', `memory of conversation ${conversationId} was not written`);
    // the document right after this update: the entries with the newest messages.length seqs are ours
    const ours = doc.lastSeq - messages.length;
    return toEntries(conversationId, doc.lastSeq, doc.entries).filter((e) => e.seq > ours);
  }

  async list(workflowId: string, conversationId: string, limit?: number): Promise<MemoryEntry[]> {
    const n = memoryCount(limit, 'limit');
    if (n === 0) return [];
    const doc = await this.memories.findOne({ _id: memoryKey(workflowId, conversationId) }, { projection: newest(n) });
    return doc ? toEntries(conversationId, doc.lastSeq, doc.entries) : [];
  }

  async listAll(workflowId: string, limit: number): Promise<MemoryEntry[]> {
    const n = memoryCount(limit, 'limit');
    const out: MemoryEntry[] = [];
    if (n === 0) return out;
    const cursor = this.memories.find({ workflowId }, { sort: { conversationId: 1 }, projection: { conversationId: 1, lastSeq: 1, entries: 1 } });
    try {
      for await (const doc of cursor) {
        out.push(...toEntries(doc.conversationId, doc.lastSeq, doc.entries).slice(0, n - out.length));
        if (out.length >= n) break;
      }
    } finally {
      await cursor.close();
    }
    return out;
  }

  async delete(workflowId: string, conversationId: string): Promise<number> {
    // the document stays with its lastSeq, so the conversation's seqs go on increasing
    const before = await this.memories.findOneAndUpdate(
      { _id: memoryKey(workflowId, conversationId) },
      { $set: { entries: [] } },
      { returnDocument: 'before', projection: { entries: 1 } },
    );
    return before?.entries.length ?? 0;
  }

  async deleteWorkflow(workflowId: string): Promise<number> {
    const [counted] = await this.memories
      .aggregate<{ n: number }>([{ $match: { workflowId } }, { $group: { _id: null, n: { $sum: { $size: '$entries' } } } }])
      .toArray();
    await this.memories.deleteMany({ workflowId });
    return counted?.n ?? 0;
  }
}
