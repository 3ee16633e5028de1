import type { Collection, Db } from 'mongodb';
import type { ApprovalDecision, ApprovalEntry, ApprovalRepo } from '../types.js';
import { COLLECTIONS, type ApprovalDoc } from './collections.js';

function entryOf(d: ApprovalDoc): ApprovalEntry {
  return {
    executionId: d.executionId, key: d.key, blockId: d.blockId, workflowId: d.workflowId, tokenHash: d.tokenHash, message: d.message,
    since: d.since, expiresAt: d.expiresAt, decision: d.decision as ApprovalDecision | null,
    data: d.data === null ? null : (JSON.parse(d.data) as unknown), decidedAt: d.decidedAt, decidedBy: d.decidedBy,
  };
}

const idOf = (executionId: string, key: string): string => JSON.stringify([executionId, key]);

export class MongoApprovals implements ApprovalRepo {
  private readonly coll: Collection<ApprovalDoc>;

  constructor(db: Db) {
    this.coll = db.collection<ApprovalDoc>(COLLECTIONS.approvals);
  }

  async begin(e: ApprovalEntry): Promise<ApprovalEntry> {
    const _id = idOf(e.executionId, e.key);
    const doc = { ...e, data: e.data === undefined || e.data === null ? null : JSON.stringify(e.data) };
    await this.coll.updateOne({ _id }, { $setOnInsert: doc }, { upsert: true });
    return (await this.get(e.executionId, e.key)) ?? e;
  }

  async get(executionId: string, key: string): Promise<ApprovalEntry | null> {
    const doc = await this.coll.findOne({ _id: idOf(executionId, key) });
    return doc === null ? null : entryOf(doc);
  }

  async findByTokenHash(tokenHash: string): Promise<ApprovalEntry | null> {
    const doc = await this.coll.findOne({ tokenHash });
    return doc === null ? null : entryOf(doc);
  }

  async decide(executionId: string, key: string, d: { decision: ApprovalDecision; data: unknown; decidedAt: string; decidedBy: string }): Promise<boolean> {
    const data = d.data === undefined || d.data === null ? null : JSON.stringify(d.data);
    const res = await this.coll.updateOne({ _id: idOf(executionId, key), decision: null }, { $set: { decision: d.decision, data, decidedAt: d.decidedAt, decidedBy: d.decidedBy } });
    return res.modifiedCount > 0;
  }
}
