import type { Collection, Db } from 'mongodb';
import type { Now, SecretRepo } from '../types.js';
import { COLLECTIONS } from './collections.js';
import type { SecretDoc } from './collections.js';

export class MongoSecrets implements SecretRepo {
  private readonly coll: Collection<SecretDoc>;

  constructor(db: Db, private readonly now: Now) {
    this.coll = db.collection<SecretDoc>(COLLECTIONS.secrets);
  }

  async put(name: string, ciphertext: string): Promise<void> {
    await this.coll.replaceOne({ _id: name }, { ciphertext, updatedAt: this.now().toISOString() }, { upsert: true });
  }

  async get(name: string): Promise<string | null> {
    return (await this.coll.findOne({ _id: name }))?.ciphertext ?? null;
  }

  async list(): Promise<{ name: string; updatedAt: string }[]> {
    // never fetch the ciphertext for a listing
    const docs = await this.coll.find({}, { projection: { ciphertext: 0 } }).sort({ _id: 1 }).toArray();
    return docs.map((d) => ({ name: d._id, updatedAt: d.updatedAt }));
  }

  async delete(name: string): Promise<boolean> {
    return (await this.coll.deleteOne({ _id: name })).deletedCount > 0;
  }
}
