/**
 * Chat deployments (SPEC §4.4): their settings and the visitors' sign-in (password, emailed
 * code, signed session). What a message does is chat-messages.ts.
 */
import type { Logger } from 'pino';
import { TroupeError, ValidationError } from '../errors.js';
import { normalizeName } from '../model/names.js';
import type { ChatDeployment, Store } from '../store/types.js';
import {
  ChatKeys, CODE_TTL_MS, emailAllowed, hashPassword, isPlainEmail, MAX_CODE_ATTEMPTS, newCode, newEpoch, newToken, SESSION_TTL_MS, tokenHash, verifyPassword,
  WindowLimiter, type SessionScope,
} from './chat-auth.js';
import { workflowNotFound } from './keys.js';
import type { Mailer } from './mailer.js';

export interface ChatSettings {
  subdomain: string;
  auth: { mode: 'public' | 'password' | 'email'; password?: string | undefined; allowedEmails?: string[] | undefined };
  branding: ChatDeployment['branding'];
  output?: { block: string; path?: string | undefined } | undefined;
}

export interface ChatServiceDeps {
  store: Store;
  logger: Logger;
  now: () => number;
  secretKey: string;
  mailer: Mailer;
}

/** What a signed-in visitor is: the email in email mode, null otherwise. */
export interface ChatVisitor {
  email: string | null;
}

export type AuthOutcome = { kind: 'session'; cookie: string; maxAgeSec: number } | { kind: 'code-sent' };

const IP_ATTEMPTS = 30;
const EMAIL_CLIENT_ATTEMPTS = 10;
const ATTEMPT_WINDOW_MS = 15 * 60_000;

/*
 * SPEC §4.4: attempts are counted per client address, and per email and client address
 * together, never per email alone: a count per email is one anybody can use up, which locks its
 * owner out. A code's own 5 tries bound the guessing of that code wherever the guesses come from.
 */
export class ChatService {
  private readonly keys: ChatKeys;
  private readonly perIp: WindowLimiter;
  private readonly perEmailClient: WindowLimiter;

  constructor(private readonly deps: ChatServiceDeps) {
    this.keys = new ChatKeys(deps.secretKey);
    this.perIp = new WindowLimiter(IP_ATTEMPTS, ATTEMPT_WINDOW_MS, deps.now);
    this.perEmailClient = new WindowLimiter(EMAIL_CLIENT_ATTEMPTS, ATTEMPT_WINDOW_MS, deps.now);
  }

  async put(workflowId: string, settings: ChatSettings): Promise<{ chat: ChatDeployment; created: boolean }> {
    const wf = await this.deps.store.workflows.get(workflowId);
    if (wf === null) throw workflowNotFound(workflowId);
    // the answer's block by id or by name, as references name blocks
    const answerBlock = settings.output === undefined ? undefined : blockIdOf(wf.definition.blocks, settings.output.block);
    const issues = settingIssues(settings, answerBlock);
    if (issues.length > 0) throw new ValidationError('INVALID_REQUEST', 'invalid chat settings', issues);
    const earlier = await this.deps.store.chats.getByWorkflow(workflowId);
    const at = new Date(this.deps.now()).toISOString();
    const newPassword = await this.changedPassword(settings.auth.password, earlier?.auth.passwordHash);
    const passwordHash = newPassword ?? earlier?.auth.passwordHash;
    // who may sign in changed (new chat, new password, another mode): earlier sessions end; the
    // same password sent again with the rest of the settings changes nothing
    const renewed = earlier === null || newPassword !== undefined || earlier.auth.mode !== settings.auth.mode;
    const sessionEpoch = renewed || earlier.auth.sessionEpoch === undefined ? newEpoch() : earlier.auth.sessionEpoch;
    if (settings.auth.mode === 'password' && passwordHash === undefined) {
      throw new ValidationError('INVALID_REQUEST', 'invalid chat settings', [{ path: '/auth/password', message: 'a password chat needs a password' }]);
    }
    const chat: ChatDeployment = {
      workflowId,
      subdomain: settings.subdomain,
      auth: {
        mode: settings.auth.mode,
        sessionEpoch,
        ...(settings.auth.mode === 'password' && passwordHash !== undefined ? { passwordHash } : {}),
        ...(settings.auth.mode === 'email' ? { allowedEmails: settings.auth.allowedEmails ?? [] } : {}),
      },
      branding: settings.branding,
      ...(settings.output === undefined || answerBlock === undefined ? {} : { output: { block: answerBlock, ...(settings.output.path === undefined ? {} : { path: settings.output.path }) } }),
      createdAt: earlier?.createdAt ?? at,
      updatedAt: at,
    };
    return this.deps.store.chats.put(chat);
  }

