import type { Collection, Db } from 'mongodb';
import { conflict, iso, isoOrNull } from '../shared.js';
import type { ApiKeyRecord, ApiKeyRepo, Now } from '../types.js';
import { COLLECTIONS, isDuplicateKey } from './collections.js';
import type { ApiKeyDoc } from './collections.js';

function toRecord(doc: ApiKeyDoc): ApiKeyRecord {
  return {
    id: doc._id, workflowId: doc.workflowId, prefix: doc.prefix, hash: doc.hash,
    createdAt: doc.createdAt, revokedAt: doc.revokedAt, lastUsedAt: doc.lastUsedAt,
  };
}

export class MongoApiKeys implements ApiKeyRepo {
  private readonly coll: Collection<ApiKeyDoc>;

  constructor(db: Db, private readonly now: Now) {
    this.coll = db.collection<ApiKeyDoc>(COLLECTIONS.apiKeys);
  }

  async create(rec: ApiKeyRecord): Promise<ApiKeyRecord> {
    const doc: ApiKeyDoc = {
      _id: rec.id, workflowId: rec.workflowId, prefix: rec.prefix, hash: rec.hash, createdAt: iso(rec.createdAt),
      revokedAt: isoOrNull(rec.revokedAt), lastUsedAt: isoOrNull(rec.lastUsedAt),
    };
    try {
      await this.coll.insertOne(doc);
    } catch (err) {
      throw isDuplicateKey(err) ? conflict('API key', rec.id) : err;
    }
    return toRecord(doc);
  }

  async listByWorkflow(workflowId: string): Promise<ApiKeyRecord[]> {
    const docs = await this.coll.find({ workflowId }).sort({ createdAt: 1, _id: 1 }).toArray();
    return docs.map(toRecord);
  }

  async findByHash(hash: string): Promise<ApiKeyRecord | null> {
    const doc = await this.coll.findOne({ hash });
    return doc ? toRecord(doc) : null;
  }

  async revoke(workflowId: string, keyId: string, at?: string): Promise<boolean> {
    const when = iso(at ?? this.now().toISOString());
    // keep the first revocation time: only set it where it is still null
    const res = await this.coll.updateOne({ _id: keyId, workflowId, revokedAt: null }, { $set: { revokedAt: when } });
    if (res.matchedCount > 0) return true;
    return (await this.coll.countDocuments({ _id: keyId, workflowId }, { limit: 1 })) > 0;
  }

  async markUsed(keyId: string, at: string): Promise<void> {
    await this.coll.updateOne({ _id: keyId }, { $set: { lastUsedAt: iso(at) } });
  }

  async deleteByWorkflow(workflowId: string): Promise<number> {
    return (await this.coll.deleteMany({ workflowId })).deletedCount;
  }
}
