import type { Now, SecretRepo } from '../types.js';
import type { Db } from './db.js';

export class SqliteSecrets implements SecretRepo {
  private readonly upsert;
  private readonly select;
  private readonly selectAll;
  private readonly remove;

  constructor(db: Db, private readonly now: Now) {
    this.upsert = db.prepare(`INSERT INTO secrets (name, ciphertext, updated_at) VALUES (?, ?, ?)
      ON CONFLICT (name) DO UPDATE SET ciphertext = excluded.ciphertext, updated_at = excluded.updated_at`);
    this.select = db.prepare<[string], { ciphertext: string }>('SELECT ciphertext FROM secrets WHERE name = ?');
    // never select the ciphertext for a listing
    this.selectAll = db.prepare<[], { name: string; updated_at: string }>('SELECT name, updated_at FROM secrets ORDER BY name');
    this.remove = db.prepare('DELETE FROM secrets WHERE name = ?');
  }

  async put(name: string, ciphertext: string): Promise<void> {
    this.upsert.run(name, ciphertext, this.now().toISOString());
  }

  async get(name: string): Promise<string | null> {
    return this.select.get(name)?.ciphertext ?? null;
  }

  async list(): Promise<{ name: string; updatedAt: string }[]> {
    return this.selectAll.all().map((r) => ({ name: r.name, updatedAt: r.updated_at }));
  }

  async delete(name: string): Promise<boolean> {
    return this.remove.run(name).changes > 0;
  }
}
