/** The embedded store: one SQLite file (WAL) in the data dir. */
import { TroupeError } from '../../errors.js';
import { guarded } from '../shared.js';
import type { Now, Store } from '../types.js';
import { SqliteApiKeys } from './api-keys.js';
import { SqliteChats } from './chats.js';
import { openDb } from './db.js';
import type { SqliteOptions } from './db.js';
import { SqliteDeployments } from './deployments.js';
import { SqliteExecutions } from './executions.js';
import { SqliteMemories } from './memories.js';
import { SqliteSchedules } from './schedules.js';
import { SqliteSecrets } from './secrets.js';
import { SqliteWebhooks } from './webhooks.js';
import { SqliteWorkflows } from './workflows.js';
import { inlineWriter, ThreadWriter } from './writer.js';
import { SqliteWaits } from './waits.js';
import { SqliteApprovals } from './approvals.js';

export interface OpenSqliteOptions extends SqliteOptions {
  now?: Now;
  /** false: execution writes on the calling thread (default for a file: a writer thread; see writer.ts) */
  writerThread?: boolean;
  /** told when the writer thread could not checkpoint the WAL */
  onWarning?: (message: string) => void;
}

/** `path` is a file (created with its schema when missing) or ':memory:'. */
export function openSqliteStore(path: string, opts: OpenSqliteOptions = {}): Store {
  const db = openDb(path, opts);
  const now = opts.now ?? (() => new Date());
  const threaded = path !== ':memory:' && opts.writerThread !== false;
  const writer = threaded
    ? new ThreadWriter(path, { synchronous: opts.synchronous ?? 'NORMAL', ...(opts.onWarning ? { onWarning: opts.onWarning } : {}) })
    : inlineWriter(db);
  let closed = false;
  return {
    kind: 'sqlite',
    workflows: guarded(new SqliteWorkflows(db, now), 'workflows'),
    deployments: guarded(new SqliteDeployments(db), 'deployments'),
    apiKeys: guarded(new SqliteApiKeys(db, now), 'apiKeys'),
    executions: guarded(new SqliteExecutions(db, now, writer), 'executions'),
    secrets: guarded(new SqliteSecrets(db, now), 'secrets'),
    webhooks: guarded(new SqliteWebhooks(db), 'webhooks'),
    schedules: guarded(new SqliteSchedules(db, writer), 'schedules'),
    chats: guarded(new SqliteChats(db), 'chats'),
    memories: guarded(new SqliteMemories(db, now), 'memories'),
    waits: guarded(new SqliteWaits(db), 'waits'),
    approvals: guarded(new SqliteApprovals(db), 'approvals'),
    async ping() {
      if (closed || !db.open) throw new TroupeError('STORE_ERROR', 'SQLite store is closed', { retryable: false });
      db.prepare('SELECT 1').get();
    },
    async close() {
      if (closed) return;
      closed = true;
      await writer.stop();
      db.close();
    },
  };
}
