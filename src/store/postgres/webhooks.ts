import { TroupeError } from '../../errors.js';
import { clampLimit, iso, toJson } from '../shared.js';
import type { WebhookEvent, WebhookRepo, WebhookRoute } from '../types.js';
import type { Pg } from './db.js';
import { toEvent, toRoute, type EventRow, type RouteRow } from '../rows/webhooks.js';

export class PgWebhooks implements WebhookRepo {
  constructor(private readonly db: Pg) {}

  /**
   * An insert that takes a path only when it is free or already this workflow's: a deploy racing
   * another for the same path waits on the other's row, then finds it taken, and is refused.
   */
  async putRoutes(workflowId: string, routes: readonly { path: string; triggerId: string }[]): Promise<void> {
    await this.db.tx(async (q) => {
      await q.query('DELETE FROM webhook_routes WHERE workflow_id = $1', [workflowId]);
      for (const r of routes) {
        const taken = await q.query(`INSERT INTO webhook_routes (path, workflow_id, trigger_id) VALUES ($1, $2, $3)
          ON CONFLICT (path) DO UPDATE SET trigger_id = excluded.trigger_id WHERE webhook_routes.workflow_id = excluded.workflow_id`, [r.path, workflowId, r.triggerId]);
        if (taken.rowCount === 0) {
          const owner = await q.query<{ workflow_id: string }>('SELECT workflow_id FROM webhook_routes WHERE path = $1', [r.path]);
          const holder = owner.rows[0]?.workflow_id ?? null;
          throw new TroupeError('CONFLICT', `webhook path "${r.path}" is already used by workflow ${holder}`, { details: { path: r.path, workflowId: holder } });
        }
      }
    });
  }

  async findRoute(path: string): Promise<WebhookRoute | null> {
    const { rows } = await this.db.query<RouteRow>('SELECT * FROM webhook_routes WHERE path = $1', [path]);
    const row = rows[0];
    return row ? toRoute(row) : null;
  }

  async deleteRoutes(workflowId: string): Promise<number> {
    return (await this.db.query('DELETE FROM webhook_routes WHERE workflow_id = $1', [workflowId])).rowCount ?? 0;
  }

  /**
   * Look-up and insert under a transaction-scoped advisory lock on the delivery: two instances
   * accepting the same delivery at once take turns, and the second finds the first's event.
   */
  async accept(event: WebhookEvent, dedupSince: string): Promise<{ event: WebhookEvent; duplicate: boolean }> {
    const row: EventRow = {
      id: event.id, workflow_id: event.workflowId, trigger_id: event.triggerId, version: event.version, delivery_id: event.deliveryId,
      payload: toJson(event.payload), received_at: iso(event.receivedAt), status: event.status, execution_id: event.executionId,
      announced: event.announced,
    };
    const since = iso(dedupSince);
    return this.db.tx(async (q) => {
      if (row.delivery_id !== null) {
        const key = JSON.stringify(['webhook-delivery', row.workflow_id, row.trigger_id, row.delivery_id]);
        await q.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [key]);
        const earlier = await q.query<EventRow>(`SELECT * FROM webhook_events WHERE workflow_id = $1 AND trigger_id = $2 AND delivery_id = $3
          AND received_at >= $4 ORDER BY received_at DESC LIMIT 1`, [row.workflow_id, row.trigger_id, row.delivery_id, since]);
        if (earlier.rows[0] !== undefined) return { event: toEvent(earlier.rows[0]), duplicate: true };
      }
      await q.query(`INSERT INTO webhook_events (id, workflow_id, trigger_id, version, delivery_id, payload, received_at, status, execution_id, announced)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [row.id, row.workflow_id, row.trigger_id, row.version, row.delivery_id, row.payload, row.received_at, row.status, row.execution_id, row.announced]);
      return { event: toEvent(row), duplicate: false };
    });
  }

  async markStarted(eventId: string): Promise<boolean> {
    return ((await this.db.query("UPDATE webhook_events SET status = 'started' WHERE id = $1 AND status = 'pending'", [eventId])).rowCount ?? 0) > 0;
  }

  async markAnnounced(eventId: string): Promise<void> {
    await this.db.query('UPDATE webhook_events SET announced = true WHERE id = $1', [eventId]);
  }

  async listUnannounced(receivedBefore: string, limit: number): Promise<WebhookEvent[]> {
    const { rows } = await this.db.query<EventRow>('SELECT * FROM webhook_events WHERE announced = false AND received_at <= $1 ORDER BY received_at, id LIMIT $2',
      [iso(receivedBefore), clampLimit(limit)]);
    return rows.map(toEvent);
  }

  async get(eventId: string): Promise<WebhookEvent | null> {
    const { rows } = await this.db.query<EventRow>('SELECT * FROM webhook_events WHERE id = $1', [eventId]);
    return rows[0] ? toEvent(rows[0]) : null;
  }

  async listPending(receivedBefore: string, limit: number): Promise<WebhookEvent[]> {
    const { rows } = await this.db.query<EventRow>("SELECT * FROM webhook_events WHERE status = 'pending' AND received_at <= $1 ORDER BY received_at, id LIMIT $2",
      [iso(receivedBefore), clampLimit(limit)]);
    return rows.map(toEvent);
  }

  async purgeStarted(before: string): Promise<number> {
    return (await this.db.query("DELETE FROM webhook_events WHERE status = 'started' AND received_at < $1", [iso(before)])).rowCount ?? 0;
  }
}
