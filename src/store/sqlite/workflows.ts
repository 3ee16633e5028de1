import type { WorkflowDef } from '../../model/types.js';
import { clampLimit, conflict, decodeCursor, encodeCursor, pageOfRows, toJson, versionCursor } from '../shared.js';
import type { Now, Page, PageOptions, StoredWorkflow, WorkflowRepo, WorkflowVersionInfo } from '../types.js';
import type { Db } from './db.js';
import { CASCADE_TABLES, SELECT_WORKFLOW as SELECT, toStored, type WorkflowRow as Row } from '../rows/workflows.js';

export class SqliteWorkflows implements WorkflowRepo {
  private readonly insertWf;
  private readonly insertVersion;
  private readonly bumpWf;
  private readonly selectCurrent;
  private readonly selectVersion;
  private readonly selectPage;
  private readonly selectVersions;
  private readonly deleteWf;
  private readonly deleteDependents;

  constructor(private readonly db: Db, private readonly now: Now) {
    this.insertWf = db.prepare('INSERT INTO workflows (id, version, created_at, updated_at) VALUES (?, 1, ?, ?) ON CONFLICT (id) DO NOTHING');
    this.insertVersion = db.prepare('INSERT OR REPLACE INTO workflow_versions (workflow_id, version, definition, created_at) VALUES (?, ?, ?, ?)');
    this.bumpWf = db.prepare('UPDATE workflows SET version = version + 1, updated_at = ? WHERE id = ? RETURNING version');
    this.selectCurrent = db.prepare<[string], Row>(`${SELECT} AND v.version = w.version WHERE w.id = ?`);
    this.selectVersion = db.prepare<[string, number], Row>(`${SELECT} WHERE w.id = ? AND v.version = ?`);
    this.selectPage = db.prepare<[string, number], Row>(`${SELECT} AND v.version = w.version WHERE w.id > ? ORDER BY w.id LIMIT ?`);
    this.selectVersions = db.prepare<[string, number, number], { version: number; created_at: string }>(
      'SELECT version, created_at FROM workflow_versions WHERE workflow_id = ? AND version < ? ORDER BY version DESC LIMIT ?',
    );
    this.deleteWf = db.prepare('DELETE FROM workflows WHERE id = ?');
    this.deleteDependents = CASCADE_TABLES.map((t) => db.prepare(`DELETE FROM ${t} WHERE workflow_id = ?`));
  }

  async create(def: WorkflowDef & { id: string }): Promise<StoredWorkflow> {
    const at = this.now().toISOString();
    const id = def.id;
    this.db.transaction(() => {
      if (this.insertWf.run(id, at, at).changes === 0) throw conflict('workflow', id);
      this.insertVersion.run(id, 1, toJson({ ...def, id }), at);
    }).immediate();
    return (await this.get(id)) as StoredWorkflow;
  }

  async get(id: string): Promise<StoredWorkflow | null> {
    const row = this.selectCurrent.get(id);
    return row ? toStored(row) : null;
  }

  async getVersion(id: string, version: number): Promise<StoredWorkflow | null> {
    const row = this.selectVersion.get(id, version);
    return row ? toStored(row) : null;
  }

  async listVersions(id: string, opts: PageOptions): Promise<Page<WorkflowVersionInfo>> {
    const limit = clampLimit(opts.limit);
    const below = opts.cursor ? versionCursor(opts.cursor) : Number.MAX_SAFE_INTEGER;
    const rows = this.selectVersions.all(id, below, limit + 1);
    return pageOfRows(rows, limit, (r) => ({ version: r.version, createdAt: r.created_at }), (v) => [String(v.version)]);
  }

  async list(opts: PageOptions): Promise<Page<StoredWorkflow>> {
    const limit = clampLimit(opts.limit);
    const after = opts.cursor ? (decodeCursor(opts.cursor, 1)[0] as string) : '';
    const rows = this.selectPage.all(after, limit + 1);
    return pageOfRows(rows, limit, toStored, (w) => [w.id]);
  }

  async replace(id: string, def: WorkflowDef): Promise<StoredWorkflow | null> {
    const at = this.now().toISOString();
    const found = this.db.transaction(() => {
      const bumped = this.bumpWf.get(at, id) as { version: number } | undefined;
      if (!bumped) return false;
      this.insertVersion.run(id, bumped.version, toJson({ ...def, id }), at);
      return true;
    }).immediate();
    return found ? this.get(id) : null;
  }

  async delete(id: string): Promise<boolean> {
    return this.db.transaction(() => {
      if (this.deleteWf.run(id).changes === 0) return false;
      for (const stmt of this.deleteDependents) stmt.run(id);
      return true;
    }).immediate();
  }
}
