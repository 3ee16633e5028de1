/** Opening the SQLite file: pragmas and migrations. */
import Database from 'better-sqlite3';
import { TroupeError } from '../../errors.js';
import { ownerOnlyFile } from '../data-dir.js';
import { MIGRATIONS } from './schema.js';

export type Db = Database.Database;

export interface SqliteOptions {
  /**
   * NORMAL (default): in WAL mode a commit survives a crash or SIGKILL of the process; only an
   * OS crash or power loss can lose the last few commits. FULL also survives power loss, at
   * the cost of an fsync per commit.
   */
  synchronous?: 'NORMAL' | 'FULL';
}

/** What every connection to the file sets (the service's, and the writer thread's). */
export function connectionPragmas(synchronous: 'NORMAL' | 'FULL'): string[] {
  return [
    `synchronous = ${synchronous}`,
    // another connection (the writer thread, `troupe deploy` on the same data dir) may hold the write lock
    'busy_timeout = 5000',
    // once the WAL starts over, its file is cut back to this size rather than staying at its peak
    'journal_size_limit = 67108864',
  ];
}

export function openDb(path: string, opts: SqliteOptions = {}): Db {
  let db: Db;
  ownerOnlyFile(path);
  try {
    db = new Database(path);
  } catch (err) {
    throw new TroupeError('STORE_ERROR', `cannot open SQLite database ${path}: ${(err as Error).message}`, { cause: err });
  }
  try {
    incrementalVacuum(db);
    db.pragma('journal_mode = WAL');
    for (const pragma of connectionPragmas(opts.synchronous ?? 'NORMAL')) db.pragma(pragma);
    migrate(db);
    return db;
  } catch (err) {
    db.close();
    throw err instanceof TroupeError ? err : new TroupeError('STORE_ERROR', `cannot prepare SQLite database ${path}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Retention deletes old executions; with auto_vacuum INCREMENTAL their pages can be handed back
 * to the file system (`PRAGMA incremental_vacuum` after each purge) instead of staying in the
 * file as free pages. A new file takes the mode before its first table; a file made before it
 * needs one full VACUUM to switch, once (it rewrites the file: seconds for a large database).
 */
function incrementalVacuum(db: Db): void {
  const INCREMENTAL = 2;
  if (db.pragma('auto_vacuum', { simple: true }) === INCREMENTAL) return;
  db.pragma('auto_vacuum = INCREMENTAL');
  const tables = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number };
  if (tables.n === 0) return;
  try {
    db.exec('VACUUM');
  } catch {
    // another connection is reading (busy): the switch waits for a later open; until then the
    // purge still deletes, and the freed pages are reused rather than handed back
  }
}

function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new TroupeError('STORE_ERROR', `database schema version ${current} is newer than this Troupe (${MIGRATIONS.length})`);
  }
  for (let v = current; v < MIGRATIONS.length; v++) {
    const sql = MIGRATIONS[v] as string;
    db.transaction(() => {
      db.exec(sql);
      db.pragma(`user_version = ${v + 1}`);
    }).immediate();
  }
}
