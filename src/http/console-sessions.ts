/**
 * Console sessions (SPEC §8): a person signs in once with the admin token and the browser then
 * holds only a random session id in an HttpOnly cookie. Kept in this process's memory, by the
 * id's hash: a restart signs everyone out (docs/console.md), which for an admin tool is a safe
 * default; with several instances, a person signs in on the instance they browse.
 */
import { createHash, randomBytes } from 'node:crypto';

export const CONSOLE_COOKIE = 'troupe_console';
/** the cookie reaches the API only, never the pages or another path */
export const CONSOLE_COOKIE_PATH = '/api';
/** a header a page of another origin cannot send without a CORS preflight this service never answers */
export const CONSOLE_HEADER = 'X-Troupe-Console';

export interface ConsoleSession {
  id: string;
  expiresAt: number;
}

const digest = (id: string): string => createHash('sha256').update(id, 'utf8').digest('hex');

export class ConsoleSessions {
  private readonly byHash = new Map<string, number>();

  constructor(private readonly lifetimeMs: number, private readonly now: () => number = Date.now) {}

  create(): ConsoleSession {
    this.sweep();
    const id = randomBytes(32).toString('base64url');
    const expiresAt = this.now() + this.lifetimeMs;
    this.byHash.set(digest(id), expiresAt);
    return { id, expiresAt };
  }

  /** the session's expiry when the id is a live session, else undefined */
  expiry(id: string | undefined): number | undefined {
    if (id === undefined || id === '') return undefined;
    const key = digest(id);
    const expiresAt = this.byHash.get(key);
    if (expiresAt === undefined) return undefined;
    if (expiresAt <= this.now()) {
      this.byHash.delete(key);
      return undefined;
    }
    return expiresAt;
  }

  end(id: string | undefined): void {
    if (id !== undefined) this.byHash.delete(digest(id));
  }

  /** drops expired sessions, so sign-ins never grow the map without bound */
  private sweep(): void {
    const now = this.now();
    for (const [key, expiresAt] of this.byHash) if (expiresAt <= now) this.byHash.delete(key);
  }
}
