/**
 * Secrets at rest: AES-256-GCM under a key derived once from TROUPE_SECRET_KEY. The store only
 * ever holds the blob this returns, so a copied database file reveals no secret value.
 */
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';
import { TroupeError } from '../errors.js';

/** A 32-byte AES key from deriveSecretKey; derive once at start-up (scrypt is slow on purpose). */
export type SecretKey = Buffer;

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
// fixed salt: the input is one per-installation key, so the salt only separates this use of it
const SALT = 'troupe/secrets/v1';
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;

export function deriveSecretKey(secret: string): SecretKey {
  if (secret.length === 0) throw new TroupeError('INVALID_CONFIG', 'TROUPE_SECRET_KEY is empty');
  return scryptSync(secret, SALT, 32, SCRYPT);
}

/**
 * Returns `v1.<base64url(iv | tag | ciphertext)>`. `name` (optional) is bound as associated
 * data, so a blob copied onto another secret's name fails to decrypt.
 */
export function encryptSecret(key: SecretKey, plaintext: string, name = ''): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', checkKey(key), iv);
  cipher.setAAD(aad(name));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
}

export function decryptSecret(key: SecretKey, blob: string, name = ''): string {
  const [version, payload] = blob.split('.', 2);
  const raw = version === VERSION && payload !== undefined ? Buffer.from(payload, 'base64url') : Buffer.alloc(0);
  if (raw.length < IV_BYTES + TAG_BYTES) throw undecryptable();
  try {
    const decipher = createDecipheriv('aes-256-gcm', checkKey(key), raw.subarray(0, IV_BYTES));
    decipher.setAAD(aad(name));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch (err) {
    throw undecryptable(err);
  }
}

function aad(name: string): Buffer {
  return Buffer.from(`troupe-secret:${name}`, 'utf8');
}

function checkKey(key: SecretKey): Buffer {
  if (!Buffer.isBuffer(key) || key.length !== 32) throw new TroupeError('INTERNAL', 'secret key must be 32 bytes from deriveSecretKey');
  return key;
}

function undecryptable(cause?: unknown): TroupeError {
  return new TroupeError('STORE_ERROR', 'a stored secret cannot be decrypted (wrong TROUPE_SECRET_KEY or corrupted value)', { cause });
}
