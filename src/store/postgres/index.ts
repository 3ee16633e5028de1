/** The shared store: PostgreSQL through `pg` (node-postgres), a pool per instance. */
import { TroupeError } from '../../errors.js';
import { guarded } from '../shared.js';
import type { Now, Store } from '../types.js';
import { PgChats } from './chats.js';
import { createPool, migrate, openError, Pg, redactUrl } from './db.js';
import type { PgPoolOptions } from './db.js';
import { classifyPgError } from './errors.js';
import { PgExecutions } from './executions.js';
import { PgApiKeys, PgDeployments, PgSecrets } from './keys.js';
import { PgMemories } from './memories.js';
import { PgSchedules } from './schedules.js';
import { PgWebhooks } from './webhooks.js';
import { PgWorkflows } from './workflows.js';
import { PgWaits } from './waits.js';
import { PgApprovals } from './approvals.js';

export interface OpenPostgresOptions extends PgPoolOptions {
  now?: Now;
}

/** `postgres://…` or `postgresql://…` */
export const POSTGRES_URL = /^postgres(ql)?:\/\//;

/** Connects, applies the migrations this database lacks; rejects with STORE_ERROR (naming the URL without its password). */
export async function openPostgresStore(url: string, opts: OpenPostgresOptions = {}): Promise<Store> {
  if (!POSTGRES_URL.test(url)) {
    throw new TroupeError('STORE_ERROR', 'a PostgreSQL URL starts with postgres:// or postgresql://', { retryable: false });
  }
  const pool = createPool(url, opts);
  try {
    await migrate(pool);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw openError(url, err);
  }
  return buildStore(new Pg(pool), url, opts.now ?? (() => new Date()));
}

function buildStore(db: Pg, url: string, now: Now): Store {
  let closed = false;
  return {
    kind: 'postgres',
    workflows: guarded(new PgWorkflows(db, now), 'workflows', classifyPgError),
    deployments: guarded(new PgDeployments(db), 'deployments', classifyPgError),
    apiKeys: guarded(new PgApiKeys(db, now), 'apiKeys', classifyPgError),
    executions: guarded(new PgExecutions(db, now), 'executions', classifyPgError),
    secrets: guarded(new PgSecrets(db, now), 'secrets', classifyPgError),
    webhooks: guarded(new PgWebhooks(db), 'webhooks', classifyPgError),
    schedules: guarded(new PgSchedules(db), 'schedules', classifyPgError),
    chats: guarded(new PgChats(db), 'chats', classifyPgError),
    memories: guarded(new PgMemories(db, now), 'memories', classifyPgError),
    waits: guarded(new PgWaits(db), 'waits', classifyPgError),
    approvals: guarded(new PgApprovals(db), 'approvals', classifyPgError),
    async ping() {
      if (closed) throw new TroupeError('STORE_ERROR', 'PostgreSQL store is closed', { retryable: false });
      try {
        await db.query('SELECT 1');
      } catch (err) {
        throw classifyPgError(err, 'ping') ?? new TroupeError('STORE_ERROR', `PostgreSQL unreachable at ${redactUrl(url)}: ${(err as Error).message}`, { cause: err, retryable: true });
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await db.pool.end();
    },
  };
}
