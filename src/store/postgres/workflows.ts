import type { WorkflowDef } from '../../model/types.js';
import { clampLimit, conflict, decodeCursor, encodeCursor, pageOfRows, toJson, versionCursor } from '../shared.js';
import type { Now, Page, PageOptions, StoredWorkflow, WorkflowRepo, WorkflowVersionInfo } from '../types.js';
import type { Pg } from './db.js';
import { CASCADE_TABLES, SELECT_WORKFLOW as SELECT, toStored, type WorkflowRow as Row } from '../rows/workflows.js';

export class PgWorkflows implements WorkflowRepo {
  constructor(private readonly db: Pg, private readonly now: Now) {}

  async create(def: WorkflowDef & { id: string }): Promise<StoredWorkflow> {
    const at = this.now().toISOString();
    const id = def.id;
    const definition = toJson({ ...def, id });
    await this.db.tx(async (q) => {
      const inserted = await q.query('INSERT INTO workflows (id, version, created_at, updated_at) VALUES ($1, 1, $2, $2) ON CONFLICT (id) DO NOTHING', [id, at]);
      if (inserted.rowCount === 0) throw conflict('workflow', id);
      // a workflow deleted and created again starts at version 1: no version of the old one is left
      await q.query('INSERT INTO workflow_versions (workflow_id, version, definition, created_at) VALUES ($1, 1, $2, $3)', [id, definition, at]);
    });
    return (await this.get(id)) as StoredWorkflow;
  }

  async get(id: string): Promise<StoredWorkflow | null> {
    const { rows } = await this.db.query<Row>(`${SELECT} AND v.version = w.version WHERE w.id = $1`, [id]);
    return rows[0] ? toStored(rows[0]) : null;
  }

  async getVersion(id: string, version: number): Promise<StoredWorkflow | null> {
    const { rows } = await this.db.query<Row>(`${SELECT} WHERE w.id = $1 AND v.version = $2`, [id, version]);
    return rows[0] ? toStored(rows[0]) : null;
  }

  /** newest first; the primary key (workflow_id, version) serves it */
  async listVersions(id: string, opts: PageOptions): Promise<Page<WorkflowVersionInfo>> {
    const limit = clampLimit(opts.limit);
    const below = opts.cursor ? versionCursor(opts.cursor) : Number.MAX_SAFE_INTEGER;
    const { rows } = await this.db.query<{ version: number; created_at: string }>(
      'SELECT version, created_at FROM workflow_versions WHERE workflow_id = $1 AND version < $2::bigint ORDER BY version DESC LIMIT $3',
      [id, below, limit + 1],
    );
    return pageOfRows(rows, limit, (r) => ({ version: r.version, createdAt: r.created_at }), (v) => [String(v.version)]);
  }

  async list(opts: PageOptions): Promise<Page<StoredWorkflow>> {
    const limit = clampLimit(opts.limit);
    const after = opts.cursor ? (decodeCursor(opts.cursor, 1)[0] as string) : '';
    const { rows } = await this.db.query<Row>(`${SELECT} AND v.version = w.version WHERE w.id > $1 ORDER BY w.id LIMIT $2`, [after, limit + 1]);
    return pageOfRows(rows, limit, toStored, (w) => [w.id]);
  }

  async replace(id: string, def: WorkflowDef): Promise<StoredWorkflow | null> {
    const at = this.now().toISOString();
    const definition = toJson({ ...def, id });
    // the UPDATE locks the workflow row: concurrent replaces take versions one after the other
    const found = await this.db.tx(async (q) => {
      const bumped = await q.query<{ version: number }>('UPDATE workflows SET version = version + 1, updated_at = $1 WHERE id = $2 RETURNING version', [at, id]);
      const version = bumped.rows[0]?.version;
      if (version === undefined) return false;
      await q.query('INSERT INTO workflow_versions (workflow_id, version, definition, created_at) VALUES ($1, $2, $3, $4)', [id, version, definition, at]);
      return true;
    });
    return found ? this.get(id) : null;
  }

  async delete(id: string): Promise<boolean> {
    return this.db.tx(async (q) => {
      const removed = await q.query('DELETE FROM workflows WHERE id = $1', [id]);
      if (removed.rowCount === 0) return false;
      for (const table of CASCADE_TABLES) await q.query(`DELETE FROM ${table} WHERE workflow_id = $1`, [id]);
      return true;
    });
  }
}
