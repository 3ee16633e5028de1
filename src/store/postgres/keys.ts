/** Deployments, API keys (prefix and sha256 hash only) and secrets (ciphertext only). */
import { conflict, iso, isoOrNull } from '../shared.js';
import type { ApiKeyRecord, ApiKeyRepo, Deployment, DeploymentRepo, Now, SecretRepo } from '../types.js';
import type { Pg } from './db.js';
import { toDeployment, toKey, type DeploymentRow, type KeyRow } from '../rows/keys.js';

export class PgDeployments implements DeploymentRepo {
  constructor(private readonly db: Pg) {}

  async put(d: Deployment): Promise<Deployment> {
    const row: DeploymentRow = { workflow_id: d.workflowId, version: d.version, deployed_at: iso(d.deployedAt), endpoint: d.endpoint ?? null };
    await this.db.query(`INSERT INTO deployments (workflow_id, version, deployed_at, endpoint) VALUES ($1, $2, $3, $4)
      ON CONFLICT (workflow_id) DO UPDATE SET version = excluded.version, deployed_at = excluded.deployed_at, endpoint = excluded.endpoint`,
    [row.workflow_id, row.version, row.deployed_at, row.endpoint]);
    return toDeployment(row);
  }

  async get(workflowId: string): Promise<Deployment | null> {
    const { rows } = await this.db.query<DeploymentRow>('SELECT * FROM deployments WHERE workflow_id = $1', [workflowId]);
    return rows[0] ? toDeployment(rows[0]) : null;
  }

  async delete(workflowId: string): Promise<boolean> {
    return ((await this.db.query('DELETE FROM deployments WHERE workflow_id = $1', [workflowId])).rowCount ?? 0) > 0;
  }
}

export class PgApiKeys implements ApiKeyRepo {
  constructor(private readonly db: Pg, private readonly now: Now) {}

  async create(rec: ApiKeyRecord): Promise<ApiKeyRecord> {
    const row: KeyRow = {
      id: rec.id, workflow_id: rec.workflowId, prefix: rec.prefix, hash: rec.hash, created_at: iso(rec.createdAt),
      revoked_at: isoOrNull(rec.revokedAt), last_used_at: isoOrNull(rec.lastUsedAt),
    };
    // ON CONFLICT DO NOTHING with no target covers both unique columns (id, hash)
    const inserted = await this.db.query(`INSERT INTO api_keys (id, workflow_id, prefix, hash, created_at, revoked_at, last_used_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
    [row.id, row.workflow_id, row.prefix, row.hash, row.created_at, row.revoked_at, row.last_used_at]);
    if (inserted.rowCount === 0) throw conflict('API key', rec.id);
    return toKey(row);
  }

  async listByWorkflow(workflowId: string): Promise<ApiKeyRecord[]> {
    const { rows } = await this.db.query<KeyRow>('SELECT * FROM api_keys WHERE workflow_id = $1 ORDER BY created_at, id', [workflowId]);
    return rows.map(toKey);
  }

  async findByHash(hash: string): Promise<ApiKeyRecord | null> {
    const { rows } = await this.db.query<KeyRow>('SELECT * FROM api_keys WHERE hash = $1', [hash]);
    return rows[0] ? toKey(rows[0]) : null;
  }

  async revoke(workflowId: string, keyId: string, at?: string): Promise<boolean> {
    const updated = await this.db.query('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE workflow_id = $2 AND id = $3',
      [iso(at ?? this.now().toISOString()), workflowId, keyId]);
    return (updated.rowCount ?? 0) > 0;
  }

  async markUsed(keyId: string, at: string): Promise<void> {
    await this.db.query('UPDATE api_keys SET last_used_at = $1 WHERE id = $2', [iso(at), keyId]);
  }

  async deleteByWorkflow(workflowId: string): Promise<number> {
    return (await this.db.query('DELETE FROM api_keys WHERE workflow_id = $1', [workflowId])).rowCount ?? 0;
  }
}

export class PgSecrets implements SecretRepo {
  constructor(private readonly db: Pg, private readonly now: Now) {}

  async put(name: string, ciphertext: string): Promise<void> {
    await this.db.query(`INSERT INTO secrets (name, ciphertext, updated_at) VALUES ($1, $2, $3)
      ON CONFLICT (name) DO UPDATE SET ciphertext = excluded.ciphertext, updated_at = excluded.updated_at`, [name, ciphertext, this.now().toISOString()]);
  }

  async get(name: string): Promise<string | null> {
    const { rows } = await this.db.query<{ ciphertext: string }>('SELECT ciphertext FROM secrets WHERE name = $1', [name]);
    return rows[0]?.ciphertext ?? null;
  }

  async list(): Promise<{ name: string; updatedAt: string }[]> {
    // never selects the ciphertext for a listing
    const { rows } = await this.db.query<{ name: string; updated_at: string }>('SELECT name, updated_at FROM secrets ORDER BY name');
    return rows.map((r) => ({ name: r.name, updatedAt: r.updated_at }));
  }

  async delete(name: string): Promise<boolean> {
    return ((await this.db.query('DELETE FROM secrets WHERE name = $1', [name])).rowCount ?? 0) > 0;
  }
}
