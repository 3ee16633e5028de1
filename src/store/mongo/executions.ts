import type { Collection, Db, Filter } from 'mongodb';
import { TroupeError } from '../../errors.js';
import { checkBatch, clampLimit, conflict, decodeCursor, encodeCursor, pageOfRows, contextText, fromJson, iso, notFound } from '../shared.js';
import type {
  BlockLog, BoundaryBatch, BoundaryItem, ExecutionEvent, ExecutionListOptions, ExecutionPatch, ExecutionQuery, ExecutionRecord, ExecutionRepo,
  ExecutionStatus, Now, Page, StatusCursor,
} from '../types.js';
import { COLLECTIONS, isDuplicateKey } from './collections.js';
import type { BlockLogDoc, EventDoc, ExecutionDoc } from './collections.js';
import { boundaryWrites, executionDoc, patchFields, toEvent, toExecution, triggerTypeFilter } from './execution-docs.js';
import { checkDocumentSize } from './errors.js';
import type { Txn } from './txn.js';

export class MongoExecutions implements ExecutionRepo {
  private readonly executions: Collection<ExecutionDoc>;
  private readonly logs: Collection<BlockLogDoc>;
  private readonly events: Collection<EventDoc>;

  constructor(db: Db, private readonly txn: Txn, private readonly now: Now) {
    this.executions = db.collection<ExecutionDoc>(COLLECTIONS.executions);
    this.logs = db.collection<BlockLogDoc>(COLLECTIONS.blockLogs);
    this.events = db.collection<EventDoc>(COLLECTIONS.events);
  }

  async create(rec: ExecutionRecord): Promise<ExecutionRecord> {
    const doc = executionDoc(rec, iso(rec.createdAt ?? this.now().toISOString()));
    checkDocumentSize(doc, `execution ${rec.id}`);
    try {
      await this.executions.insertOne(doc);
    } catch (err) {
      throw isDuplicateKey(err) ? conflict('execution', rec.id) : err;
    }
    return toExecution(doc, true);
  }

  async update(id: string, patch: ExecutionPatch): Promise<boolean> {
    const set = patchFields(patch);
    checkDocumentSize(set, `the update of execution ${id}`);
    if (Object.keys(set).length === 0) return (await this.executions.countDocuments({ _id: id }, { limit: 1 })) > 0;
    return (await this.executions.updateOne({ _id: id }, { $set: set })).matchedCount > 0;
  }

  async get(id: string): Promise<(ExecutionRecord & { logs: BlockLog[] }) | null> {
    const doc = await this.executions.findOne({ _id: id });
    if (!doc) return null;
    const logs = await this.logs.find({ executionId: id }).sort({ order: 1, iterationKey: 1, blockId: 1 }).toArray();
    return { ...toExecution(doc, true), logs: logs.map((l) => fromJson(l.body) as BlockLog) };
  }

  async list(workflowId: string, opts: ExecutionListOptions): Promise<Page<ExecutionRecord>> {
    return this.listWhere({ ...opts, workflowId });
  }

  async listAll(query: ExecutionQuery): Promise<Page<ExecutionRecord>> {
    return this.listWhere(query);
  }

  private async listWhere(q: ExecutionQuery): Promise<Page<ExecutionRecord>> {
    const limit = clampLimit(q.limit);
    const filter: Filter<ExecutionDoc> = {};
    const and: Filter<ExecutionDoc>[] = [];
    if (q.workflowId !== undefined) filter.workflowId = q.workflowId;
    if (q.status !== undefined) filter.status = q.status;
    if (q.triggerType !== undefined) and.push(triggerTypeFilter(q.triggerType));
    if (q.since !== undefined || q.until !== undefined) {
      filter.createdAt = { ...(q.since === undefined ? {} : { $gte: iso(q.since) }), ...(q.until === undefined ? {} : { $lt: iso(q.until) }) };
    }
    if (q.cursor) {
      const [createdAt, id] = decodeCursor(q.cursor, 2) as [string, string];
      and.push({ $or: [{ createdAt: { $lt: createdAt } }, { createdAt, _id: { $lt: id } }] });
    }
    if (and.length > 0) filter.$and = and;
    const docs = await this.executions
      .find(filter, { projection: { context: 0 } })
      .sort({ createdAt: -1, _id: -1 })
      .limit(limit + 1)
      .toArray();
    return pageOfRows(docs, limit, (d) => toExecution(d, false), (_, d) => [d.createdAt, d._id]);
  }

