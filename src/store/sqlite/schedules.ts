import { clampLimit, iso } from '../shared.js';
import { toEntry, toFire, type EntryRow, type FireRow } from '../rows/schedules.js';
import type { ScheduleEntry, ScheduleFire, ScheduleRepo } from '../types.js';
import type { Db } from './db.js';
import type { Writer } from './writer.js';

const UPSERT_BEAT = `INSERT INTO scheduler_heartbeat (id, at) VALUES ('last', ?)
  ON CONFLICT (id) DO UPDATE SET at = excluded.at WHERE excluded.at > at`;

export class SqliteSchedules implements ScheduleRepo {
  private readonly upsert;
  private readonly removeOthers;
  private readonly removeAll;
  private readonly selectAll;
  private readonly selectByWorkflow;
  private readonly insertFire;
  private readonly advance;
  private readonly started;
  private readonly selectClaimed;
  private readonly selectFires;
  private readonly selectLastRun;
  private readonly purge;
  private readonly selectBeat;

  /**
   * `writer`: where the heartbeat goes. Written every second, it went through the service's
   * connection, whose write waited (synchronously, on the event loop) for the writer thread's
   * transactions under load; on the writer it queues behind them instead.
   */
  constructor(private readonly db: Db, private readonly writer: Writer) {
    // a changed cron or zone starts afresh: an occurrence of the new one from before the deploy must not catch up
    this.upsert = db.prepare(`INSERT INTO schedules (workflow_id, trigger_id, version, spec, active_from, last_due_at) VALUES (?, ?, ?, ?, ?, NULL)
      ON CONFLICT (workflow_id, trigger_id) DO UPDATE SET version = excluded.version,
        active_from = CASE WHEN spec = excluded.spec THEN active_from ELSE excluded.active_from END,
        last_due_at = CASE WHEN spec = excluded.spec THEN last_due_at ELSE NULL END,
        spec = excluded.spec`);
    this.removeOthers = db.prepare('DELETE FROM schedules WHERE workflow_id = ? AND trigger_id NOT IN (SELECT value FROM json_each(?))');
    this.removeAll = db.prepare('DELETE FROM schedules WHERE workflow_id = ?');
    this.selectAll = db.prepare<[], EntryRow>('SELECT * FROM schedules ORDER BY workflow_id, trigger_id');
    this.selectByWorkflow = db.prepare<[string], EntryRow>('SELECT * FROM schedules WHERE workflow_id = ? ORDER BY trigger_id');
    this.insertFire = db.prepare(`INSERT INTO schedule_fires (workflow_id, trigger_id, due_at, execution_id, outcome, fired_at)
      VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`);
    this.advance = db.prepare(`UPDATE schedules SET last_due_at = ? WHERE workflow_id = ? AND trigger_id = ?
      AND (last_due_at IS NULL OR last_due_at < ?)`);
    this.started = db.prepare("UPDATE schedule_fires SET outcome = 'started' WHERE workflow_id = ? AND trigger_id = ? AND due_at = ? AND outcome = 'claimed'");
    this.selectClaimed = db.prepare<[string, number], FireRow>(
      "SELECT * FROM schedule_fires WHERE outcome = 'claimed' AND fired_at <= ? ORDER BY fired_at, workflow_id, trigger_id, due_at LIMIT ?",
    );
    this.selectFires = db.prepare<[string, string, number], FireRow>(
      'SELECT * FROM schedule_fires WHERE workflow_id = ? AND trigger_id = ? ORDER BY due_at DESC LIMIT ?',
    );
    this.selectLastRun = db.prepare<[string, string], FireRow>(
      'SELECT * FROM schedule_fires WHERE workflow_id = ? AND trigger_id = ? AND execution_id IS NOT NULL ORDER BY due_at DESC LIMIT 1',
    );
    this.purge = db.prepare(`DELETE FROM schedule_fires AS f WHERE f.due_at < ? AND f.outcome <> 'claimed'
      AND (f.execution_id IS NULL OR EXISTS (SELECT 1 FROM schedule_fires g WHERE g.workflow_id = f.workflow_id
        AND g.trigger_id = f.trigger_id AND g.due_at > f.due_at AND g.execution_id IS NOT NULL))
      AND EXISTS (SELECT 1 FROM schedule_fires h WHERE h.workflow_id = f.workflow_id AND h.trigger_id = f.trigger_id AND h.due_at > f.due_at)`);
    this.selectBeat = db.prepare<[], { at: string }>("SELECT at FROM scheduler_heartbeat WHERE id = 'last'");
  }

  async put(workflowId: string, entries: readonly { triggerId: string; version: number; spec: string }[], activeFrom: string): Promise<void> {
    this.db.transaction(() => {
      this.removeOthers.run(workflowId, JSON.stringify(entries.map((e) => e.triggerId)));
      for (const e of entries) this.upsert.run(workflowId, e.triggerId, e.version, e.spec, iso(activeFrom));
    })();
  }

  async deleteByWorkflow(workflowId: string): Promise<number> {
    return this.removeAll.run(workflowId).changes;
  }

  async list(): Promise<ScheduleEntry[]> {
    return this.selectAll.all().map(toEntry);
  }

  async listByWorkflow(workflowId: string): Promise<ScheduleEntry[]> {
    return this.selectByWorkflow.all(workflowId).map(toEntry);
  }

  async claim(fire: ScheduleFire): Promise<boolean> {
    const dueAt = iso(fire.dueAt);
    return this.db.transaction(() => {
      const won = this.insertFire.run(fire.workflowId, fire.triggerId, dueAt, fire.executionId, fire.outcome, iso(fire.firedAt)).changes > 0;
      if (won) this.advance.run(dueAt, fire.workflowId, fire.triggerId, dueAt);
      return won;
    }).immediate();
  }

  async pass(workflowId: string, triggerId: string, dueAt: string): Promise<void> {
    const at = iso(dueAt);
    this.advance.run(at, workflowId, triggerId, at);
  }

  async markStarted(workflowId: string, triggerId: string, dueAt: string): Promise<boolean> {
    return this.started.run(workflowId, triggerId, iso(dueAt)).changes > 0;
  }

  async listClaimed(firedBefore: string, limit: number): Promise<ScheduleFire[]> {
    return this.selectClaimed.all(iso(firedBefore), clampLimit(limit)).map(toFire);
  }

  async lastFires(workflowId: string, triggerId: string, limit: number): Promise<ScheduleFire[]> {
    return this.selectFires.all(workflowId, triggerId, clampLimit(limit)).map(toFire);
  }

  async lastRun(workflowId: string, triggerId: string): Promise<ScheduleFire | null> {
    const row = this.selectLastRun.get(workflowId, triggerId);
    return row ? toFire(row) : null;
  }

  async purgeFires(before: string): Promise<number> {
    return this.purge.run(iso(before)).changes;
  }

  async heartbeat(): Promise<string | null> {
    return this.selectBeat.get()?.at ?? null;
  }

  async beat(at: string): Promise<void> {
    const [result] = await this.writer.run([[{ sql: UPSERT_BEAT, params: [iso(at)] }]]);
    if (result !== undefined && !('changes' in result)) throw new Error(`scheduler heartbeat not written: ${result.message}`);
  }
}
