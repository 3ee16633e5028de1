import { clampLimit, iso } from '../shared.js';
import { toEntry, toFire, type EntryRow, type FireRow } from '../rows/schedules.js';
import type { ScheduleEntry, ScheduleFire, ScheduleRepo } from '../types.js';
import type { Pg } from './db.js';

// a changed cron or zone starts afresh: an occurrence of the new one from before the deploy must not catch up
const UPSERT = `INSERT INTO schedules (workflow_id, trigger_id, version, spec, active_from, last_due_at) VALUES ($1, $2, $3, $4, $5, NULL)
  ON CONFLICT (workflow_id, trigger_id) DO UPDATE SET version = excluded.version,
    active_from = CASE WHEN schedules.spec = excluded.spec THEN schedules.active_from ELSE excluded.active_from END,
    last_due_at = CASE WHEN schedules.spec = excluded.spec THEN schedules.last_due_at ELSE NULL END,
    spec = excluded.spec`;
const ADVANCE = `UPDATE schedules SET last_due_at = $1 WHERE workflow_id = $2 AND trigger_id = $3
  AND (last_due_at IS NULL OR last_due_at < $1)`;
// per schedule, the newest fire and the newest with an execution stay
const PURGE = `DELETE FROM schedule_fires AS f WHERE f.due_at < $1 AND f.outcome <> 'claimed'
  AND (f.execution_id IS NULL OR EXISTS (SELECT 1 FROM schedule_fires g WHERE g.workflow_id = f.workflow_id
    AND g.trigger_id = f.trigger_id AND g.due_at > f.due_at AND g.execution_id IS NOT NULL))
  AND EXISTS (SELECT 1 FROM schedule_fires h WHERE h.workflow_id = f.workflow_id AND h.trigger_id = f.trigger_id AND h.due_at > f.due_at)`;

export class PgSchedules implements ScheduleRepo {
  constructor(private readonly db: Pg) {}

  async put(workflowId: string, entries: readonly { triggerId: string; version: number; spec: string }[], activeFrom: string): Promise<void> {
    const from = iso(activeFrom);
    await this.db.tx(async (q) => {
      await q.query('DELETE FROM schedules WHERE workflow_id = $1 AND NOT (trigger_id = ANY($2::text[]))', [workflowId, entries.map((e) => e.triggerId)]);
      for (const e of entries) await q.query(UPSERT, [workflowId, e.triggerId, e.version, e.spec, from]);
    });
  }

  async deleteByWorkflow(workflowId: string): Promise<number> {
    return (await this.db.query('DELETE FROM schedules WHERE workflow_id = $1', [workflowId])).rowCount ?? 0;
  }

  async list(): Promise<ScheduleEntry[]> {
    return (await this.db.query<EntryRow>('SELECT * FROM schedules ORDER BY workflow_id, trigger_id')).rows.map(toEntry);
  }

  async listByWorkflow(workflowId: string): Promise<ScheduleEntry[]> {
    return (await this.db.query<EntryRow>('SELECT * FROM schedules WHERE workflow_id = $1 ORDER BY trigger_id', [workflowId])).rows.map(toEntry);
  }

  /** The fire's primary key decides: of two instances inserting the same due time, one inserts, the other finds it there. */
  async claim(fire: ScheduleFire): Promise<boolean> {
    const dueAt = iso(fire.dueAt);
    const firedAt = iso(fire.firedAt);
    return this.db.tx(async (q) => {
      const inserted = await q.query(`INSERT INTO schedule_fires (workflow_id, trigger_id, due_at, execution_id, outcome, fired_at)
        VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`, [fire.workflowId, fire.triggerId, dueAt, fire.executionId, fire.outcome, firedAt]);
      const won = (inserted.rowCount ?? 0) > 0;
      if (won) await q.query(ADVANCE, [dueAt, fire.workflowId, fire.triggerId]);
      return won;
    });
  }

  async pass(workflowId: string, triggerId: string, dueAt: string): Promise<void> {
    await this.db.query(ADVANCE, [iso(dueAt), workflowId, triggerId]);
  }

  async markStarted(workflowId: string, triggerId: string, dueAt: string): Promise<boolean> {
    const updated = await this.db.query("UPDATE schedule_fires SET outcome = 'started' WHERE workflow_id = $1 AND trigger_id = $2 AND due_at = $3 AND outcome = 'claimed'",
      [workflowId, triggerId, iso(dueAt)]);
    return (updated.rowCount ?? 0) > 0;
  }

  async listClaimed(firedBefore: string, limit: number): Promise<ScheduleFire[]> {
    const { rows } = await this.db.query<FireRow>(
      "SELECT * FROM schedule_fires WHERE outcome = 'claimed' AND fired_at <= $1 ORDER BY fired_at, workflow_id, trigger_id, due_at LIMIT $2",
      [iso(firedBefore), clampLimit(limit)],
    );
    return rows.map(toFire);
  }

  async lastFires(workflowId: string, triggerId: string, limit: number): Promise<ScheduleFire[]> {
    const { rows } = await this.db.query<FireRow>('SELECT * FROM schedule_fires WHERE workflow_id = $1 AND trigger_id = $2 ORDER BY due_at DESC LIMIT $3',
      [workflowId, triggerId, clampLimit(limit)]);
    return rows.map(toFire);
  }

  async lastRun(workflowId: string, triggerId: string): Promise<ScheduleFire | null> {
    const { rows } = await this.db.query<FireRow>(
      'SELECT * FROM schedule_fires WHERE workflow_id = $1 AND trigger_id = $2 AND execution_id IS NOT NULL ORDER BY due_at DESC LIMIT 1',
      [workflowId, triggerId],
    );
    return rows[0] ? toFire(rows[0]) : null;
  }

  async purgeFires(before: string): Promise<number> {
    return (await this.db.query(PURGE, [iso(before)])).rowCount ?? 0;
  }

  async heartbeat(): Promise<string | null> {
    return (await this.db.query<{ at: string }>("SELECT at FROM scheduler_heartbeat WHERE id = 'last'")).rows[0]?.at ?? null;
  }

  async beat(at: string): Promise<void> {
    await this.db.query(`INSERT INTO scheduler_heartbeat (id, at) VALUES ('last', $1)
      ON CONFLICT (id) DO UPDATE SET at = excluded.at WHERE excluded.at > scheduler_heartbeat.at`, [iso(at)]);
  }
}
