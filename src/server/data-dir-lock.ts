/**
 * One `troupe serve` per SQLite data dir. A second service on the same store would take the
 * first one's running executions for orphans at its start and resume them a second time, and
 * both would fire the same schedules; so the second one refuses to start instead.
 *
 * The lock is an SQLite file of its own held in exclusive locking mode: the operating system
 * drops the lock with the process, so a service killed with SIGKILL leaves no stale lock behind
 * (a pid file would need guessing whether its pid still means the same process). `troupe
 * deploy`, `troupe run` and the store's own connections never touch this file.
 */
import { ensureDataDir, ownerOnlyFile } from '../store/data-dir.js';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { TroupeError } from '../errors.js';

export const LOCK_FILE = 'serve.lock';

export interface DataDirLock {
  /** idempotent */
  release(): void;
}

export function lockDataDir(dataDir: string): DataDirLock {
  ensureDataDir(dataDir);
  const path = join(dataDir, LOCK_FILE);
  ownerOnlyFile(path);
  const db = new Database(path, { timeout: 0 });
  try {
    db.pragma('journal_mode = MEMORY'); // no journal file beside the lock: nothing here needs a rollback on disk
    db.pragma('locking_mode = EXCLUSIVE');
    // the first write takes the exclusive lock; in this mode it is kept until the connection closes
    db.exec('BEGIN EXCLUSIVE');
    db.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL, since TEXT NOT NULL)');
    db.exec('DELETE FROM holder');
    db.prepare('INSERT INTO holder (pid, since) VALUES (?, ?)').run(process.pid, new Date().toISOString());
    db.exec('COMMIT');
  } catch (err) {
    db.close();
    if (!isBusy(err)) throw err;
    throw new TroupeError(
      'CONFLICT',
      `the data dir ${dataDir} is in use by another troupe serve: its SQLite store belongs to one service at a time `
        + '(stop that one, or give this one another TROUPE_DATA_DIR; several instances share a PostgreSQL store, DATABASE_URL, or a MongoDB one)',
      { details: { dataDir } },
    );
  }
  return {
    release: () => {
      if (db.open) db.close();
    },
  };
}

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
}