  async saveBoundary(id: string, batch: BoundaryBatch): Promise<void> {
    checkBatch(id, batch);
    // built, JSON-encoded and size-checked before the first write, so a bad value writes nothing
    const w = boundaryWrites(id, batch, () => this.now().toISOString());
    await this.txn.run(async (session) => {
      if (w.created !== null) {
        try {
          await this.executions.insertOne(w.created, { session });
        } catch (err) {
          throw isDuplicateKey(err) ? conflict('execution', id) : err;
        }
      } else if ((await this.executions.countDocuments({ _id: id }, { limit: 1, session })) === 0) {
        throw notFound('execution', id);
      }
      // the guard is the update's own filter: one document, one atomic check-and-write, with or
      // without a transaction (two claimers: the second no longer matches what the first wrote)
      const filter = batch.guard === undefined ? { _id: id } : { _id: id, status: batch.guard.status, context: contextText(batch.guard.context) };
      if (Object.keys(w.set).length > 0) {
        const { matchedCount } = await this.executions.updateOne(filter, { $set: w.set }, { session });
        if (matchedCount === 0 && batch.guard !== undefined) throw changedMeanwhile(id);
      } else if (batch.guard !== undefined && (await this.executions.countDocuments(filter, { limit: 1, session })) === 0) {
        throw changedMeanwhile(id);
      }
      if (w.logOps.length > 0) await this.logs.bulkWrite(w.logOps, { ordered: true, session });
      if (w.eventOps.length > 0) await this.events.bulkWrite(w.eventOps, { ordered: true, session });
    });
  }

  /** Item by item: a MongoDB transaction per execution is the unit the server offers. */
  async saveBoundaries(items: readonly BoundaryItem[]): Promise<(Error | null)[]> {
    const results: (Error | null)[] = [];
    for (const item of items) {
      try {
        await this.saveBoundary(item.id, item.batch);
        results.push(null);
      } catch (err) {
        results.push(err instanceof Error ? err : new Error(String(err)));
      }
    }
    return results;
  }

  async listEvents(executionId: string, afterSeq?: number): Promise<ExecutionEvent[]> {
    const filter: Filter<EventDoc> = afterSeq === undefined ? { executionId } : { executionId, seq: { $gt: afterSeq } };
    const docs = await this.events.find(filter).sort({ seq: 1 }).toArray();
    return docs.map(toEvent);
  }

  async listByStatus(statuses: readonly ExecutionStatus[], limit: number, after?: StatusCursor): Promise<ExecutionRecord[]> {
    if (statuses.length === 0) return [];
    const past = after === undefined ? {} : { $or: [{ createdAt: { $gt: after.createdAt } }, { createdAt: after.createdAt, _id: { $gt: after.id } }] };
    const docs = await this.executions
      .find({ status: { $in: [...statuses] }, ...past })
      .sort({ createdAt: 1, _id: 1 })
      .limit(clampLimit(limit))
      .toArray();
    return docs.map((d) => toExecution(d, true));
  }

  /**
   * Logs and events first, the record last: a purge cut short leaves a record that the next
   * batch takes again, never logs without their record. The freed space is reused by the
   * storage engine (deleted documents' blocks), as MongoDB does for any delete.
   */
  async purgeEnded(endedBefore: string, limit: number): Promise<number> {
    const cutoff = iso(endedBefore);
    // the (status, createdAt) index: an execution that ended before the cutoff was created before it
    const docs = await this.executions
      .find({ status: { $in: [...ENDED] }, createdAt: { $lt: cutoff }, endedAt: { $lt: cutoff } }, { projection: { _id: 1 } })
      .limit(clampLimit(limit))
      .toArray();
    const ids = docs.map((d) => d._id);
    if (ids.length === 0) return 0;
    await this.logs.deleteMany({ executionId: { $in: ids } });
    await this.events.deleteMany({ executionId: { $in: ids } });
    return (await this.executions.deleteMany({ _id: { $in: ids } })).deletedCount;
  }
}

const ENDED: readonly ExecutionStatus[] = ['completed', 'failed', 'cancelled'];

function changedMeanwhile(id: string): TroupeError {
  return new TroupeError('CONFLICT', `execution ${id} changed meanwhile`, { details: { executionId: id } });
}
