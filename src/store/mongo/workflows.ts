import type { ClientSession, Collection, Db } from 'mongodb';
import { TroupeError } from '../../errors.js';
import type { WorkflowDef } from '../../model/types.js';
import { clampLimit, conflict, decodeCursor, encodeCursor, pageOfRows, fromJson, toJson, versionCursor } from '../shared.js';
import type { Now, Page, PageOptions, StoredWorkflow, WorkflowRepo, WorkflowVersionInfo } from '../types.js';
import { COLLECTIONS, isDuplicateKey } from './collections.js';
import type { WorkflowDoc, WorkflowVersionDoc } from './collections.js';
import type { Txn } from './txn.js';

/** Collections holding documents that belong to a workflow and the field naming it. */
const CASCADE: readonly [string, string][] = [
  [COLLECTIONS.workflowVersions, 'workflowId'],
  [COLLECTIONS.deployments, '_id'],
  [COLLECTIONS.apiKeys, 'workflowId'],
  [COLLECTIONS.webhookRoutes, 'workflowId'],
  [COLLECTIONS.webhookEvents, 'workflowId'],
  [COLLECTIONS.webhookDeliveries, 'workflowId'],
  [COLLECTIONS.schedules, 'workflowId'],
  [COLLECTIONS.scheduleFires, 'workflowId'],
  [COLLECTIONS.chatDeployments, '_id'],
  [COLLECTIONS.chatConversations, 'workflowId'],
  [COLLECTIONS.chatCodes, 'workflowId'],
  [COLLECTIONS.memories, 'workflowId'],
  [COLLECTIONS.memoryCounters, 'workflowId'],
  [COLLECTIONS.chatSessions, 'workflowId'],
];
const MAX_CAS_ATTEMPTS = 20;

function toStored(doc: WorkflowDoc): StoredWorkflow {
  return { id: doc._id, version: doc.version, definition: fromJson(doc.definition) as WorkflowDef, createdAt: doc.createdAt, updatedAt: doc.updatedAt };
}

/**
 * The workflow document carries the current definition, so `get` is one read that is never
 * torn; `workflow_versions` keeps every version. Writes go workflow document first, then the
 * version document, and getVersion answers the current version from the workflow document:
 * without a transaction, a crash between the two writes loses nothing readable.
 */
export class MongoWorkflows implements WorkflowRepo {
  private readonly workflows: Collection<WorkflowDoc>;
  private readonly versions: Collection<WorkflowVersionDoc>;

  constructor(private readonly db: Db, private readonly txn: Txn, private readonly now: Now) {
    this.workflows = db.collection<WorkflowDoc>(COLLECTIONS.workflows);
    this.versions = db.collection<WorkflowVersionDoc>(COLLECTIONS.workflowVersions);
  }

  async create(def: WorkflowDef & { id: string }): Promise<StoredWorkflow> {
    const at = this.now().toISOString();
    const doc: WorkflowDoc = { _id: def.id, version: 1, definition: toJson({ ...def, id: def.id }), createdAt: at, updatedAt: at };
    await this.txn.run(async (session) => {
      try {
        await this.workflows.insertOne(doc, { session });
      } catch (err) {
        throw isDuplicateKey(err) ? conflict('workflow', def.id) : err;
      }
      await this.putVersion(doc, session);
    });
    return toStored(doc);
  }

  async get(id: string): Promise<StoredWorkflow | null> {
    const doc = await this.workflows.findOne({ _id: id });
    return doc ? toStored(doc) : null;
  }

  async getVersion(id: string, version: number): Promise<StoredWorkflow | null> {
    const doc = await this.workflows.findOne({ _id: id });
    if (!doc || version > doc.version) return null;
    if (version === doc.version) return toStored(doc);
    const v = await this.versions.findOne({ workflowId: id, version });
    return v ? toStored({ _id: id, version, definition: v.definition, createdAt: doc.createdAt, updatedAt: v.createdAt }) : null;
  }

  /**
   * The version documents, with the current version from the workflow document (written first:
   * it may be the only copy, see above).
   */
  async listVersions(id: string, opts: PageOptions): Promise<Page<WorkflowVersionInfo>> {
    const limit = clampLimit(opts.limit);
    const below = opts.cursor ? versionCursor(opts.cursor) : Number.MAX_SAFE_INTEGER;
    const doc = await this.workflows.findOne({ _id: id });
    if (!doc) return { items: [], nextCursor: null };
    const docs = await this.versions
      .find({ workflowId: id, version: { $lt: Math.min(below, doc.version) } })
      .sort({ version: -1 })
      .limit(limit + 1)
      .toArray();
    const rows = docs.map((v) => ({ version: v.version, createdAt: v.createdAt }));
    if (doc.version < below) rows.unshift({ version: doc.version, createdAt: doc.updatedAt });
    return pageOfRows(rows, limit, (v) => v, (v) => [String(v.version)]);
  }

  async list(opts: PageOptions): Promise<Page<StoredWorkflow>> {
    const limit = clampLimit(opts.limit);
    const filter = opts.cursor ? { _id: { $gt: decodeCursor(opts.cursor, 1)[0] as string } } : {};
    const docs = await this.workflows.find(filter).sort({ _id: 1 }).limit(limit + 1).toArray();
    return pageOfRows(docs, limit, toStored, (w) => [w.id]);
  }

  async replace(id: string, def: WorkflowDef): Promise<StoredWorkflow | null> {
    const definition = toJson({ ...def, id });
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const current = await this.workflows.findOne({ _id: id });
      if (!current) return null;
      const next: WorkflowDoc = { ...current, version: current.version + 1, definition, updatedAt: this.now().toISOString() };
      const won = await this.txn.run(async (session) => {
        // compare-and-set on the version: a concurrent replace makes this match nothing
        const { _id, ...fields } = next;
        const res = await this.workflows.replaceOne({ _id, version: current.version }, fields, { session });
        if (res.matchedCount === 0) return false;
        await this.putVersion(next, session);
        return true;
      });
      if (won) return toStored(next);
    }
    throw new TroupeError('CONFLICT', `workflow ${id} is being replaced concurrently`, { retryable: true });
  }

  async delete(id: string): Promise<boolean> {
    return this.txn.run(async (session) => {
      // dependents first: an interrupted delete leaves a workflow without keys, never keys without a workflow
      for (const [name, field] of CASCADE) await this.db.collection(name).deleteMany({ [field]: id }, { session });
      const res = await this.workflows.deleteOne({ _id: id }, { session });
      return res.deletedCount > 0;
    });
  }

  private async putVersion(doc: WorkflowDoc, session: ClientSession | undefined): Promise<void> {
    await this.versions.updateOne(
      { workflowId: doc._id, version: doc.version },
      { $set: { definition: doc.definition, createdAt: doc.updatedAt } },
      { upsert: true, session },
    );
  }
}
