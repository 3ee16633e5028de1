/**
 * Webhook routes, events and delivery ids on MongoDB. Accept claims the delivery id first (its
 * `_id` is the de-duplication key, so one accept wins across instances) and writes the event
 * second, so a duplicate never exists even for a moment (a sweep could start it). The claim
 * carries the whole event: an accept that finds a live claim whose event is not written yet
 * (its accept is between the two writes, or died there) writes that event itself, under its id,
 * and answers duplicate. Taking the claim over instead would let both events run.
 */
import type { Collection, Db } from 'mongodb';
import { TroupeError } from '../../errors.js';
import { clampLimit, fromJson, iso, toJson } from '../shared.js';
import type { WebhookEvent, WebhookEventStatus, WebhookRepo, WebhookRoute } from '../types.js';
import { COLLECTIONS, isDuplicateKey } from './collections.js';
import { checkDocumentSize } from './errors.js';
import type { WebhookDeliveryDoc, WebhookEventDoc, WebhookRouteDoc } from './collections.js';

function toEvent(doc: WebhookEventDoc): WebhookEvent {
  return {
    id: doc._id,
    workflowId: doc.workflowId,
    triggerId: doc.triggerId,
    version: doc.version,
    deliveryId: doc.deliveryId,
    payload: fromJson(doc.payload),
    receivedAt: doc.receivedAt,
    status: doc.status as WebhookEventStatus,
    executionId: doc.executionId,
    announced: doc.announced === true,
  };
}

function eventDoc(event: WebhookEvent): WebhookEventDoc {
  return {
    _id: event.id,
    workflowId: event.workflowId,
    triggerId: event.triggerId,
    version: event.version,
    deliveryId: event.deliveryId,
    payload: toJson(event.payload),
    receivedAt: iso(event.receivedAt),
    status: event.status,
    executionId: event.executionId,
    announced: event.announced,
  };
}

/** An accept gives up after this many rounds of other accepts taking the same delivery id over. */
const MAX_CLAIM_ATTEMPTS = 10;

function deliveryKey(e: WebhookEvent, deliveryId: string): string {
  return JSON.stringify([e.workflowId, e.triggerId, deliveryId]);
}

function routeConflict(path: string, owner: string): TroupeError {
  return new TroupeError('CONFLICT', `webhook path "${path}" is already used by workflow ${owner}`, { details: { path, workflowId: owner } });
}

export class MongoWebhooks implements WebhookRepo {
  private readonly routes: Collection<WebhookRouteDoc>;
  private readonly events: Collection<WebhookEventDoc>;
  private readonly deliveries: Collection<WebhookDeliveryDoc>;

  constructor(db: Db) {
    this.routes = db.collection<WebhookRouteDoc>(COLLECTIONS.webhookRoutes);
    this.events = db.collection<WebhookEventDoc>(COLLECTIONS.webhookEvents);
    this.deliveries = db.collection<WebhookDeliveryDoc>(COLLECTIONS.webhookDeliveries);
  }

  async putRoutes(workflowId: string, routes: readonly { path: string; triggerId: string }[]): Promise<void> {
    const paths = routes.map((r) => r.path);
    const taken = await this.routes.findOne({ _id: { $in: paths }, workflowId: { $ne: workflowId } });
    if (taken) throw routeConflict(taken._id, taken.workflowId);
    // new paths first, stale ones last: a refused deploy leaves the served paths in place
    const added: string[] = [];
    try {
      for (const r of routes) if (await this.putRoute(workflowId, r)) added.push(r.path);
    } catch (err) {
      // another deploy took a path since the check: take back the paths this put added, so that
      // nothing of a refused put stays (SQLite refuses it in one transaction)
      if (added.length > 0) await this.routes.deleteMany({ _id: { $in: added }, workflowId });
      throw err;
    }
    await this.routes.deleteMany({ workflowId, _id: { $nin: paths } });
  }

