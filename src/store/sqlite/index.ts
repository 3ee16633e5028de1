/** The embedded store: one SQLite file (WAL) in the data dir. */
import { TroupeError } from '../../errors.js';
import { guarded } from '../shared.js';
import type { Now, Store } from '../types.js';
import { SqliteApiKeys } from './api-keys.js';
import { startCheckpointer } from './checkpointer.js';
import { openDb } from './db.js';
import type { SqliteOptions } from './db.js';
import { SqliteDeployments } from './deployments.js';
import { SqliteExecutions } from './executions.js';
import { SqliteSecrets } from './secrets.js';
import { SqliteWorkflows } from './workflows.js';

export interface OpenSqliteOptions extends SqliteOptions {
  now?: Now;
  /** false: SQLite's own checkpoints in the committing thread (default: a worker thread does them) */
  backgroundCheckpoints?: boolean;
}

/** `path` is a file (created with its schema when missing) or ':memory:'. */
export function openSqliteStore(path: string, opts: OpenSqliteOptions = {}): Store {
  const db = openDb(path, opts);
  const now = opts.now ?? (() => new Date());
  const checkpointer = path === ':memory:' || opts.backgroundCheckpoints === false ? null : startCheckpointer(path);
  // the worker checkpoints now; the WAL file is cut back to this size once it starts over
  if (checkpointer !== null) {
    db.pragma('wal_autocheckpoint = 0');
    db.pragma('journal_size_limit = 67108864');
  }
  let closed = false;
  return {
    kind: 'sqlite',
    workflows: guarded(new SqliteWorkflows(db, now), 'workflows'),
    deployments: guarded(new SqliteDeployments(db), 'deployments'),
    apiKeys: guarded(new SqliteApiKeys(db, now), 'apiKeys'),
    executions: guarded(new SqliteExecutions(db, now), 'executions'),
    secrets: guarded(new SqliteSecrets(db, now), 'secrets'),
    async ping() {
      if (closed || !db.open) throw new TroupeError('STORE_ERROR', 'SQLite store is closed', { retryable: false });
      db.prepare('SELECT 1').get();
    },
    async close() {
      if (closed) return;
      closed = true;
      await checkpointer?.stop();
      db.close();
    },
  };
}
