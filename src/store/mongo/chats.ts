/**
 * Chat deployments, conversations and sign-in codes on MongoDB. The chat's `_id` is its
 * workflow id and a unique index holds its subdomain, so two deploys racing for one subdomain
 * cannot both win. A conversation's messages are an array appended with `$push`/`$each`: one
 * atomic update, in order, that sets `updatedAt` with it.
 */
import type { Collection, Db } from 'mongodb';
import { TroupeError } from '../../errors.js';
import { conflict, fromJson, iso, toJson } from '../shared.js';
import type { ChatCode, ChatDeployment, ChatMessage, ChatRepo, ChatSession, Conversation } from '../types.js';
import { COLLECTIONS, isDuplicateKey } from './collections.js';
import type { ChatCodeDoc, ChatConversationDoc, ChatDeploymentDoc, ChatSessionDoc } from './collections.js';

type ChatBody = Pick<ChatDeployment, 'auth' | 'branding' | 'output'>;

function toChat(doc: ChatDeploymentDoc): ChatDeployment {
  const body = fromJson(doc.body) as ChatBody;
  return {
    workflowId: doc._id,
    subdomain: doc.subdomain,
    auth: body.auth,
    branding: body.branding,
    ...(body.output !== undefined && body.output !== null ? { output: body.output } : {}),
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
}

function toConversation(doc: ChatConversationDoc): Conversation {
  return {
    id: doc._id,
    workflowId: doc.workflowId,
    subdomain: doc.subdomain,
    owner: doc.owner,
    ...(doc.tokenHash === undefined ? {} : { tokenHash: doc.tokenHash }),
    messages: doc.messages.map((m) => fromJson(m) as ChatMessage),
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
}

function toCode(doc: ChatCodeDoc): ChatCode {
  return { subdomain: doc.subdomain, email: doc.email, client: doc.client, codeHash: doc.codeHash, expiresAt: doc.expiresAt, attempts: doc.attempts };
}

/** The stored form of a message: its timestamp normalized, no undefined fields. */
function messageJson(m: ChatMessage): string {
  return toJson({ role: m.role, content: m.content, at: iso(m.at), ...(m.executionId !== undefined ? { executionId: m.executionId } : {}), ...(m.messageId !== undefined ? { messageId: m.messageId } : {}) });
}

/** codes of an earlier version, keyed by (subdomain, email) only, match no key: asked for again */
function codeKey(subdomain: string, email: string, client: string): string {
  return JSON.stringify([subdomain, email, client]);
}

function subdomainConflict(subdomain: string): TroupeError {
  return new TroupeError('CONFLICT', `chat subdomain "${subdomain}" is already used by another workflow`, { details: { subdomain } });
}

export class MongoChats implements ChatRepo {
  private readonly chats: Collection<ChatDeploymentDoc>;
  private readonly conversations: Collection<ChatConversationDoc>;
  private readonly codes: Collection<ChatCodeDoc>;
  private readonly sessions: Collection<ChatSessionDoc>;

  constructor(db: Db) {
    this.chats = db.collection<ChatDeploymentDoc>(COLLECTIONS.chatDeployments);
    this.conversations = db.collection<ChatConversationDoc>(COLLECTIONS.chatConversations);
    this.codes = db.collection<ChatCodeDoc>(COLLECTIONS.chatCodes);
    this.sessions = db.collection<ChatSessionDoc>(COLLECTIONS.chatSessions);
  }

  async put(chat: ChatDeployment): Promise<{ chat: ChatDeployment; created: boolean }> {
    const body = toJson({ auth: chat.auth, branding: chat.branding, ...(chat.output !== undefined ? { output: chat.output } : {}) });
    const holder = await this.chats.findOne({ subdomain: chat.subdomain, _id: { $ne: chat.workflowId } });
    if (holder) throw subdomainConflict(chat.subdomain);
    const stored = await this.upsertChat(chat, body, false);
    // codes sent for a subdomain this workflow left, or sent while another workflow held it, sign in nowhere
    await this.codes.deleteMany({
      $or: [
        { workflowId: chat.workflowId, subdomain: { $ne: chat.subdomain } },
        { subdomain: chat.subdomain, workflowId: { $ne: chat.workflowId } },
      ],
    });
    return stored;
  }

  private async upsertChat(chat: ChatDeployment, body: string, retried: boolean): Promise<{ chat: ChatDeployment; created: boolean }> {
    try {
      // $setOnInsert keeps createdAt on a replace, in the same atomic update
      const res = await this.chats.findOneAndUpdate(
        { _id: chat.workflowId },
        { $set: { subdomain: chat.subdomain, body, updatedAt: iso(chat.updatedAt) }, $setOnInsert: { createdAt: iso(chat.createdAt) } },
        { upsert: true, returnDocument: 'after', includeResultMetadata: true },
      );
      if (res.value === null) throw new TroupeError('STORE_ERROR', `chat of workflow ${chat.workflowId} was not written`);
      return { chat: toChat(res.value), created: res.lastErrorObject?.['upserted'] !== undefined };
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      // the unique subdomain index: another workflow took it since the check, nothing was written
      const holder = await this.chats.findOne({ subdomain: chat.subdomain });
      if (holder !== null && holder._id !== chat.workflowId) throw subdomainConflict(chat.subdomain);
      // the same workflow put twice at once: both upserts inserted, one lost the race
      if (retried) throw err;
      return this.upsertChat(chat, body, true);
    }
  }

  async getByWorkflow(workflowId: string): Promise<ChatDeployment | null> {
    const doc = await this.chats.findOne({ _id: workflowId });
    return doc ? toChat(doc) : null;
  }

  async getBySubdomain(subdomain: string): Promise<ChatDeployment | null> {
    const doc = await this.chats.findOne({ subdomain });
    return doc ? toChat(doc) : null;
  }

  async delete(workflowId: string): Promise<boolean> {
    const chat = await this.chats.findOne({ _id: workflowId });
    // dependents first: an interrupted delete leaves a chat without conversations, never the reverse
    await this.conversations.deleteMany({ workflowId });
    await this.codes.deleteMany(chat ? { $or: [{ workflowId }, { subdomain: chat.subdomain }] } : { workflowId });
    await this.sessions.deleteMany({ workflowId });
    return (await this.chats.deleteOne({ _id: workflowId })).deletedCount > 0;
  }

  async createConversation(c: Conversation): Promise<Conversation> {
    const doc: ChatConversationDoc = {
      _id: c.id,
      workflowId: c.workflowId,
      subdomain: c.subdomain,
      owner: c.owner,
      ...(c.tokenHash === undefined ? {} : { tokenHash: c.tokenHash }),
      messages: c.messages.map(messageJson),
      createdAt: iso(c.createdAt),
      updatedAt: iso(c.updatedAt),
    };
    try {
      await this.conversations.insertOne(doc);
    } catch (err) {
      if (isDuplicateKey(err)) throw conflict('conversation', c.id);
      throw err;
    }
    return toConversation(doc);
  }

  async getConversation(id: string): Promise<Conversation | null> {
    const doc = await this.conversations.findOne({ _id: id });
    return doc ? toConversation(doc) : null;
  }

  async appendMessages(id: string, messages: readonly ChatMessage[], updatedAt: string): Promise<boolean> {
    const res = await this.conversations.updateOne(
      { _id: id },
      { $push: { messages: { $each: messages.map(messageJson) } }, $set: { updatedAt: iso(updatedAt) } },
    );
    return res.matchedCount === 1;
  }

  async putCode(code: ChatCode): Promise<void> {
    const chat = await this.chats.findOne({ subdomain: code.subdomain }, { projection: { _id: 1 } });
    const replacement = {
      subdomain: code.subdomain,
      email: code.email,
      client: code.client,
      workflowId: chat?._id ?? null,
      codeHash: code.codeHash,
      expiresAt: iso(code.expiresAt),
      attempts: code.attempts,
    };
    const _id = codeKey(code.subdomain, code.email, code.client);
    try {
      await this.codes.replaceOne({ _id }, replacement, { upsert: true });
    } catch (err) {
      // two codes for the same address at once: both upserts inserted, the later one replaces
      if (!isDuplicateKey(err)) throw err;
      await this.codes.replaceOne({ _id }, replacement, { upsert: true });
    }
  }

  async getCode(subdomain: string, email: string, client: string): Promise<ChatCode | null> {
    const doc = await this.codes.findOne({ _id: codeKey(subdomain, email, client) });
    return doc ? toCode(doc) : null;
  }

  async countAttempt(subdomain: string, email: string, client: string): Promise<number> {
    const doc = await this.codes.findOneAndUpdate({ _id: codeKey(subdomain, email, client) }, { $inc: { attempts: 1 } }, { returnDocument: 'after' });
    return doc?.attempts ?? 0;
  }

  async deleteCode(subdomain: string, email: string, client: string): Promise<void> {
    await this.codes.deleteOne({ _id: codeKey(subdomain, email, client) });
  }

  async setConversationToken(id: string, tokenHash: string): Promise<boolean> {
    return (await this.conversations.updateOne({ _id: id }, { $set: { tokenHash } })).matchedCount === 1;
  }

  async putSession(session: ChatSession, now: string): Promise<void> {
    await this.sessions.deleteMany({ expiresAt: { $lt: iso(now) } });
    const doc: ChatSessionDoc = { _id: session.idHash, workflowId: session.workflowId, subdomain: session.subdomain, email: session.email, expiresAt: iso(session.expiresAt) };
    await this.sessions.replaceOne({ _id: session.idHash }, doc, { upsert: true });
  }

  async getSession(idHash: string): Promise<ChatSession | null> {
    const doc = await this.sessions.findOne({ _id: idHash });
    return doc ? { idHash: doc._id, workflowId: doc.workflowId, subdomain: doc.subdomain, email: doc.email, expiresAt: doc.expiresAt } : null;
  }

  async deleteSession(idHash: string): Promise<boolean> {
    return (await this.sessions.deleteOne({ _id: idHash })).deletedCount > 0;
  }
}
