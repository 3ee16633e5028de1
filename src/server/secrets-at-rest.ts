/**
 * The admin token and the secret key of a service (SPEC §6): taken from the environment when
 * set, otherwise generated once into the data dir (mode 0600) and read back on later starts.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { ensureDataDir } from '../store/data-dir.js';
import { join } from 'node:path';
import type { Config } from '../../config/load.js';
import { TroupeError } from '../errors.js';

export const ADMIN_TOKEN_FILE = 'admin-token';
export const SECRET_KEY_FILE = 'secret-key';

/** 32 random bytes, base64url: 43 characters, 256 bits. */
export function generateSecret(): string {
  return randomBytes(32).toString('base64url');
}

export type SecretOrigin = 'env' | 'file' | 'generated';

export interface AtRestSecret {
  value: string;
  origin: SecretOrigin;
  /** where it lives on disk; null when it came from the environment */
  path: string | null;
}

export interface ServiceSecrets {
  adminToken: AtRestSecret;
  secretKey: AtRestSecret;
}

export function adminTokenPath(dataDir: string): string {
  return join(dataDir, ADMIN_TOKEN_FILE);
}

export function loadServiceSecrets(config: Readonly<Config>): ServiceSecrets {
  return {
    adminToken: resolveSecret(config.adminToken, config.dataDir, ADMIN_TOKEN_FILE, 'TROUPE_ADMIN_TOKEN'),
    secretKey: resolveSecret(config.secretKey, config.dataDir, SECRET_KEY_FILE, 'TROUPE_SECRET_KEY'),
  };
}

function resolveSecret(fromEnv: string | undefined, dataDir: string, file: string, envName: string): AtRestSecret {
  if (fromEnv !== undefined) return { value: fromEnv, origin: 'env', path: null };
  ensureDataDir(dataDir);
  const path = join(dataDir, file);
  const existing = readSecretFile(path, envName);
  if (existing !== undefined) return { value: existing, origin: 'file', path };
  const value = generateSecret();
  try {
    // 'wx': when two processes start together on one data dir, exactly one file wins
    writeFileSync(path, value + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw cannotWrite(path, err);
    const raced = readSecretFile(path, envName);
    if (raced === undefined) throw cannotWrite(path, err);
    return { value: raced, origin: 'file', path };
  }
  return { value, origin: 'generated', path };
}

/** The token as stored, or undefined when the file does not exist. */
export function readSecretFile(path: string, envName: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new TroupeError('INVALID_CONFIG', `cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
  const value = text.trim();
  if (value.length < 16) {
    throw new TroupeError('INVALID_CONFIG', `${path} must hold at least 16 characters (or set ${envName})`);
  }
  tightenMode(path);
  return value;
}

// a copied or hand-written file may be world-readable; the token grants full admin access
function tightenMode(path: string): void {
  try {
    if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  } catch {
    // read-only mounts (secrets injected by an orchestrator) are the operator's choice
  }
}

function cannotWrite(path: string, cause: unknown): TroupeError {
  return new TroupeError('INVALID_CONFIG', `cannot write ${path}: ${(cause as Error).message}`, { cause });
}
