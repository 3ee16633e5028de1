/**
 * Sign-in for chat deployments (SPEC §4.4): password hashes, emailed 6-digit codes, signed
 * session cookies and attempt limits. Secrets are compared in constant time; codes and
 * passwords are only ever stored hashed.
 */
import { createHash, createHmac, randomBytes, randomInt, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;

const SCRYPT_KEYLEN = 32;
export const CODE_TTL_MS = 15 * 60_000;
export const MAX_CODE_ATTEMPTS = 5;
export const SESSION_TTL_MS = 7 * 24 * 60 * 60_000;

// scrypt is slow on purpose: off the event loop (libuv's pool), or every attempt stalls the service
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  return `scrypt$${salt.toString('base64url')}$${(await scryptAsync(password, salt, SCRYPT_KEYLEN)).toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64url'), expected.length);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** One plain address, nothing a mail library could read as a list or a display name. */
const PLAIN_EMAIL = /^[a-z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+$/;

export function isPlainEmail(email: string): boolean {
  return email.length <= 254 && PLAIN_EMAIL.test(email);
}

export function newEpoch(): string {
  return randomBytes(12).toString('base64url');
}

/** `ada@example.com` or `@example.com`; case does not matter. */
export function emailAllowed(email: string, allowed: readonly string[]): boolean {
  const e = email.trim().toLowerCase();
  if (!isPlainEmail(e)) return false;
  const domain = e.slice(e.lastIndexOf('@'));
  return allowed.some((a) => {
    const rule = a.trim().toLowerCase();
    return rule.startsWith('@') ? domain === rule : e === rule;
  });
}

/** A random 256-bit token (session ids, conversation tokens): never stored, only its hash. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Tokens are random and long: a plain SHA-256 is enough to keep the stored form useless. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

export function tokenMatches(storedHash: string, token: string): boolean {
  const a = Buffer.from(storedHash);
  const b = Buffer.from(tokenHash(token));
  return a.length === b.length && timingSafeEqual(a, b);
}

export function newCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0');
}

/** What a session is valid for: one chat of one workflow, in one sign-in epoch. */
export interface SessionScope {
  subdomain: string;
  workflowId: string;
  epoch: string;
}

/** Keys derived from the service's secret key, one per purpose. */
export class ChatKeys {
  private readonly sessionKey: Buffer;
  private readonly codeKey: Buffer;

  constructor(secretKey: string) {
    this.sessionKey = createHash('sha256').update(`troupe-chat-session\u0000${secretKey}`).digest();
    this.codeKey = createHash('sha256').update(`troupe-chat-code\u0000${secretKey}`).digest();
  }

  codeHash(subdomain: string, email: string, code: string): string {
    return createHmac('sha256', this.codeKey).update(`${subdomain}\u0000${email}\u0000${code}`).digest('base64url');
  }

  /** who asked for a code, kept without the address itself (a plain hash of an IPv4 address is undone by trying them all) */
  clientTag(clientAddress: string): string {
    return createHmac('sha256', this.codeKey).update(`client\u0000${clientAddress}`).digest('base64url');
  }

  codeMatches(stored: string, subdomain: string, email: string, code: string): boolean {
    const a = Buffer.from(stored);
    const b = Buffer.from(this.codeHash(subdomain, email, code));
    return a.length === b.length && timingSafeEqual(a, b);
  }

  /**
   * `payload.signature`: the chat (subdomain, workflow, epoch), the email (or null), the expiry
   * and the session's id (the server keeps its hash: sign-out deletes it), signed.
   */
  session(chat: SessionScope, email: string | null, expiresAt: number, sessionId: string): string {
    const payload = Buffer.from(JSON.stringify({ s: chat.subdomain, w: chat.workflowId, p: chat.epoch, e: email, x: expiresAt, i: sessionId })).toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  /** the session's email (null for password chats) and id, or undefined when invalid, expired or for another chat or epoch */
  readSession(value: string | undefined, chat: SessionScope, now: number): { email: string | null; sessionId: string } | undefined {
    const data = this.signedPayload(value);
    if (data === undefined || typeof data.i !== 'string') return undefined;
    if (data.s !== chat.subdomain || data.w !== chat.workflowId || data.p !== chat.epoch) return undefined;
    if (typeof data.x !== 'number' || data.x < now) return undefined;
    return { email: typeof data.e === 'string' ? data.e : null, sessionId: data.i };
  }

  /** the id of a session cookie this service signed, whatever chat or epoch it is for (sign-out) */
  sessionIdOf(value: string | undefined): string | undefined {
    const id = this.signedPayload(value)?.i;
    return typeof id === 'string' ? id : undefined;
  }

  private signedPayload(value: string | undefined): Record<string, unknown> | undefined {
    if (value === undefined) return undefined;
    const [payload, signature] = value.split('.');
    if (payload === undefined || signature === undefined) return undefined;
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    try {
      const data: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      return typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.sessionKey).update(payload).digest('base64url');
  }
}

/** At most `limit` attempts per key per window (fixed windows): sign-in attempts per client, and per email and client. */
export class WindowLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(private readonly limit: number, private readonly windowMs: number, private readonly now: () => number) {}

  /** counts one attempt; retryAfterSec when over the limit */
  take(key: string): { ok: true } | { ok: false; retryAfterSec: number } {
    const now = this.now();
    let w = this.windows.get(key);
    if (w === undefined || now - w.start >= this.windowMs) {
      if (this.windows.size > 50_000) this.sweep(now);
      w = { start: now, count: 0 };
      this.windows.set(key, w);
    }
    w.count += 1;
    if (w.count <= this.limit) return { ok: true };
    return { ok: false, retryAfterSec: Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000)) };
  }

  private sweep(now: number): void {
    for (const [key, w] of this.windows) if (now - w.start >= this.windowMs) this.windows.delete(key);
  }
}
