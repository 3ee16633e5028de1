import { conflict, fromJson, iso, toJson } from '../shared.js';
import type { ChatCode, ChatDeployment, ChatMessage, ChatRepo, ChatSession, Conversation } from '../types.js';
import type { Pg } from './db.js';
import { isUniqueViolation } from './errors.js';
import {
  messageJson, subdomainConflict, toChat, toCode, toConversation, toSession,
  type ChatBody, type ChatRow, type CodeRow, type ConversationRow, type SessionRow,
} from '../rows/chats.js';

/** the upsert's row says whether it inserted */
type UpsertedChatRow = ChatRow & { inserted?: boolean };
/** a conversation's row joined with each of its messages' (null: none) */
type ConversationMessageRow = ConversationRow & { body: string | null };

const UPSERT_CHAT = `INSERT INTO chat_deployments AS c (workflow_id, subdomain, body, created_at, updated_at) VALUES ($1, $2, $3, $4, $5)
  ON CONFLICT (workflow_id) DO UPDATE SET subdomain = excluded.subdomain, body = excluded.body, updated_at = excluded.updated_at
  RETURNING c.*, (xmax = 0) AS inserted`;
// codes sent for a subdomain this workflow left, or sent while another workflow held it, sign in nowhere
const CLEAR_STALE_CODES = 'DELETE FROM chat_codes WHERE (workflow_id = $1 AND subdomain <> $2) OR (subdomain = $2 AND workflow_id IS DISTINCT FROM $1)';

export class PgChats implements ChatRepo {
  constructor(private readonly db: Pg) {}

  /** The unique subdomain decides between two workflows racing for it: the later insert fails, and its transaction with it. */
  async put(chat: ChatDeployment): Promise<{ chat: ChatDeployment; created: boolean }> {
    const body: ChatBody = { auth: chat.auth, branding: chat.branding, ...(chat.output !== undefined ? { output: chat.output } : {}) };
    const json = toJson(body);
    try {
      return await this.db.tx(async (q) => {
        const holder = await q.query<{ workflow_id: string }>('SELECT workflow_id FROM chat_deployments WHERE subdomain = $1', [chat.subdomain]);
        if (holder.rows[0] !== undefined && holder.rows[0].workflow_id !== chat.workflowId) throw subdomainConflict(chat.subdomain);
        const { rows } = await q.query<UpsertedChatRow>(UPSERT_CHAT, [chat.workflowId, chat.subdomain, json, iso(chat.createdAt), iso(chat.updatedAt)]);
        await q.query(CLEAR_STALE_CODES, [chat.workflowId, chat.subdomain]);
        const row = rows[0] as UpsertedChatRow;
        return { chat: toChat(row), created: row.inserted === true };
      });
    } catch (err) {
      if (isUniqueViolation(err, 'chat_deployments_subdomain_key')) throw subdomainConflict(chat.subdomain);
      throw err;
    }
  }

  async getByWorkflow(workflowId: string): Promise<ChatDeployment | null> {
    const { rows } = await this.db.query<ChatRow>('SELECT * FROM chat_deployments WHERE workflow_id = $1', [workflowId]);
    return rows[0] ? toChat(rows[0]) : null;
  }

  async getBySubdomain(subdomain: string): Promise<ChatDeployment | null> {
    const { rows } = await this.db.query<ChatRow>('SELECT * FROM chat_deployments WHERE subdomain = $1', [subdomain]);
    return rows[0] ? toChat(rows[0]) : null;
  }

  async delete(workflowId: string): Promise<boolean> {
    return this.db.tx(async (q) => {
      const removed = await q.query<{ subdomain: string }>('DELETE FROM chat_deployments WHERE workflow_id = $1 RETURNING subdomain', [workflowId]);
      const subdomain = removed.rows[0]?.subdomain ?? null;
      await q.query('DELETE FROM chat_messages WHERE workflow_id = $1', [workflowId]);
      await q.query('DELETE FROM chat_conversations WHERE workflow_id = $1', [workflowId]);
      // a code left with no workflow (sent before the chat existed) goes with the subdomain too
      await q.query('DELETE FROM chat_codes WHERE workflow_id = $1 OR subdomain = $2', [workflowId, subdomain]);
      await q.query('DELETE FROM chat_sessions WHERE workflow_id = $1', [workflowId]);
      return subdomain !== null;
    });
  }

