/** The data dir (TROUPE_DATA_DIR): the SQLite store, the lock and the generated keys live there. */
import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { TroupeError } from '../errors.js';

/**
 * Creates the data dir (mode 0700) with its missing parents, one level at a time: a path that
 * cannot be one (under /sys, a file on the way) is refused naming TROUPE_DATA_DIR, and one
 * under /proc, where Node's recursive mkdir never returns, fails at once.
 */
export function ensureDataDir(dir: string): void {
  const missing: string[] = [];
  let at = resolve(dir);
  for (;;) {
    const kind = kindOf(at);
    if (kind === 'dir') break;
    if (kind === 'other') throw badDataDir(dir, `${at} exists and is not a directory`);
    missing.unshift(at);
    const parent = dirname(at);
    if (parent === at) break;
    at = parent;
  }
  for (const path of missing) {
    try {
      mkdirSync(path, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw badDataDir(dir, (err as Error).message, err);
    }
  }
}

function kindOf(path: string): 'dir' | 'other' | 'missing' {
  try {
    return statSync(path).isDirectory() ? 'dir' : 'other';
  } catch {
    return 'missing';
  }
}

function badDataDir(dir: string, why: string, cause?: unknown): TroupeError {
  return new TroupeError('INVALID_CONFIG', `TROUPE_DATA_DIR ${dir} cannot be used: ${why}`, { cause });
}

/**
 * Makes a file of the data dir readable by its owner only (0600), creating it empty when it is
 * missing, before SQLite opens it: SQLite gives its -wal and -shm files the database file's
 * mode, and those files hold execution data, webhook payloads and chat histories. A file that
 * cannot be changed (another owner) is left as it is: opening it says what is wrong, if anything.
 */
export function ownerOnlyFile(path: string): void {
  if (path === ':memory:' || path === '') return;
  try {
    closeSync(openSync(path, 'a', 0o600));
    chmodSync(path, 0o600);
  } catch {
    // not ours to change; the open that follows reports a real problem
  }
}
