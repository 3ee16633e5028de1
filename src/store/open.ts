/**
 * Adapter selection, for src/main.ts and test setup only (actors and blocks depend on the
 * port in ./types.ts): DATABASE_URL set → PostgreSQL, MONGODB_URL set → MongoDB (config/load.ts
 * refuses both at once), otherwise the SQLite file in the data dir.
 */
import { join } from 'node:path';
import { TroupeError } from '../errors.js';
import { ensureDataDir } from './data-dir.js';
import { openSqliteStore } from './sqlite/index.js';
import type { Store } from './types.js';

export const SQLITE_FILE = 'troupe.db';

export interface OpenStoreOptions {
  mongodbUrl?: string | undefined;
  databaseUrl?: string | undefined;
  dataDir: string;
  /** what goes wrong off the request path (a failed WAL checkpoint, a dropped PostgreSQL connection) */
  onWarning?: (message: string) => void;
}

/** Which store the options select: the variable a start-up failure names. */
export function storeVariable(opts: Pick<OpenStoreOptions, 'mongodbUrl' | 'databaseUrl'>): 'DATABASE_URL' | 'MONGODB_URL' | 'TROUPE_DATA_DIR' {
  if (opts.databaseUrl) return 'DATABASE_URL';
  return opts.mongodbUrl ? 'MONGODB_URL' : 'TROUPE_DATA_DIR';
}

export async function openStore(opts: OpenStoreOptions): Promise<Store> {
  if (opts.databaseUrl && opts.mongodbUrl) {
    throw new TroupeError('INVALID_CONFIG', 'DATABASE_URL and MONGODB_URL are both set: the service uses one store, unset one of them');
  }
  // the drivers are loaded only when selected: importing mongodb (its BSON buffer) and pg cost
  // the embedded service about 36 MiB of RSS for code it never runs
  if (opts.databaseUrl) {
    const { openPostgresStore } = await import('./postgres/index.js');
    return openPostgresStore(opts.databaseUrl, opts.onWarning ? { onWarning: opts.onWarning } : {});
  }
  if (opts.mongodbUrl) {
    const { openMongoStore } = await import('./mongo/index.js');
    return openMongoStore(opts.mongodbUrl);
  }
  ensureDataDir(opts.dataDir);
  return openSqliteStore(join(opts.dataDir, SQLITE_FILE), opts.onWarning ? { onWarning: opts.onWarning } : {});
}
