/**
 * API keys (SPEC §4.2): `trp_` + 256 random bits, shown once, stored only as a sha256 hash,
 * looked up by hash and confirmed with a constant-time comparison.
 */
import { createHash, hash as oneShotHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { TroupeError } from '../errors.js';
import type { ApiKeyRecord, Store } from '../store/types.js';
import type { LookupCache } from './lookup-cache.js';

export const KEY_PREFIX = 'trp_';
/** characters of the key kept in `prefix` (shown in lists so users can tell keys apart) */
const SHOWN_CHARS = KEY_PREFIX.length + 6;
/** a key is marked used at most this often, so execute does not write on every call */
const MARK_USED_EVERY_MS = 60_000;

export interface IssuedKey {
  id: string;
  /** the full key: returned once, never stored */
  key: string;
  prefix: string;
  createdAt: string;
}

export interface KeyView {
  id: string;
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function hashApiKey(key: string): string {
  // the one-shot form: no Hash object per request on the execute path
  return oneShotHash('sha256', key, 'hex');
}

/** Constant-time equality of two strings of any length (compares their sha256 digests). */
export function safeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a, 'utf8').digest();
  const db = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(da, db);
}

/** Constant-time equality of two hex sha256 digests (both of one length: no need to hash them again). */
function sameDigest(a: string, b: string): boolean {
  const da = Buffer.from(a, 'hex');
  const db = Buffer.from(b, 'hex');
  return da.length === db.length && da.length > 0 && timingSafeEqual(da, db);
}

export function keyView(rec: ApiKeyRecord): KeyView {
  return { id: rec.id, prefix: rec.prefix, createdAt: rec.createdAt, revokedAt: rec.revokedAt, lastUsedAt: rec.lastUsedAt ?? null };
}

export class ApiKeyService {
  private readonly lastMarked = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly now: () => number,
    private readonly lookups: LookupCache,
  ) {}

  async issue(workflowId: string): Promise<IssuedKey> {
    await this.requireWorkflow(workflowId);
    const key = generateApiKey();
    const rec = await this.store.apiKeys.create({
      id: `key_${randomBytes(8).toString('hex')}`,
      workflowId,
      prefix: key.slice(0, SHOWN_CHARS),
      hash: hashApiKey(key),
      createdAt: new Date(this.now()).toISOString(),
      revokedAt: null,
      lastUsedAt: null,
    });
    return { id: rec.id, key, prefix: rec.prefix, createdAt: rec.createdAt };
  }

  async list(workflowId: string): Promise<KeyView[]> {
    await this.requireWorkflow(workflowId);
    return (await this.store.apiKeys.listByWorkflow(workflowId)).map(keyView);
  }

  /** NOT_FOUND when the workflow or the key (for that workflow) does not exist. */
  async revoke(workflowId: string, keyId: string): Promise<void> {
    await this.requireWorkflow(workflowId);
    const done = await this.store.apiKeys.revoke(workflowId, keyId, new Date(this.now()).toISOString());
    if (!done) throw new TroupeError('NOT_FOUND', `API key ${keyId} not found`, { details: { keyId } });
    this.lookups.changed(workflowId);
  }

  /** The active key record for a presented key; null when unknown, revoked or malformed. */
  async authenticate(presented: string): Promise<ApiKeyRecord | null> {
    if (!presented.startsWith(KEY_PREFIX) || presented.length > 200) return null;
    const hash = hashApiKey(presented);
    const rec = this.lookups.key(hash) ?? (await this.store.apiKeys.findByHash(hash));
    if (rec === null || !sameDigest(rec.hash, hash) || rec.revokedAt !== null) return null;
    this.lookups.rememberKey(rec);
    this.markUsed(rec.id);
    return rec;
  }

  private markUsed(keyId: string): void {
    const now = this.now();
    const last = this.lastMarked.get(keyId);
    if (last !== undefined && now - last < MARK_USED_EVERY_MS) return;
    this.lastMarked.set(keyId, now);
    if (this.lastMarked.size > 10_000) this.lastMarked.clear();
    // best effort bookkeeping: a failed write must not fail the request
    this.store.apiKeys.markUsed(keyId, new Date(now).toISOString()).catch(() => undefined);
  }

  private async requireWorkflow(workflowId: string): Promise<void> {
    if ((await this.store.workflows.get(workflowId)) === null) throw workflowNotFound(workflowId);
  }
}

export function workflowNotFound(id: string): TroupeError {
  return new TroupeError('NOT_FOUND', `workflow ${id} not found`, { details: { workflowId: id } });
}