  /** The hash of a password that differs from the stored one; undefined when none is given or it is the same. */
  private async changedPassword(password: string | undefined, stored: string | undefined): Promise<string | undefined> {
    if (password === undefined) return undefined;
    if (stored !== undefined && (await verifyPassword(password, stored))) return undefined;
    return hashPassword(password);
  }

  async get(workflowId: string): Promise<ChatDeployment> {
    if ((await this.deps.store.workflows.get(workflowId)) === null) throw workflowNotFound(workflowId);
    const chat = await this.deps.store.chats.getByWorkflow(workflowId);
    if (chat === null) throw new TroupeError('NOT_FOUND', `workflow ${workflowId} has no chat deployment`);
    return chat;
  }

  async delete(workflowId: string): Promise<void> {
    await this.get(workflowId);
    await this.deps.store.chats.delete(workflowId);
  }

  async bySubdomain(subdomain: string): Promise<ChatDeployment> {
    const chat = await this.deps.store.chats.getBySubdomain(subdomain);
    if (chat === null) throw new TroupeError('NOT_FOUND', `no chat at ${subdomain}`);
    return chat;
  }

  /**
   * The signed-in visitor, or null when the chat needs a sign-in this cookie does not give: the
   * cookie must be signed for this chat and epoch, and its session still kept on the server
   * (sign-out deletes it, for every instance and across restarts).
   */
  async visitor(chat: ChatDeployment, cookie: string | undefined): Promise<ChatVisitor | null> {
    if (chat.auth.mode === 'public') return { email: null };
    const session = this.keys.readSession(cookie, scopeOf(chat), this.deps.now());
    if (session === undefined) return null;
    // a session from before the chat switched to email mode (or back) does not carry over
    if ((chat.auth.mode === 'email') !== (session.email !== null)) return null;
    if (session.email !== null && !emailAllowed(session.email, chat.auth.allowedEmails ?? [])) return null;
    const kept = await this.deps.store.chats.getSession(tokenHash(session.sessionId));
    if (kept === null || kept.workflowId !== chat.workflowId || Date.parse(kept.expiresAt) < this.deps.now()) return null;
    return { email: session.email };
  }

  /** DELETE /api/chat/{sub}/auth: the cookie's session ends on the server, whatever it was for. */
  async signOut(cookie: string | undefined): Promise<void> {
    const id = this.keys.sessionIdOf(cookie);
    if (id !== undefined) await this.deps.store.chats.deleteSession(tokenHash(id));
  }

  /** POST /api/chat/{sub}/auth: `{ password }`, `{ email }` or `{ email, code }`. */
  async authenticate(chat: ChatDeployment, body: { password?: string | undefined; email?: string | undefined; code?: string | undefined }, ip: string): Promise<AuthOutcome> {
    this.limit(this.perIp, `${chat.subdomain}\u0000${ip}`);
    if (chat.auth.mode === 'public') return this.session(chat, null);
    if (chat.auth.mode === 'password') {
      if (body.password === undefined) throw badRequest('/password', 'this chat signs in with a password');
      if (chat.auth.passwordHash === undefined || !(await verifyPassword(body.password, chat.auth.passwordHash))) {
        throw new TroupeError('UNAUTHORIZED', 'wrong password');
      }
      return this.session(chat, null);
    }
    if (body.email === undefined) throw badRequest('/email', 'this chat signs in with an email address');
    const email = body.email.trim().toLowerCase();
    if (!isPlainEmail(email)) throw badRequest('/email', 'not an email address');
    this.limit(this.perEmailClient, `${chat.subdomain}\u0000${email}\u0000${ip}`);
    const client = this.keys.clientTag(ip);
    if (body.code === undefined) {
      // SPEC §4.4: the same 202 for every address, so the list cannot be probed; the code is sent
      // (only to an allowed address) after the answer, so its time tells nothing either
      setImmediate(() => {
        this.sendCode(chat, email, client).catch((err: unknown) => this.deps.logger.error({ err, subdomain: chat.subdomain }, 'chat sign-in code not sent'));
      });
      return { kind: 'code-sent' };
    }
    await this.checkCode(chat, email, client, body.code);
    return this.session(chat, email);
  }

