/**
 * Webhook routes, events and delivery ids on MongoDB. Accept claims the delivery id first and
 * writes the event second, so a duplicate never exists even for a moment (a sweep could start
 * it). A crash between the two leaves a claim pointing at no event: the provider's retry takes
 * that claim over, so nothing accepted is lost and nothing runs twice.
 */
import type { Collection, Db } from 'mongodb';
import { TroupeError } from '../../errors.js';
import { clampLimit, fromJson, iso, toJson } from '../shared.js';
import type { WebhookEvent, WebhookEventStatus, WebhookRepo, WebhookRoute } from '../types.js';
import { COLLECTIONS, isDuplicateKey } from './collections.js';
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
    for (const r of routes) await this.putRoute(workflowId, r);
    await this.routes.deleteMany({ workflowId, _id: { $nin: paths } });
  }

  private async putRoute(workflowId: string, r: { path: string; triggerId: string }): Promise<void> {
    try {
      // inserts only when no route has this path: another workflow's is a duplicate key
      await this.routes.updateOne({ _id: r.path, workflowId }, { $set: { triggerId: r.triggerId } }, { upsert: true });
      return;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    const owner = await this.routes.findOne({ _id: r.path });
    // the same workflow deployed twice at once: both upserts inserted, one lost the race
    if (owner?.workflowId === workflowId) {
      await this.routes.updateOne({ _id: r.path, workflowId }, { $set: { triggerId: r.triggerId } });
      return;
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
    const doc: WebhookEventDoc = {
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
    if (event.deliveryId !== null) {
      const earlier = await this.claimDelivery(event, event.deliveryId, iso(dedupSince));
      if (earlier !== null) return { event: toEvent(earlier), duplicate: true };
    }
    await this.events.insertOne(doc);
    return { event: toEvent(doc), duplicate: false };
  }

  /** null when this event now owns the delivery id; else the earlier event that does */
  private async claimDelivery(event: WebhookEvent, deliveryId: string, since: string): Promise<WebhookEventDoc | null> {
    const key = deliveryKey(event, deliveryId);
    const receivedAt = iso(event.receivedAt);
    try {
      await this.deliveries.insertOne({ _id: key, workflowId: event.workflowId, eventId: event.id, receivedAt });
      return null;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    const owner = await this.deliveries.findOne({ _id: key });
    if (owner === null) return this.claimDelivery(event, deliveryId, since); // purged meanwhile
    const earlier = owner.receivedAt < since ? null : await this.events.findOne({ _id: owner.eventId });
    if (earlier !== null) return earlier;
    // expired, or its event was never written (a crash between the two writes): take it over
    const res = await this.deliveries.updateOne({ _id: key, eventId: owner.eventId }, { $set: { eventId: event.id, receivedAt } });
    if (res.modifiedCount === 1) return null;
    return this.claimDelivery(event, deliveryId, since); // someone else took it over first
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
