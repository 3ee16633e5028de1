import { TroupeError } from '../../errors.js';
import { clampLimit, iso, toJson } from '../shared.js';
import type { WebhookEvent, WebhookRepo, WebhookRoute } from '../types.js';
import type { Db } from './db.js';
import { toEvent, toRoute, type EventRow, type RouteRow } from '../rows/webhooks.js';

export class SqliteWebhooks implements WebhookRepo {
  private readonly insertRoute;
  private readonly removeRoutes;
  private readonly selectRoute;
  private readonly selectDelivery;
  private readonly insertEvent;
  private readonly claimEvent;
  private readonly selectEvent;
  private readonly selectPending;
  private readonly purge;
  private readonly announce;
  private readonly selectUnannounced;

  constructor(private readonly db: Db) {
    this.selectRoute = db.prepare<[string], RouteRow>('SELECT * FROM webhook_routes WHERE path = ?');
    this.insertRoute = db.prepare('INSERT INTO webhook_routes (path, workflow_id, trigger_id) VALUES (?, ?, ?)');
    this.removeRoutes = db.prepare('DELETE FROM webhook_routes WHERE workflow_id = ?');
    this.selectDelivery = db.prepare<[string, string, string, string], EventRow>(
      `SELECT * FROM webhook_events WHERE workflow_id = ? AND trigger_id = ? AND delivery_id = ? AND received_at >= ?
       ORDER BY received_at DESC LIMIT 1`,
    );
    this.insertEvent = db.prepare(
      `INSERT INTO webhook_events (id, workflow_id, trigger_id, version, delivery_id, payload, received_at, status, execution_id, announced)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.claimEvent = db.prepare("UPDATE webhook_events SET status = 'started' WHERE id = ? AND status = 'pending'");
    this.selectEvent = db.prepare<[string], EventRow>('SELECT * FROM webhook_events WHERE id = ?');
    this.selectPending = db.prepare<[string, number], EventRow>(
      "SELECT * FROM webhook_events WHERE status = 'pending' AND received_at <= ? ORDER BY received_at, id LIMIT ?",
    );
    this.announce = db.prepare('UPDATE webhook_events SET announced = 1 WHERE id = ?');
    this.selectUnannounced = db.prepare<[string, number], EventRow>(
      'SELECT * FROM webhook_events WHERE announced = 0 AND received_at <= ? ORDER BY received_at, id LIMIT ?',
    );
    this.purge = db.prepare("DELETE FROM webhook_events WHERE status = 'started' AND received_at < ?");
  }

  async putRoutes(workflowId: string, routes: readonly { path: string; triggerId: string }[]): Promise<void> {
    this.db.transaction(() => {
      for (const r of routes) {
        const owner = this.selectRoute.get(r.path);
        if (owner !== undefined && owner.workflow_id !== workflowId) {
          throw new TroupeError('CONFLICT', `webhook path "${r.path}" is already used by workflow ${owner.workflow_id}`, {
            details: { path: r.path, workflowId: owner.workflow_id },
          });
        }
      }
      this.removeRoutes.run(workflowId);
      for (const r of routes) this.insertRoute.run(r.path, workflowId, r.triggerId);
    })();
  }

  async findRoute(path: string): Promise<WebhookRoute | null> {
    const row = this.selectRoute.get(path);
    return row ? toRoute(row) : null;
  }

  async deleteRoutes(workflowId: string): Promise<number> {
    return this.removeRoutes.run(workflowId).changes;
  }

  async accept(event: WebhookEvent, dedupSince: string): Promise<{ event: WebhookEvent; duplicate: boolean }> {
    // one synchronous transaction: the look-up and the insert cannot interleave with another accept
    return this.db.transaction(() => {
      if (event.deliveryId !== null) {
        const earlier = this.selectDelivery.get(event.workflowId, event.triggerId, event.deliveryId, iso(dedupSince));
        if (earlier !== undefined) return { event: toEvent(earlier), duplicate: true };
      }
      const row: EventRow = {
        id: event.id,
        workflow_id: event.workflowId,
        trigger_id: event.triggerId,
        version: event.version,
        delivery_id: event.deliveryId,
        payload: toJson(event.payload),
        received_at: iso(event.receivedAt),
        status: event.status,
        execution_id: event.executionId,
        announced: event.announced ? 1 : 0,
      };
      this.insertEvent.run(row.id, row.workflow_id, row.trigger_id, row.version, row.delivery_id, row.payload, row.received_at, row.status, row.execution_id, row.announced);
      return { event: toEvent(row), duplicate: false };
    }).immediate();
  }

  async markStarted(eventId: string): Promise<boolean> {
    return this.claimEvent.run(eventId).changes > 0;
  }

  async markAnnounced(eventId: string): Promise<void> {
    this.announce.run(eventId);
  }

  async listUnannounced(receivedBefore: string, limit: number): Promise<WebhookEvent[]> {
    return this.selectUnannounced.all(iso(receivedBefore), clampLimit(limit)).map(toEvent);
  }

  async get(eventId: string): Promise<WebhookEvent | null> {
    const row = this.selectEvent.get(eventId);
    return row ? toEvent(row) : null;
  }

  async listPending(receivedBefore: string, limit: number): Promise<WebhookEvent[]> {
    return this.selectPending.all(iso(receivedBefore), clampLimit(limit)).map(toEvent);
  }

  async purgeStarted(before: string): Promise<number> {
    return this.purge.run(iso(before)).changes;
  }
}