  /** true when the path was not routed before (this put added it) */
  private async putRoute(workflowId: string, r: { path: string; triggerId: string }): Promise<boolean> {
    try {
      // inserts only when no route has this path: another workflow's is a duplicate key
      const res = await this.routes.updateOne({ _id: r.path, workflowId }, { $set: { triggerId: r.triggerId } }, { upsert: true });
      return res.upsertedCount === 1;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    const owner = await this.routes.findOne({ _id: r.path });
    // the same workflow deployed twice at once: both upserts inserted, one lost the race
    if (owner?.workflowId === workflowId) {
      await this.routes.updateOne({ _id: r.path, workflowId }, { $set: { triggerId: r.triggerId } });
      return false;
    }
    throw routeConflict(r.path, owner?.workflowId ?? 'unknown');
  }

  async findRoute(path: string): Promise<WebhookRoute | null> {
    const doc = await this.routes.findOne({ _id: path });
    return doc ? { path: doc._id, workflowId: doc.workflowId, triggerId: doc.triggerId } : null;
  }

  async deleteRoutes(workflowId: string): Promise<number> {
    return (await this.routes.deleteMany({ workflowId })).deletedCount;
  }

  async accept(event: WebhookEvent, dedupSince: string): Promise<{ event: WebhookEvent; duplicate: boolean }> {
    const doc = eventDoc(event);
    if (event.deliveryId === null) {
      checkDocumentSize(doc, `webhook event ${event.id}`);
      await this.events.insertOne(doc);
      return { event: toEvent(doc), duplicate: false };
    }
    const claim: WebhookDeliveryDoc & { event: WebhookEventDoc } = { _id: deliveryKey(event, event.deliveryId), workflowId: doc.workflowId, eventId: doc._id, receivedAt: doc.receivedAt, event: doc };
    // the claim embeds the event, so it is the larger of the two documents
    checkDocumentSize(claim, `webhook event ${event.id}`);
    const earlier = await this.claimDelivery(claim, iso(dedupSince));
    if (earlier !== null) return { event: toEvent(earlier), duplicate: true };
    await this.insertClaimed(doc);
    return { event: toEvent(doc), duplicate: false };
  }

  /** null when `claim` now owns its delivery id; else the earlier event that does (written by now) */
  private async claimDelivery(claim: WebhookDeliveryDoc & { event: WebhookEventDoc }, since: string): Promise<WebhookEventDoc | null> {
    const { _id: key, event: doc } = claim;
    for (let attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt++) {
      try {
        await this.deliveries.insertOne(claim);
        return null;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const owner = await this.deliveries.findOne({ _id: key });
      if (owner === null) continue; // purged meanwhile: claim it afresh
      const earlier = owner.receivedAt < since ? null : await this.eventOf(owner);
      if (earlier !== null) return earlier;
      // expired (or a claim of an older version whose event was never written): take it over
      const res = await this.deliveries.updateOne({ _id: key, eventId: owner.eventId }, { $set: { eventId: doc._id, receivedAt: doc.receivedAt, event: doc } });
      if (res.modifiedCount === 1) return null;
      // someone else took it over first: look again
    }
    throw new TroupeError('STORE_ERROR', `delivery ${key} is contended; try again`, { retryable: true });
  }

  /** The event a live claim stands for, written from the claim when its own accept has not yet. */
  private async eventOf(owner: WebhookDeliveryDoc): Promise<WebhookEventDoc | null> {
    const found = await this.events.findOne({ _id: owner.eventId });
    if (found !== null || owner.event === undefined) return found;
    await this.insertClaimed(owner.event);
    return owner.event;
  }

  /** The event of a claim, written by its accept or by a duplicate that found it missing: whoever is second finds it there. */
  private async insertClaimed(doc: WebhookEventDoc): Promise<void> {
    try {
      await this.events.insertOne(doc);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  }

  async markStarted(eventId: string): Promise<boolean> {
    const res = await this.events.updateOne({ _id: eventId, status: 'pending' }, { $set: { status: 'started' } });
    return res.modifiedCount === 1;
  }

  async markAnnounced(eventId: string): Promise<void> {
    await this.events.updateOne({ _id: eventId }, { $set: { announced: true } });
  }

  async listUnannounced(receivedBefore: string, limit: number): Promise<WebhookEvent[]> {
    const docs = await this.events.find({ announced: { $ne: true }, receivedAt: { $lte: iso(receivedBefore) } }).sort({ receivedAt: 1, _id: 1 }).limit(clampLimit(limit)).toArray();
    return docs.map(toEvent);
  }

  async get(eventId: string): Promise<WebhookEvent | null> {
    const doc = await this.events.findOne({ _id: eventId });
    return doc ? toEvent(doc) : null;
  }

  async listPending(receivedBefore: string, limit: number): Promise<WebhookEvent[]> {
    const docs = await this.events
      .find({ status: 'pending', receivedAt: { $lte: iso(receivedBefore) } })
      .sort({ receivedAt: 1, _id: 1 })
      .limit(clampLimit(limit))
      .toArray();
    return docs.map(toEvent);
  }

  async purgeStarted(before: string): Promise<number> {
    const cutoff = iso(before);
    await this.deliveries.deleteMany({ receivedAt: { $lt: cutoff } });
    return (await this.events.deleteMany({ status: 'started', receivedAt: { $lt: cutoff } })).deletedCount;
  }
}