  async createConversation(c: Conversation): Promise<Conversation> {
    const messages = c.messages.map(messageJson);
    await this.db.tx(async (q) => {
      const inserted = await q.query(`INSERT INTO chat_conversations (id, workflow_id, subdomain, owner, token_hash, created_at, updated_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
      [c.id, c.workflowId, c.subdomain, c.owner, c.tokenHash ?? null, iso(c.createdAt), iso(c.updatedAt)]);
      if (inserted.rowCount === 0) throw conflict('conversation', c.id);
      await insertMessages(q, c.id, c.workflowId, 0, messages);
    });
    return (await this.getConversation(c.id)) as Conversation;
  }

  /** One statement, so one snapshot: the messages are those of the row read, never half of an append. */
  async getConversation(id: string): Promise<Conversation | null> {
    const { rows } = await this.db.query<ConversationMessageRow>(`SELECT c.*, m.body FROM chat_conversations c
      LEFT JOIN chat_messages m ON m.conversation_id = c.id WHERE c.id = $1 ORDER BY m.seq`, [id]);
    const row = rows[0];
    if (row === undefined) return null;
    const messages = rows.filter((r) => r.body !== null).map((r) => fromJson(r.body) as ChatMessage);
    return toConversation(row, messages);
  }

  /** The conversation's row lock (the UPDATE) puts concurrent appends one after the other. */
  async appendMessages(id: string, messages: readonly ChatMessage[], updatedAt: string): Promise<boolean> {
    const bodies = messages.map(messageJson);
    const at = iso(updatedAt);
    return this.db.tx(async (q) => {
      const conv = await q.query<{ workflow_id: string }>('UPDATE chat_conversations SET updated_at = $1 WHERE id = $2 RETURNING workflow_id', [at, id]);
      const workflowId = conv.rows[0]?.workflow_id;
      if (workflowId === undefined) return false;
      const last = await q.query<{ seq: number | null }>('SELECT max(seq) AS seq FROM chat_messages WHERE conversation_id = $1', [id]);
      await insertMessages(q, id, workflowId, (last.rows[0]?.seq ?? -1) + 1, bodies);
      return true;
    });
  }

  async putCode(code: ChatCode): Promise<void> {
    await this.db.query(`INSERT INTO chat_codes (subdomain, email, client, workflow_id, code_hash, expires_at, attempts)
      VALUES ($1, $2, $3, (SELECT workflow_id FROM chat_deployments WHERE subdomain = $1), $4, $5, $6)
      ON CONFLICT (subdomain, email, client) DO UPDATE SET workflow_id = excluded.workflow_id, code_hash = excluded.code_hash,
        expires_at = excluded.expires_at, attempts = excluded.attempts`,
    [code.subdomain, code.email, code.client, code.codeHash, iso(code.expiresAt), code.attempts]);
  }

  async getCode(subdomain: string, email: string, client: string): Promise<ChatCode | null> {
    const { rows } = await this.db.query<CodeRow>('SELECT * FROM chat_codes WHERE subdomain = $1 AND email = $2 AND client = $3', [subdomain, email, client]);
    const row = rows[0];
    return row ? toCode(row) : null;
  }

  async countAttempt(subdomain: string, email: string, client: string): Promise<number> {
    const { rows } = await this.db.query<{ attempts: number }>(
      'UPDATE chat_codes SET attempts = attempts + 1 WHERE subdomain = $1 AND email = $2 AND client = $3 RETURNING attempts', [subdomain, email, client],
    );
    return rows[0]?.attempts ?? 0;
  }

  async deleteCode(subdomain: string, email: string, client: string): Promise<void> {
    await this.db.query('DELETE FROM chat_codes WHERE subdomain = $1 AND email = $2 AND client = $3', [subdomain, email, client]);
  }

  async setConversationToken(id: string, tokenHash: string): Promise<boolean> {
    const { rowCount } = await this.db.query('UPDATE chat_conversations SET token_hash = $1 WHERE id = $2', [tokenHash, id]);
    return (rowCount ?? 0) > 0;
  }

  /** Expired sessions go with each sign-in, so the table holds the live ones and few others. */
  async putSession(session: ChatSession, now: string): Promise<void> {
    await this.db.tx(async (q) => {
      await q.query('DELETE FROM chat_sessions WHERE expires_at < $1', [iso(now)]);
      await q.query(`INSERT INTO chat_sessions (id_hash, workflow_id, subdomain, email, expires_at) VALUES ($1, $2, $3, $4, $5)
        ON CONFLICT (id_hash) DO UPDATE SET workflow_id = excluded.workflow_id, subdomain = excluded.subdomain,
          email = excluded.email, expires_at = excluded.expires_at`,
      [session.idHash, session.workflowId, session.subdomain, session.email, iso(session.expiresAt)]);
    });
  }

  async getSession(idHash: string): Promise<ChatSession | null> {
    const { rows } = await this.db.query<SessionRow>('SELECT * FROM chat_sessions WHERE id_hash = $1', [idHash]);
    const row = rows[0];
    return row ? toSession(row) : null;
  }

  async deleteSession(idHash: string): Promise<boolean> {
    const { rowCount } = await this.db.query('DELETE FROM chat_sessions WHERE id_hash = $1', [idHash]);
    return (rowCount ?? 0) > 0;
  }
}

async function insertMessages(q: { query: Pg['query'] }, conversationId: string, workflowId: string, first: number, bodies: readonly string[]): Promise<void> {
  if (bodies.length === 0) return;
  await q.query(`INSERT INTO chat_messages (conversation_id, seq, workflow_id, body)
    SELECT $1, $2::int + o - 1, $3, b FROM unnest($4::text[]) WITH ORDINALITY AS t(b, o)`, [conversationId, first, workflowId, bodies]);
}
