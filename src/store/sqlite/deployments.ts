import { iso } from '../shared.js';
import type { Deployment, DeploymentRepo } from '../types.js';
import type { Db } from './db.js';
import { toDeployment, type DeploymentRow } from '../rows/keys.js';

export class SqliteDeployments implements DeploymentRepo {
  private readonly upsert;
  private readonly select;
  private readonly remove;

  constructor(db: Db) {
    this.upsert = db.prepare(`INSERT INTO deployments (workflow_id, version, deployed_at, endpoint) VALUES (?, ?, ?, ?)
      ON CONFLICT (workflow_id) DO UPDATE SET version = excluded.version, deployed_at = excluded.deployed_at, endpoint = excluded.endpoint`);
    this.select = db.prepare<[string], DeploymentRow>('SELECT * FROM deployments WHERE workflow_id = ?');
    this.remove = db.prepare('DELETE FROM deployments WHERE workflow_id = ?');
  }

  async put(d: Deployment): Promise<Deployment> {
    const row: DeploymentRow = { workflow_id: d.workflowId, version: d.version, deployed_at: iso(d.deployedAt), endpoint: d.endpoint ?? null };
    this.upsert.run(row.workflow_id, row.version, row.deployed_at, row.endpoint);
    return toDeployment(row);
  }

  async get(workflowId: string): Promise<Deployment | null> {
    const row = this.select.get(workflowId);
    return row ? toDeployment(row) : null;
  }

  async delete(workflowId: string): Promise<boolean> {
    return this.remove.run(workflowId).changes > 0;
  }
}
