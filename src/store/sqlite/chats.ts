import { conflict, fromJson, iso, toJson } from '../shared.js';
import type { ChatCode, ChatDeployment, ChatMessage, ChatRepo, ChatSession, Conversation } from '../types.js';
import type { Db } from './db.js';
import {
  messageJson, subdomainConflict, toChat, toCode, toConversation, toSession,
  type ChatBody, type ChatRow, type CodeRow, type ConversationRow, type SessionRow,
} from '../rows/chats.js';

export class SqliteChats implements ChatRepo {
  private readonly selectByWorkflow;
  private readonly selectBySubdomain;
  private readonly upsertChat;
  private readonly clearStaleCodes;
  private readonly removeChat;
  private readonly removeConversations;
  private readonly removeMessages;
  private readonly removeCodes;
  private readonly insertConversation;
  private readonly selectConversation;
  private readonly touchConversation;
  private readonly selectMessages;
  private readonly selectLastSeq;
  private readonly insertMessage;
  private readonly upsertCode;
  private readonly selectCode;
  private readonly bumpAttempts;
  private readonly removeCode;
  private readonly updateToken;
  private readonly insertSession;
  private readonly purgeSessions;
  private readonly selectSession;
  private readonly removeSession;
  private readonly removeSessions;

  constructor(private readonly db: Db) {
    this.selectByWorkflow = db.prepare<[string], ChatRow>('SELECT * FROM chat_deployments WHERE workflow_id = ?');
    this.selectBySubdomain = db.prepare<[string], ChatRow>('SELECT * FROM chat_deployments WHERE subdomain = ?');
    this.upsertChat = db.prepare(`INSERT INTO chat_deployments (workflow_id, subdomain, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (workflow_id) DO UPDATE SET subdomain = excluded.subdomain, body = excluded.body, updated_at = excluded.updated_at`);
    // codes sent for a subdomain this workflow left, or sent while another workflow held it, sign in nowhere
    this.clearStaleCodes = db.prepare('DELETE FROM chat_codes WHERE (workflow_id = ? AND subdomain <> ?) OR (subdomain = ? AND workflow_id IS NOT ?)');
    this.removeChat = db.prepare('DELETE FROM chat_deployments WHERE workflow_id = ?');
    this.removeConversations = db.prepare('DELETE FROM chat_conversations WHERE workflow_id = ?');
    this.removeMessages = db.prepare('DELETE FROM chat_messages WHERE workflow_id = ?');
    this.removeCodes = db.prepare('DELETE FROM chat_codes WHERE workflow_id = ? OR subdomain = ?');
    this.insertConversation = db.prepare(`INSERT INTO chat_conversations (id, workflow_id, subdomain, owner, token_hash, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`);
    this.selectConversation = db.prepare<[string], ConversationRow>('SELECT * FROM chat_conversations WHERE id = ?');
    this.touchConversation = db.prepare<[string, string], { workflow_id: string }>(
      'UPDATE chat_conversations SET updated_at = ? WHERE id = ? RETURNING workflow_id',
    );
    this.selectMessages = db.prepare<[string], { body: string }>('SELECT body FROM chat_messages WHERE conversation_id = ? ORDER BY seq');
    this.selectLastSeq = db.prepare<[string], { seq: number | null }>('SELECT max(seq) AS seq FROM chat_messages WHERE conversation_id = ?');
    this.insertMessage = db.prepare('INSERT INTO chat_messages (conversation_id, seq, workflow_id, body) VALUES (?, ?, ?, ?)');
    this.upsertCode = db.prepare(`INSERT INTO chat_codes (subdomain, email, client, workflow_id, code_hash, expires_at, attempts)
      VALUES (?, ?, ?, (SELECT workflow_id FROM chat_deployments WHERE subdomain = ?), ?, ?, ?)
      ON CONFLICT (subdomain, email, client) DO UPDATE SET workflow_id = excluded.workflow_id, code_hash = excluded.code_hash,
        expires_at = excluded.expires_at, attempts = excluded.attempts`);
    this.selectCode = db.prepare<[string, string, string], CodeRow>('SELECT * FROM chat_codes WHERE subdomain = ? AND email = ? AND client = ?');
    this.bumpAttempts = db.prepare<[string, string, string], { attempts: number }>(
      'UPDATE chat_codes SET attempts = attempts + 1 WHERE subdomain = ? AND email = ? AND client = ? RETURNING attempts',
    );
    this.removeCode = db.prepare('DELETE FROM chat_codes WHERE subdomain = ? AND email = ? AND client = ?');
    this.updateToken = db.prepare('UPDATE chat_conversations SET token_hash = ? WHERE id = ?');
    this.insertSession = db.prepare('INSERT OR REPLACE INTO chat_sessions (id_hash, workflow_id, subdomain, email, expires_at) VALUES (?, ?, ?, ?, ?)');
    this.purgeSessions = db.prepare('DELETE FROM chat_sessions WHERE expires_at < ?');
    this.selectSession = db.prepare<[string], SessionRow>('SELECT * FROM chat_sessions WHERE id_hash = ?');
    this.removeSession = db.prepare('DELETE FROM chat_sessions WHERE id_hash = ?');
    this.removeSessions = db.prepare('DELETE FROM chat_sessions WHERE workflow_id = ?');
  }

