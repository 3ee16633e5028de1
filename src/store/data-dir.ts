/** The data dir (TROUPE_DATA_DIR): the SQLite store, the lock and the generated keys live there. */
import { mkdirSync, statSync } from 'node:fs';
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
