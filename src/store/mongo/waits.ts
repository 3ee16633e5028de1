import type { Collection, Db } from 'mongodb';
import type { WaitEntry, WaitRepo } from '../types.js';
import { COLLECTIONS, type WaitDoc } from './collections.js';

function entryOf(d: WaitDoc): WaitEntry {
  return { executionId: d.executionId, key: d.key, workflowId: d.workflowId, since: d.since, dueAt: d.dueAt };
}

export class MongoWaits implements WaitRepo {
  private readonly coll: Collection<WaitDoc>;

  constructor(db: Db) {
    this.coll = db.collection<WaitDoc>(COLLECTIONS.waits);
  }

  async begin(entry: WaitEntry): Promise<WaitEntry> {
    // the (executionId, key) id makes the first writer win; later ones read what it stored
    const _id = JSON.stringify([entry.executionId, entry.key]);
    await this.coll.updateOne({ _id }, { $setOnInsert: { ...entry } }, { upsert: true });
    const doc = await this.coll.findOne({ _id });
    return doc === null ? entry : entryOf(doc);
  }

  async due(at: string, limit: number): Promise<WaitEntry[]> {
    const docs = await this.coll.find({ dueAt: { $lte: at } }).sort({ dueAt: 1, executionId: 1, key: 1 }).limit(Math.max(1, limit)).toArray();
    return docs.map(entryOf);
  }

  async listByExecution(executionId: string): Promise<WaitEntry[]> {
    return (await this.coll.find({ executionId }).sort({ key: 1 }).toArray()).map(entryOf);
  }

  async delete(executionId: string, key?: string): Promise<number> {
    const filter = key === undefined ? { executionId } : { executionId, key };
    return (await this.coll.deleteMany(filter)).deletedCount;
  }
}
