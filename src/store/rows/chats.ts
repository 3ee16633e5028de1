/** The rows of chat deployments, conversations, codes and sessions, shared by the SQL adapters (sqlite, postgres). */
import { TroupeError } from '../../errors.js';
import { fromJson, iso, toJson } from '../shared.js';
import type { ChatCode, ChatDeployment, ChatMessage, ChatSession, Conversation } from '../types.js';

export interface ChatRow {
  workflow_id: string;
  subdomain: string;
  body: string;
  created_at: string;
  updated_at: string;
}

export interface ConversationRow {
  id: string;
  workflow_id: string;
  subdomain: string;
  owner: string | null;
  token_hash: string | null;
  created_at: string;
  updated_at: string;
}

export interface SessionRow {
  id_hash: string;
  workflow_id: string;
  subdomain: string;
  email: string | null;
  expires_at: string;
}

export interface CodeRow {
  subdomain: string;
  email: string;
  client: string;
  code_hash: string;
  expires_at: string;
  attempts: number;
}

export type ChatBody = Pick<ChatDeployment, 'auth' | 'branding' | 'output'>;

export function toChat(row: ChatRow): ChatDeployment {
  const body = fromJson(row.body) as ChatBody;
  return {
    workflowId: row.workflow_id, subdomain: row.subdomain, auth: body.auth, branding: body.branding,
    ...(body.output !== undefined && body.output !== null ? { output: body.output } : {}),
    createdAt: row.created_at, updatedAt: row.updated_at,
  };
}

export function toConversation(row: ConversationRow, messages: ChatMessage[]): Conversation {
  return {
    id: row.id, workflowId: row.workflow_id, subdomain: row.subdomain, owner: row.owner,
    ...(row.token_hash === null ? {} : { tokenHash: row.token_hash }),
    messages, createdAt: row.created_at, updatedAt: row.updated_at,
  };
}

export function toCode(row: CodeRow): ChatCode {
  return { subdomain: row.subdomain, email: row.email, client: row.client, codeHash: row.code_hash, expiresAt: row.expires_at, attempts: row.attempts };
}

export function toSession(row: SessionRow): ChatSession {
  return { idHash: row.id_hash, workflowId: row.workflow_id, subdomain: row.subdomain, email: row.email, expiresAt: row.expires_at };
}

/** The stored form of a message: its timestamp normalized, no undefined fields. */
export function messageJson(m: ChatMessage): string {
  return toJson({ role: m.role, content: m.content, at: iso(m.at), ...(m.executionId !== undefined ? { executionId: m.executionId } : {}), ...(m.messageId !== undefined ? { messageId: m.messageId } : {}) });
}

export function subdomainConflict(subdomain: string): TroupeError {
  return new TroupeError('CONFLICT', `chat subdomain "${subdomain}" is already used by another workflow`, { details: { subdomain } });
}