  async put(chat: ChatDeployment): Promise<{ chat: ChatDeployment; created: boolean }> {
    const body: ChatBody = { auth: chat.auth, branding: chat.branding, ...(chat.output !== undefined ? { output: chat.output } : {}) };
    const json = toJson(body);
    return this.db.transaction(() => {
      const holder = this.selectBySubdomain.get(chat.subdomain);
      if (holder !== undefined && holder.workflow_id !== chat.workflowId) throw subdomainConflict(chat.subdomain);
      const existing = this.selectByWorkflow.get(chat.workflowId);
      this.upsertChat.run(chat.workflowId, chat.subdomain, json, iso(chat.createdAt), iso(chat.updatedAt));
      this.clearStaleCodes.run(chat.workflowId, chat.subdomain, chat.subdomain, chat.workflowId);
      return { chat: toChat(this.selectByWorkflow.get(chat.workflowId) as ChatRow), created: existing === undefined };
    }).immediate();
  }

  async getByWorkflow(workflowId: string): Promise<ChatDeployment | null> {
    const row = this.selectByWorkflow.get(workflowId);
    return row ? toChat(row) : null;
  }

  async getBySubdomain(subdomain: string): Promise<ChatDeployment | null> {
    const row = this.selectBySubdomain.get(subdomain);
    return row ? toChat(row) : null;
  }

  async delete(workflowId: string): Promise<boolean> {
    return this.db.transaction(() => {
      const chat = this.selectByWorkflow.get(workflowId);
      this.removeMessages.run(workflowId);
      this.removeConversations.run(workflowId);
      // a code left with no workflow (sent before the chat existed) goes with the subdomain too
      this.removeCodes.run(workflowId, chat?.subdomain ?? null);
      this.removeSessions.run(workflowId);
      return chat !== undefined && this.removeChat.run(workflowId).changes > 0;
    }).immediate();
  }

  async createConversation(c: Conversation): Promise<Conversation> {
    const messages = c.messages.map(messageJson);
    this.db.transaction(() => {
      const inserted = this.insertConversation.run(c.id, c.workflowId, c.subdomain, c.owner, c.tokenHash ?? null, iso(c.createdAt), iso(c.updatedAt)).changes > 0;
      if (!inserted) throw conflict('conversation', c.id);
      messages.forEach((m, seq) => this.insertMessage.run(c.id, seq, c.workflowId, m));
    }).immediate();
    return (await this.getConversation(c.id)) as Conversation;
  }

  async getConversation(id: string): Promise<Conversation | null> {
    // one read transaction: the messages are those of the row read, never half of an append
    return this.db.transaction(() => {
      const row = this.selectConversation.get(id);
      if (row === undefined) return null;
      const messages = this.selectMessages.all(id).map((m) => fromJson(m.body) as ChatMessage);
      return toConversation(row, messages);
    })();
  }

  async appendMessages(id: string, messages: readonly ChatMessage[], updatedAt: string): Promise<boolean> {
    const bodies = messages.map(messageJson);
    const at = iso(updatedAt);
    return this.db.transaction(() => {
      const conv = this.touchConversation.get(at, id);
      if (conv === undefined) return false;
      const next = (this.selectLastSeq.get(id)?.seq ?? -1) + 1;
      bodies.forEach((m, i) => this.insertMessage.run(id, next + i, conv.workflow_id, m));
      return true;
    }).immediate();
  }

  async putCode(code: ChatCode): Promise<void> {
    this.upsertCode.run(code.subdomain, code.email, code.client, code.subdomain, code.codeHash, iso(code.expiresAt), code.attempts);
  }

  async getCode(subdomain: string, email: string, client: string): Promise<ChatCode | null> {
    const row = this.selectCode.get(subdomain, email, client);
    return row ? toCode(row) : null;
  }

  async countAttempt(subdomain: string, email: string, client: string): Promise<number> {
    return this.bumpAttempts.get(subdomain, email, client)?.attempts ?? 0;
  }

  async deleteCode(subdomain: string, email: string, client: string): Promise<void> {
    this.removeCode.run(subdomain, email, client);
  }

  async setConversationToken(id: string, tokenHash: string): Promise<boolean> {
    return this.updateToken.run(tokenHash, id).changes > 0;
  }

  async putSession(session: ChatSession, now: string): Promise<void> {
    this.db.transaction(() => {
      this.purgeSessions.run(iso(now));
      this.insertSession.run(session.idHash, session.workflowId, session.subdomain, session.email, iso(session.expiresAt));
    }).immediate();
  }

  async getSession(idHash: string): Promise<ChatSession | null> {
    const row = this.selectSession.get(idHash);
    return row ? toSession(row) : null;
  }

  async deleteSession(idHash: string): Promise<boolean> {
    return this.removeSession.run(idHash).changes > 0;
  }
}
