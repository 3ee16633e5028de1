/**
 * Adapter selection, for src/main.ts and test setup only (actors and blocks depend on the
 * port in ./types.ts): MONGODB_URL set → MongoDB, otherwise the SQLite file in the data dir.
 */
import { join } from 'node:path';
import { ensureDataDir } from './data-dir.js';
import { openMongoStore } from './mongo/index.js';
import { openSqliteStore } from './sqlite/index.js';
import type { Store } from './types.js';

export const SQLITE_FILE = 'troupe.db';

export interface OpenStoreOptions {
  mongodbUrl?: string | undefined;
  dataDir: string;
  /** what goes wrong off the request path (a failed WAL checkpoint) */
  onWarning?: (message: string) => void;
}

export async function openStore(opts: OpenStoreOptions): Promise<Store> {
  if (opts.mongodbUrl) return openMongoStore(opts.mongodbUrl);
  ensureDataDir(opts.dataDir);
  return openSqliteStore(join(opts.dataDir, SQLITE_FILE), opts.onWarning ? { onWarning: opts.onWarning } : {});
}
