/** The distributed store: MongoDB through the official driver. */
import { MongoClient } from 'mongodb';
import type { Db } from 'mongodb';
import { TroupeError } from '../../errors.js';
import { guarded } from '../shared.js';
import type { Now, Store } from '../types.js';
import { MongoApiKeys } from './api-keys.js';
import { MongoChats } from './chats.js';
import { backfillTriggerIndexes } from './backfill.js';
import { ensureCollections } from './collections.js';
import { classifyMongoError } from './errors.js';
import { MongoDeployments } from './deployments.js';
import { MongoExecutions } from './executions.js';
import { MongoMemories } from './memories.js';
import { MongoSchedules } from './schedules.js';
import { MongoSecrets } from './secrets.js';
import { supportsTransactions, Txn } from './txn.js';
import { MongoWebhooks } from './webhooks.js';
import { MongoWorkflows } from './workflows.js';
import { MongoWaits } from './waits.js';
import { MongoApprovals } from './approvals.js';

export interface OpenMongoOptions {
  now?: Now;
  /** how long to wait for a server at start and per operation (default 10 s) */
  serverSelectionTimeoutMS?: number;
}

export const DEFAULT_MONGO_DB = 'troupe';

/** The database named in the URL path, if any (`mongodb://h1,h2/name?...`). */
export function dbNameFromUrl(url: string): string | undefined {
  const m = /^mongodb(?:\+srv)?:\/\/[^/]*\/([^?]+)/.exec(url);
  return m?.[1] ? decodeURIComponent(m[1]) : undefined;
}

/** Connects, creates collections and indexes, detects transaction support; rejects with STORE_ERROR. */
export async function openMongoStore(url: string, dbName?: string, opts: OpenMongoOptions = {}): Promise<Store> {
  let client: MongoClient | undefined;
  try {
    client = new MongoClient(url, { serverSelectionTimeoutMS: opts.serverSelectionTimeoutMS ?? 10_000 });
    await client.connect();
    const db = client.db(dbName ?? dbNameFromUrl(url) ?? DEFAULT_MONGO_DB);
    const created = await ensureCollections(db);
    await backfillTriggerIndexes(db, created);
    const txn = new Txn(client, await supportsTransactions(db));
    return buildStore(client, db, txn, opts.now ?? (() => new Date()));
  } catch (err) {
    await client?.close().catch(() => undefined);
    throw new TroupeError('STORE_ERROR', `cannot open MongoDB store: ${(err as Error).message}`, { cause: err, retryable: true });
  }
}

function buildStore(client: MongoClient, db: Db, txn: Txn, now: Now): Store {
  return {
    kind: 'mongodb',
    workflows: guarded(new MongoWorkflows(db, txn, now), 'workflows', classifyMongoError),
    deployments: guarded(new MongoDeployments(db), 'deployments', classifyMongoError),
    apiKeys: guarded(new MongoApiKeys(db, now), 'apiKeys', classifyMongoError),
    executions: guarded(new MongoExecutions(db, txn, now), 'executions', classifyMongoError),
    secrets: guarded(new MongoSecrets(db, now), 'secrets', classifyMongoError),
    webhooks: guarded(new MongoWebhooks(db), 'webhooks', classifyMongoError),
    schedules: guarded(new MongoSchedules(db), 'schedules', classifyMongoError),
    chats: guarded(new MongoChats(db), 'chats', classifyMongoError),
    memories: guarded(new MongoMemories(db, now), 'memories', classifyMongoError),
    waits: guarded(new MongoWaits(db), 'waits', classifyMongoError),
    approvals: guarded(new MongoApprovals(db), 'approvals', classifyMongoError),
    async ping() {
      try {
        await db.command({ ping: 1 });
      } catch (err) {
        throw new TroupeError('STORE_ERROR', `MongoDB unreachable: ${(err as Error).message}`, { cause: err, retryable: true });
      }
    },
    close: () => client.close(),
  };
}
