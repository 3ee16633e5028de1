import type { Collection, Db, Filter } from 'mongodb';
import { clampLimit, iso } from '../shared.js';
import type { FireOutcome, ScheduleEntry, ScheduleFire, ScheduleRepo } from '../types.js';
import { COLLECTIONS, isDuplicateKey } from './collections.js';
import type { HeartbeatDoc, ScheduleDoc, ScheduleFireDoc } from './collections.js';

/** What purgeFires knows of one schedule's fires. */
export interface PurgeScope {
  workflowId: string;
  triggerId: string;
  cutoff: string;
  /** the due time of its newest fire (any outcome) */
  newestDueAt: string;
  /** the due time of its newest fire with an execution, or null */
  lastRunDueAt: string | null;
}

/**
 * The fires of one schedule that purgeFires drops, as SQLite's purge does: due before the cutoff,
 * not claimed, not the newest fire, and not the newest fire with an execution (GET /schedules
 * shows both, overlap reads the second). Skipped fires after the last run go too.
 */
export function purgeFilter(p: PurgeScope): Filter<ScheduleFireDoc> {
  const before = p.newestDueAt < p.cutoff ? p.newestDueAt : p.cutoff;
  const notTheLastRun: Filter<ScheduleFireDoc>[] = [{ executionId: null }];
  if (p.lastRunDueAt !== null) notTheLastRun.push({ dueAt: { $lt: p.lastRunDueAt } });
  return { workflowId: p.workflowId, triggerId: p.triggerId, outcome: { $ne: 'claimed' }, dueAt: { $lt: before }, $or: notTheLastRun };
}

function key(...parts: string[]): string {
  return JSON.stringify(parts);
}

function toEntry(doc: ScheduleDoc): ScheduleEntry {
  return { workflowId: doc.workflowId, triggerId: doc.triggerId, spec: doc.spec, version: doc.version, activeFrom: doc.activeFrom, lastDueAt: doc.lastDueAt };
}

function toFire(doc: ScheduleFireDoc): ScheduleFire {
  return {
    workflowId: doc.workflowId,
    triggerId: doc.triggerId,
    dueAt: doc.dueAt,
    executionId: doc.executionId,
    outcome: doc.outcome as FireOutcome,
    firedAt: doc.firedAt,
  };
}

export class MongoSchedules implements ScheduleRepo {
  private readonly schedules: Collection<ScheduleDoc>;
  private readonly fires: Collection<ScheduleFireDoc>;
  private readonly beats: Collection<HeartbeatDoc>;

  constructor(db: Db) {
    this.schedules = db.collection<ScheduleDoc>(COLLECTIONS.schedules);
    this.fires = db.collection<ScheduleFireDoc>(COLLECTIONS.scheduleFires);
    this.beats = db.collection<HeartbeatDoc>(COLLECTIONS.schedulerHeartbeat);
  }

  async put(workflowId: string, entries: readonly { triggerId: string; version: number; spec: string }[], activeFrom: string): Promise<void> {
    await this.schedules.deleteMany({ workflowId, triggerId: { $nin: entries.map((e) => e.triggerId) } });
    const from = iso(activeFrom);
    for (const e of entries) {
      const _id = key(workflowId, e.triggerId);
      // same cron and zone: keep the window (a redeploy drops no due time); changed: start afresh
      const kept = await this.schedules.updateOne({ _id, spec: e.spec }, { $set: { version: e.version } });
      if (kept.matchedCount === 1) continue;
      await this.schedules.replaceOne(
        { _id },
        { workflowId, triggerId: e.triggerId, version: e.version, spec: e.spec, activeFrom: from, lastDueAt: null },
        { upsert: true },
      );
    }
  }

  async deleteByWorkflow(workflowId: string): Promise<number> {
    return (await this.schedules.deleteMany({ workflowId })).deletedCount;
  }

  async list(): Promise<ScheduleEntry[]> {
    return (await this.schedules.find({}).sort({ workflowId: 1, triggerId: 1 }).toArray()).map(toEntry);
  }

