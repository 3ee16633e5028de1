/**
 * One chat message (SPEC §4.4): checks, the run on the deployed version with
 * `{ message, conversationId, turn, history }` and `<start.conversationId>`, and the answer kept in the
 * conversation. The answer is stored when the run ends, whether or not the visitor is still
 * listening, so a closed tab loses nothing.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { TroupeError } from '../errors.js';
import type { ExecutionHandle } from '../engine/engine.js';
import type { ExecutionEvent, ExecutionResult } from '../runtime/types.js';
import type { ChatDeployment, ChatMessage, Conversation, Store } from '../store/types.js';
import { answerOf, answerText } from './chat-answer.js';
import { newToken, tokenHash, tokenMatches } from './chat-auth.js';
import type { ChatVisitor } from './chat.js';
import type { LoadedWorkflow } from './compiled-cache.js';
import type { DeploymentService } from './deployments.js';
import type { ExecutionService } from './executions.js';
import { TokenBuckets } from './rate-limit.js';

/** the earlier messages a run is handed (the most recent ones) */
export const HISTORY_WINDOW = 40;
/** a conversation past this many messages takes no more: start a new one */
export const MAX_CONVERSATION_MESSAGES = 500;
const MESSAGES_PER_MINUTE = 30;

export interface MessageBody {
  message: string;
  conversationId?: string | undefined;
  conversationToken?: string | undefined;
}

export interface ChatMessagesDeps {
  store: Store;
  deployments: DeploymentService;
  executions: ExecutionService;
  logger: Logger;
  now: () => number;
}

export interface Answer {
  output: unknown;
  text: string;
}

export interface StartedMessage {
  conversation: Conversation;
  /** what the visitor shows to continue this conversation (SPEC §4.4): sent with `done` */
  conversationToken: string;
  handle: ExecutionHandle;
  /** resolves when the run has ended and its answer is stored: null when it failed */
  answer: Promise<{ result: ExecutionResult; answer: Answer | null }>;
}

export class ChatMessages {
  private readonly perVisitor: TokenBuckets;
  /** per conversation, the turn being answered here: the next message waits for it */
  private readonly turns = new Map<string, Promise<void>>();

  constructor(private readonly deps: ChatMessagesDeps) {
    this.perVisitor = new TokenBuckets(MESSAGES_PER_MINUTE, deps.now);
  }

  /** 429, 403 NOT_DEPLOYED, 403 FORBIDDEN (not the visitor's conversation), 409 (full), 422, 503 — all before anything is written. */
  async start(chat: ChatDeployment, visitor: ChatVisitor, ip: string, body: MessageBody): Promise<StartedMessage> {
    const taken = this.perVisitor.take(`${chat.subdomain}\u0000${visitor.email ?? ip}`);
    if (!taken.ok) throw new TroupeError('RATE_LIMITED', 'too many messages; slow down', { details: { retryAfterSec: taken.retryAfterSec } });
    if (body.conversationId === undefined) return this.startTurn(chat, visitor, body);
    // one turn at a time per conversation (in this process): a message sent while the previous
    // one is being answered waits for that answer, so its history holds it and the
    // conversation reads user, assistant, user, assistant
    const release = this.queueTurn(body.conversationId);
    await release.previous;
    try {
      const started = await this.startTurn(chat, visitor, body);
      void started.answer.then(release.done, release.done);
      return started;
    } catch (err) {
      release.done();
      throw err;
    }
  }

  /** Takes the conversation's next turn: `previous` settles when the turn before it has its answer. */
  private queueTurn(conversationId: string): { previous: Promise<void>; done: () => void } {
    const previous = this.turns.get(conversationId) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    const chained = previous.then(() => mine);
    this.turns.set(conversationId, chained);
    void chained.then(() => {
      if (this.turns.get(conversationId) === chained) this.turns.delete(conversationId);
    });
    return { previous, done };
  }

  private async startTurn(chat: ChatDeployment, visitor: ChatVisitor, body: MessageBody): Promise<StartedMessage> {
    const deployment = await this.deps.deployments.get(chat.workflowId);
    // the workflow's id is nobody's business on a public page
    if (deployment === null) throw new TroupeError('NOT_DEPLOYED', 'this chat is not available right now');
    const loaded = await this.deps.deployments.loadDeployed(deployment);
    const earlier = body.conversationId === undefined ? null : await this.existing(chat, visitor, body.conversationId, body.conversationToken);
    if (earlier !== null && earlier.messages.length >= MAX_CONVERSATION_MESSAGES) {
      throw new TroupeError('CONFLICT', 'this conversation is full; start a new one', { details: { maxMessages: MAX_CONVERSATION_MESSAGES } });
    }
    const conversationId = earlier?.id ?? randomUUID();
    const history = (earlier?.messages ?? []).slice(-HISTORY_WINDOW).map((m) => ({ role: m.role, content: m.content }));
    // which user message of the conversation this is: `history` is a window and cannot tell
    const turn = (earlier?.messages ?? []).filter((m) => m.role === 'user').length + 1;
    const input = { message: body.message, conversationId, turn, history };
    this.deps.executions.validateInput(loaded, input);
    this.deps.executions.ensureCapacity();
    const token = await this.tokenFor(earlier, body.conversationToken);
    const conversation = earlier ?? (await this.create(chat, visitor, conversationId, tokenHash(token)));
    return this.run(chat, conversation, token, loaded, input);
  }