  private async session(chat: ChatDeployment, email: string | null): Promise<AuthOutcome> {
    const sessionId = newToken();
    const expiresAt = this.deps.now() + SESSION_TTL_MS;
    await this.deps.store.chats.putSession(
      { idHash: tokenHash(sessionId), workflowId: chat.workflowId, subdomain: chat.subdomain, email, expiresAt: new Date(expiresAt).toISOString() },
      new Date(this.deps.now()).toISOString(),
    );
    const cookie = this.keys.session(scopeOf(chat), email, expiresAt, sessionId);
    return { kind: 'session', cookie, maxAgeSec: SESSION_TTL_MS / 1000 };
  }

  /**
   * A code is the client's that asked for it (SPEC §4.4: no outsider can lock a person out): a
   * request from elsewhere makes another code, never replaces this one, and guesses from
   * elsewhere look for their own code, so they never use up this one's 5 tries.
   */
  private async sendCode(chat: ChatDeployment, email: string, client: string): Promise<void> {
    // the list may have changed since the answer: no mail to an address it no longer holds
    if (!emailAllowed(email, chat.auth.allowedEmails ?? [])) return;
    const code = newCode();
    const expiresAt = new Date(this.deps.now() + CODE_TTL_MS).toISOString();
    await this.deps.store.chats.putCode({ subdomain: chat.subdomain, email, client, codeHash: this.keys.codeHash(chat.subdomain, email, code), expiresAt, attempts: 0 });
    const title = chat.branding.title;
    await this.deps.mailer.send(email, `Your sign-in code for ${title}`, `Your code is ${code}. It is valid for 15 minutes.`);
  }

  private async checkCode(chat: ChatDeployment, email: string, client: string, code: string): Promise<void> {
    const refused = (): TroupeError => new TroupeError('UNAUTHORIZED', 'invalid or expired code');
    const codes = this.deps.store.chats;
    const stored = await codes.getCode(chat.subdomain, email, client);
    if (stored === null || !emailAllowed(email, chat.auth.allowedEmails ?? [])) throw refused();
    const attempts = await codes.countAttempt(chat.subdomain, email, client);
    // 0: the code went away meanwhile (used or exhausted by a concurrent attempt)
    if (Date.parse(stored.expiresAt) < this.deps.now() || attempts === 0 || attempts > MAX_CODE_ATTEMPTS) {
      await codes.deleteCode(chat.subdomain, email, client);
      throw refused();
    }
    if (!this.keys.codeMatches(stored.codeHash, chat.subdomain, email, code.trim())) throw refused();
    await codes.deleteCode(chat.subdomain, email, client);
  }

  private limit(limiter: WindowLimiter, key: string): void {
    const taken = limiter.take(key);
    if (!taken.ok) throw new TroupeError('RATE_LIMITED', 'too many sign-in attempts; retry later', { details: { retryAfterSec: taken.retryAfterSec } });
  }
}

function scopeOf(chat: ChatDeployment): SessionScope {
  return { subdomain: chat.subdomain, workflowId: chat.workflowId, epoch: chat.auth.sessionEpoch ?? '' };
}

function badRequest(path: string, message: string): ValidationError {
  return new ValidationError('INVALID_REQUEST', message, [{ path, message }]);
}

function blockIdOf(blocks: readonly { id: string; name: string }[], idOrName: string): string | undefined {
  return (blocks.find((b) => b.id === idOrName) ?? blocks.find((b) => normalizeName(b.name) === normalizeName(idOrName)))?.id;
}

function settingIssues(s: ChatSettings, answerBlock: string | undefined): { path: string; message: string }[] {
  const issues: { path: string; message: string }[] = [];
  if (s.auth.mode === 'email' && (s.auth.allowedEmails ?? []).length === 0) {
    issues.push({ path: '/auth/allowedEmails', message: 'an email chat needs allowedEmails (addresses or @domain)' });
  }
  if (s.output !== undefined && answerBlock === undefined) {
    issues.push({ path: '/output/block', message: `no block "${s.output.block}" in this workflow` });
  }
  return issues;
}
