/**
 * One turn of a chat conversation (SPEC §4.4), as the conversation's session actor runs it:
 * checks, the run on the deployed version with `{ message, conversationId, turn, history }` and
 * `<start.conversationId>`, and the answer kept in the conversation. The answer is stored when
 * the run ends, whether or not the visitor is still listening, so a closed tab loses nothing.
 * A message whose client id is already a turn of the conversation (a retry) is that turn again.
 */
import type { Logger } from 'pino';
import { TroupeError } from '../errors.js';
import type { ExecutionHandle } from '../engine/engine.js';
import { answerBelongs, turnDecision, unansweredTurn } from '../model/chat-turn.js';
import type { ExecutionEvent, ExecutionResult, ResponseOutput } from '../runtime/types.js';
import type { BlockLog, ChatDeployment, ChatMessage, Conversation, ExecutionRecord, Store } from '../store/types.js';
import { answerOf, answerText } from './chat-answer.js';
import { newToken, tokenHash, tokenMatches } from './chat-auth.js';
import type { ChatVisitor } from './chat.js';
import type { LoadedWorkflow } from './compiled-cache.js';
import type { DeploymentService } from './deployments.js';
import type { ExecutionService } from './executions.js';

/** the earlier messages a run is handed (the most recent ones) */
export const HISTORY_WINDOW = 40;
/** a conversation past this many messages takes no more: start a new one */
export const MAX_CONVERSATION_MESSAGES = 500;
/** how long the owner of a session gives the instance that ran a turn to store its answer before storing it itself */
const ANSWER_GRACE_MS = 3_000;

export interface ChatTurnsDeps {
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

/** How a turn ended: its answer, or the code of its run's failure */
export interface TurnOutcome {
  executionId: string;
  errorCode: string | null;
  answer: Answer | null;
}

export interface ChatTurn {
  conversationId: string;
  /** what the visitor shows to continue this conversation (SPEC §4.4): sent with `done` */
  conversationToken: string;
  executionId: string;
  /** resolves when the run has ended and its answer is stored */
  answer: Promise<TurnOutcome>;
}

/** A message as its turn takes it: `messageId` is the client's, or one the entry instance chose. */
export interface TurnRequest {
  message: string;
  conversationToken?: string | undefined;
  messageId: string;
}

export class ChatTurns {
  constructor(private readonly deps: ChatTurnsDeps) {}