  async listByWorkflow(workflowId: string): Promise<ScheduleEntry[]> {
    return (await this.schedules.find({ workflowId }).sort({ triggerId: 1 }).toArray()).map(toEntry);
  }

  async claim(fire: ScheduleFire): Promise<boolean> {
    const dueAt = iso(fire.dueAt);
    const doc: ScheduleFireDoc = {
      _id: key(fire.workflowId, fire.triggerId, dueAt),
      workflowId: fire.workflowId,
      triggerId: fire.triggerId,
      dueAt,
      executionId: fire.executionId,
      outcome: fire.outcome,
      firedAt: iso(fire.firedAt),
    };
    let won = true;
    try {
      await this.fires.insertOne(doc);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      won = false;
    }
    // the loser advances lastDueAt too: SQLite moves it with the claim in one transaction, here the
    // winner may be between its two writes, or have died there and left the due time behind
    await this.pass(fire.workflowId, fire.triggerId, dueAt);
    return won;
  }

  async pass(workflowId: string, triggerId: string, dueAt: string): Promise<void> {
    const at = iso(dueAt);
    await this.schedules.updateOne(
      { _id: key(workflowId, triggerId), $or: [{ lastDueAt: null }, { lastDueAt: { $lt: at } }] },
      { $set: { lastDueAt: at } },
    );
  }

  async markStarted(workflowId: string, triggerId: string, dueAt: string): Promise<boolean> {
    const res = await this.fires.updateOne({ _id: key(workflowId, triggerId, iso(dueAt)), outcome: 'claimed' }, { $set: { outcome: 'started' } });
    return res.modifiedCount === 1;
  }

  async listClaimed(firedBefore: string, limit: number): Promise<ScheduleFire[]> {
    const docs = await this.fires.find({ outcome: 'claimed', firedAt: { $lte: iso(firedBefore) } }).sort({ firedAt: 1, workflowId: 1, triggerId: 1, dueAt: 1 }).limit(clampLimit(limit)).toArray();
    return docs.map(toFire);
  }

  async lastFires(workflowId: string, triggerId: string, limit: number): Promise<ScheduleFire[]> {
    const docs = await this.fires.find({ workflowId, triggerId }).sort({ dueAt: -1 }).limit(clampLimit(limit)).toArray();
    return docs.map(toFire);
  }

  async lastRun(workflowId: string, triggerId: string): Promise<ScheduleFire | null> {
    const doc = await this.fires.find({ workflowId, triggerId, executionId: { $ne: null } }).sort({ dueAt: -1 }).limit(1).next();
    return doc ? toFire(doc) : null;
  }

  /**
   * Per schedule that has fires (deployed or not: a trigger dropped by a redeploy keeps its fires,
   * as on SQLite), the candidates are grouped first and each group purged with one filter.
   */
  async purgeFires(before: string): Promise<number> {
    const cutoff = iso(before);
    const groups = this.fires.aggregate<{ _id: { workflowId: string; triggerId: string } }>([
      { $match: { dueAt: { $lt: cutoff }, outcome: { $ne: 'claimed' } } },
      { $group: { _id: { workflowId: '$workflowId', triggerId: '$triggerId' } } },
    ]);
    let removed = 0;
    for await (const { _id: { workflowId, triggerId } } of groups) {
      const [newest] = await this.lastFires(workflowId, triggerId, 1);
      if (newest === undefined) continue;
      const run = await this.lastRun(workflowId, triggerId);
      removed += (await this.fires.deleteMany(purgeFilter({ workflowId, triggerId, cutoff, newestDueAt: newest.dueAt, lastRunDueAt: run?.dueAt ?? null }))).deletedCount;
    }
    return removed;
  }

  async heartbeat(): Promise<string | null> {
    return (await this.beats.findOne({ _id: 'last' }))?.at ?? null;
  }

  async beat(at: string): Promise<void> {
    const when = iso(at);
    try {
      await this.beats.updateOne({ _id: 'last', at: { $lt: when } }, { $set: { at: when } }, { upsert: true });
    } catch (err) {
      // the document exists with a later time: the upsert's insert collided, nothing to do
      if (!isDuplicateKey(err)) throw err;
    }
  }
}
