import type { Collection, Db } from 'mongodb';
import { clampLimit, iso } from '../shared.js';
import type { FireOutcome, ScheduleEntry, ScheduleFire, ScheduleRepo } from '../types.js';
import { COLLECTIONS, isDuplicateKey } from './collections.js';
import type { HeartbeatDoc, ScheduleDoc, ScheduleFireDoc } from './collections.js';

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
    try {
      await this.fires.insertOne(doc);
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
    await this.pass(fire.workflowId, fire.triggerId, dueAt);
    return true;
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
    const docs = await this.fires.find({ outcome: 'claimed', firedAt: { $lte: iso(firedBefore) } }).sort({ firedAt: 1, _id: 1 }).limit(clampLimit(limit)).toArray();
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

  async purgeFires(before: string): Promise<number> {
    const cutoff = iso(before);
    let removed = 0;
    for (const s of await this.schedules.find({}).toArray()) {
      const [newest] = await this.lastFires(s.workflowId, s.triggerId, 1);
      const run = await this.lastRun(s.workflowId, s.triggerId);
      const keepFrom = [cutoff, newest?.dueAt, run?.dueAt].filter((x): x is string => x !== undefined).sort()[0] ?? cutoff;
      const res = await this.fires.deleteMany({ workflowId: s.workflowId, triggerId: s.triggerId, dueAt: { $lt: keepFrom }, outcome: { $ne: 'claimed' } });
      removed += res.deletedCount;
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
