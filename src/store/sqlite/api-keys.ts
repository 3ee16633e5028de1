import { conflict, iso, isoOrNull } from '../shared.js';
import type { ApiKeyRecord, ApiKeyRepo, Now } from '../types.js';
import type { Db } from './db.js';
import { toKey, type KeyRow } from '../rows/keys.js';

export class SqliteApiKeys implements ApiKeyRepo {
  private readonly insert;
  private readonly byWorkflow;
  private readonly byHash;
  private readonly revokeStmt;
  private readonly touch;
  private readonly removeAll;

  constructor(db: Db, private readonly now: Now) {
    this.insert = db.prepare(`INSERT INTO api_keys (id, workflow_id, prefix, hash, created_at, revoked_at, last_used_at)
      VALUES (@id, @workflow_id, @prefix, @hash, @created_at, @revoked_at, @last_used_at) ON CONFLICT DO NOTHING`);
    this.byWorkflow = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE workflow_id = ? ORDER BY created_at, id');
    this.byHash = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE hash = ?');
    this.revokeStmt = db.prepare('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE workflow_id = ? AND id = ?');
    this.touch = db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?');
    this.removeAll = db.prepare('DELETE FROM api_keys WHERE workflow_id = ?');
  }

  async create(rec: ApiKeyRecord): Promise<ApiKeyRecord> {
    const row: KeyRow = {
      id: rec.id, workflow_id: rec.workflowId, prefix: rec.prefix, hash: rec.hash, created_at: iso(rec.createdAt),
      revoked_at: isoOrNull(rec.revokedAt), last_used_at: isoOrNull(rec.lastUsedAt),
    };
    // ON CONFLICT DO NOTHING covers both unique columns (id, hash): either is a conflict
    if (this.insert.run(row).changes === 0) throw conflict('API key', rec.id);
    return toKey(row);
  }

  async listByWorkflow(workflowId: string): Promise<ApiKeyRecord[]> {
    return this.byWorkflow.all(workflowId).map(toKey);
  }

  async findByHash(hash: string): Promise<ApiKeyRecord | null> {
    const row = this.byHash.get(hash);
    return row ? toKey(row) : null;
  }

  async revoke(workflowId: string, keyId: string, at?: string): Promise<boolean> {
    return this.revokeStmt.run(iso(at ?? this.now().toISOString()), workflowId, keyId).changes > 0;
  }

  async markUsed(keyId: string, at: string): Promise<void> {
    this.touch.run(iso(at), keyId);
  }

  async deleteByWorkflow(workflowId: string): Promise<number> {
    return this.removeAll.run(workflowId).changes;
  }
}
