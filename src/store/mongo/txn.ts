/**
 * Multi-document transactions need a replica set or a sharded cluster. On a standalone server
 * the same writes run in order without one: every write is an idempotent upsert or a
 * conditional update, so an interrupted sequence is completed by retrying it.
 */
import type { ClientSession, Db, MongoClient } from 'mongodb';

export class Txn {
  constructor(private readonly client: MongoClient, readonly supported: boolean) {}

  async run<T>(fn: (session: ClientSession | undefined) => Promise<T>): Promise<T> {
    if (!this.supported) return fn(undefined);
    return this.client.withSession(async (session) => {
      let result: T | undefined;
      // the driver may call the callback again on a transient error: fn only reads and writes
      await session.withTransaction(async () => {
        result = await fn(session);
      });
      return result as T;
    });
  }
}

export async function supportsTransactions(db: Db): Promise<boolean> {
  const hello = await db.admin().command({ hello: 1 });
  return typeof hello.setName === 'string' || hello.msg === 'isdbgrid';
}