  /**
   * The token the answer carries: the one the visitor showed, else a new one. A visitor of an
   * email chat may continue its own conversation by its session alone (another tab, another
   * device): its page gets a new token, and the hash stored is replaced (its other pages have the
   * session too).
   */
  private async tokenFor(earlier: Conversation | null, shown: string | undefined): Promise<string> {
    if (earlier !== null && shown !== undefined && earlier.tokenHash !== undefined && tokenMatches(earlier.tokenHash, shown)) return shown;
    const token = newToken();
    if (earlier !== null) await this.deps.store.chats.setConversationToken(earlier.id, tokenHash(token));
    return token;
  }

  private async run(chat: ChatDeployment, conversation: Conversation, conversationToken: string, loaded: LoadedWorkflow, input: { message: string; conversationId: string }): Promise<StartedMessage> {
    const trigger = { type: 'chat' as const, subdomain: chat.subdomain, conversationId: conversation.id };
    const handle = await this.deps.executions.start(loaded, input, trigger, { conversationId: conversation.id });
    // kept as the execution record keeps it, secret values as `***`: the history is stored for
    // good and handed to every later turn. This turn's run reads the message as it was typed
    // (blocks compute on true data, docs/config.md); later turns read `***` in `history`.
    await this.append(conversation.id, { role: 'user', content: handle.redactText(input.message), at: this.at() });
    const outputs = new Map<string, unknown>();
    const unsubscribe = handle.subscribe((e: ExecutionEvent) => {
      if (e.type === 'block.completed') outputs.set(e.data.blockId, e.data.output);
    });
    const answer = handle.done.then(async (result) => {
      unsubscribe();
      if (result.status !== 'completed') return { result, answer: null };
      const output = answerOf(chat, result, outputs);
      const text = answerText(output);
      await this.append(conversation.id, { role: 'assistant', content: text, at: this.at(), executionId: result.id }).catch((err: unknown) =>
        this.deps.logger.error({ err, conversationId: conversation.id }, 'chat answer not stored'),
      );
      return { result, answer: { output, text } };
    });
    return { conversation, conversationToken, handle, answer };
  }

  /**
   * A chat execution that restart recovery resumed: its answer joins its conversation when it
   * ends, as a live one's does (the visitor who asked is gone with the crashed process; the
   * conversation, which survives restarts, keeps the answer for the next visit).
   */
  async adopt(handle: ExecutionHandle, trigger: object): Promise<void> {
    const { subdomain, conversationId } = trigger as { subdomain?: unknown; conversationId?: unknown };
    const result = await handle.done;
    if (result.status !== 'completed' || typeof subdomain !== 'string' || typeof conversationId !== 'string') return;
    const chat = await this.deps.store.chats.getBySubdomain(subdomain);
    const rec = await this.deps.store.executions.get(result.id);
    if (chat === null || rec === null) return;
    // the blocks' outputs from the record: the run before the crash settled some of them
    const outputs = new Map(rec.logs.filter((l) => l.iteration === null && l.status === 'completed').map((l) => [l.blockId, l.output] as const));
    const text = answerText(answerOf(chat, result, outputs));
    await this.append(conversationId, { role: 'assistant', content: text, at: this.at(), executionId: result.id });
  }

  /**
   * SPEC §4.4: a conversation is continued with its token, or in an email chat from a session of
   * its owner's address. Anything else (no token, a wrong one, another workflow's conversation,
   * an unknown id) is the same 403, so nothing tells whether the id exists. A workflow has one
   * chat, so its conversations are the chat's whatever subdomain they began on: a new subdomain
   * keeps the history (a deleted chat takes its conversations).
   */
  private async existing(chat: ChatDeployment, visitor: ChatVisitor, id: string, token: string | undefined): Promise<Conversation> {
    const found = await this.deps.store.chats.getConversation(id);
    const byToken = token !== undefined && found?.tokenHash !== undefined && tokenMatches(found.tokenHash, token);
    const bySession = chat.auth.mode === 'email' && visitor.email !== null && found?.owner === visitor.email;
    if (found === null || found.workflowId !== chat.workflowId || !(byToken || bySession)) {
      throw new TroupeError('FORBIDDEN', 'this conversation cannot be continued here: start a new one');
    }
    return found;
  }

  private create(chat: ChatDeployment, visitor: ChatVisitor, id: string, hash: string): Promise<Conversation> {
    const at = this.at();
    return this.deps.store.chats.createConversation({ id, workflowId: chat.workflowId, subdomain: chat.subdomain, owner: visitor.email, tokenHash: hash, messages: [], createdAt: at, updatedAt: at });
  }

  private async append(conversationId: string, m: ChatMessage): Promise<void> {
    await this.deps.store.chats.appendMessages(conversationId, [m], m.at);
  }

  private at(): string {
    return new Date(this.deps.now()).toISOString();
  }
}