  /** 403 NOT_DEPLOYED, 403 FORBIDDEN (not the visitor's conversation), 409 (full), 422, 503 — all before anything is written. */
  async begin(chat: ChatDeployment, visitor: ChatVisitor, body: TurnRequest, conversationId: string, isNew: boolean): Promise<ChatTurn> {
    const deployment = await this.deps.deployments.get(chat.workflowId);
    // the workflow's id is nobody's business on a public page
    if (deployment === null) throw new TroupeError('NOT_DEPLOYED', 'this chat is not available right now');
    const loaded = await this.deps.deployments.loadDeployed(deployment);
    const earlier = isNew ? null : await this.existing(chat, visitor, conversationId, body.conversationToken);
    const decision = turnDecision(earlier?.messages ?? [], body.messageId);
    if (earlier !== null && decision.kind !== 'new') {
      const token = await this.tokenFor(earlier, body.conversationToken);
      return { conversationId, conversationToken: token, executionId: decision.executionId, answer: this.outcomeOf(chat, conversationId, decision.executionId, true) };
    }
    if (earlier !== null && earlier.messages.length >= MAX_CONVERSATION_MESSAGES) {
      throw new TroupeError('CONFLICT', 'this conversation is full; start a new one', { details: { maxMessages: MAX_CONVERSATION_MESSAGES } });
    }
    const history = (earlier?.messages ?? []).slice(-HISTORY_WINDOW).map((m) => ({ role: m.role, content: m.content }));
    // which user message of the conversation this is: `history` is a window and cannot tell
    const turn = (earlier?.messages ?? []).filter((m) => m.role === 'user').length + 1;
    const input = { message: body.message, conversationId, turn, history };
    this.deps.executions.validateInput(loaded, input);
    this.deps.executions.ensureCapacity();
    const token = await this.tokenFor(earlier, body.conversationToken);
    const conversation = earlier ?? (await this.create(chat, visitor, conversationId, tokenHash(token)));
    return this.run(chat, conversation, token, loaded, input, body.messageId);
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

  private async run(chat: ChatDeployment, conversation: Conversation, conversationToken: string, loaded: LoadedWorkflow, input: { message: string; conversationId: string }, messageId: string): Promise<ChatTurn> {
    const trigger = { type: 'chat' as const, subdomain: chat.subdomain, conversationId: conversation.id };
    const handle = await this.deps.executions.start(loaded, input, trigger, { conversationId: conversation.id });
    // kept as the execution record keeps it, secret values as `***`: the history is stored for
    // good and handed to every later turn. This turn's run reads the message as it was typed
    // (blocks compute on true data, docs/config.md); later turns read `***` in `history`.
    await this.append(conversation.id, { role: 'user', content: handle.redactText(input.message), at: this.at(), messageId, executionId: handle.id });
    const answer = this.answerOfRun(chat, conversation.id, handle);
    return { conversationId: conversation.id, conversationToken, executionId: handle.id, answer };
  }

  private answerOfRun(chat: ChatDeployment, conversationId: string, handle: ExecutionHandle): Promise<TurnOutcome> {
    const outputs = new Map<string, unknown>();
    const unsubscribe = handle.subscribe((e: ExecutionEvent) => {
      if (e.type === 'block.completed') outputs.set(e.data.blockId, e.data.output);
    });
    return handle.done.then(async (result) => {
      unsubscribe();
      if (result.status !== 'completed') return failed(result.id, result.error?.code);
      const output = answerOf(chat, result, outputs);
      const text = answerText(output);
      await this.append(conversationId, { role: 'assistant', content: text, at: this.at(), executionId: result.id }).catch((err: unknown) =>
        this.deps.logger.error({ err, conversationId }, 'chat answer not stored'),
      );
      return { executionId: result.id, errorCode: null, answer: { output, text } };
    });
  }

  /**
   * The outcome of a turn whose run began earlier or elsewhere (a retry, a turn an owner that
   * died left, a message sent on to its owner): once the run has ended wherever it runs, its
   * answer from the record. With `repair` (the session's owner only, whose turns are one at a
   * time) the answer is stored when it is not there yet, after a grace for the instance that
   * ran it to store it (ChatTurns.adopt), so it is stored once.
   */
  async outcomeOf(chat: ChatDeployment, conversationId: string, executionId: string, repair: boolean): Promise<TurnOutcome> {
    await this.deps.executions.follow(executionId, () => undefined, new AbortController().signal);
    const rec = await this.deps.store.executions.get(executionId);
    if (rec === null) return failed(executionId, 'NOT_FOUND');
    if (rec.status !== 'completed') return failed(executionId, (rec.error as { code?: string } | null)?.code ?? rec.status.toUpperCase());
    const output = answerFromRecord(chat, rec);
    const text = answerText(output);
    if (repair && (await this.stillUnanswered(conversationId, executionId))) {
      await this.append(conversationId, { role: 'assistant', content: text, at: this.at(), executionId });
    }
    return { executionId, errorCode: null, answer: { output, text } };
  }

  /** Whether the run's answer is still missing from its conversation after the grace. */
  private async stillUnanswered(conversationId: string, executionId: string): Promise<boolean> {
    const until = this.deps.now() + ANSWER_GRACE_MS;
    for (;;) {
      const conversation = await this.deps.store.chats.getConversation(conversationId);
      if (conversation === null || !answerBelongs(conversation.messages, executionId)) return false;
      if (this.deps.now() >= until) return true;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /**
   * Rehydration: a session activated here settles the turn an earlier owner left unanswered
   * before it takes the next, so that turn's answer (its run resumed elsewhere) comes first.
   */
  async rehydrate(conversationId: string): Promise<void> {
    const conversation = await this.deps.store.chats.getConversation(conversationId);
    const pending = conversation === null ? null : unansweredTurn(conversation.messages);
    if (conversation === null || pending === null) return;
    const chat = await this.deps.store.chats.getBySubdomain(conversation.subdomain);
    if (chat !== null) await this.outcomeOf(chat, conversationId, pending, true);
  }

  /**
   * A chat execution that restart recovery resumed: its answer joins its conversation when it
   * ends, as a live one's does (the visitor who asked is gone with the crashed process; the
   * conversation, which survives restarts, keeps the answer for the next visit) — once, and
   * only after its question.
   */
  async adopt(handle: ExecutionHandle, trigger: object): Promise<void> {
    const { subdomain, conversationId } = trigger as { subdomain?: unknown; conversationId?: unknown };
    const result = await handle.done;
    if (result.status !== 'completed' || typeof subdomain !== 'string' || typeof conversationId !== 'string') return;
    const chat = await this.deps.store.chats.getBySubdomain(subdomain);
    const rec = await this.deps.store.executions.get(result.id);
    const conversation = await this.deps.store.chats.getConversation(conversationId);
    if (chat === null || rec === null || conversation === null || !answerBelongs(conversation.messages, result.id)) return;
    const text = answerText(answerOf(chat, result, blockOutputs(rec.logs)));
    await this.append(conversationId, { role: 'assistant', content: text, at: this.at(), executionId: result.id });
  }

  /**
   * SPEC §4.4: a conversation is continued with its token, or in an email chat from a session of
   * its owner's address. Anything else (no token, a wrong one, another workflow's conversation,
   * an unknown id) is the same 403, so nothing tells whether the id exists. A workflow has one
   * chat, so its conversations are the chat's whatever subdomain they began on: a new subdomain
   * keeps the history (a deleted chat takes its conversations).
   */
  async existing(chat: ChatDeployment, visitor: ChatVisitor, id: string, token: string | undefined): Promise<Conversation> {
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

function failed(executionId: string, code: string | undefined): TurnOutcome {
  return { executionId, errorCode: code ?? 'FAILED', answer: null };
}

/** the top-level blocks' outputs of a record: a run before a crash settled some of them */
function blockOutputs(logs: readonly BlockLog[]): Map<string, unknown> {
  return new Map(logs.filter((l) => l.iteration === null && l.status === 'completed').map((l) => [l.blockId, l.output] as const));
}

/** The answer of a completed run read back from its record, as its live run gave it. */
function answerFromRecord(chat: ChatDeployment, rec: ExecutionRecord & { logs: BlockLog[] }): unknown {
  const responded = rec.logs.find((l) => l.iteration === null && l.status === 'completed' && l.blockType === 'response');
  const response = (responded?.output ?? null) as ResponseOutput | null;
  const result = { output: rec.output, response } as Pick<ExecutionResult, 'output' | 'response'> as ExecutionResult;
  return answerOf(chat, result, blockOutputs(rec.logs));
}
