/**
 * One chat message (SPEC §4.4, §9): rate-limited where it arrives, then answered by its
 * conversation's session actor (chat-sessions.ts), one turn at a time in arrival order: here
 * when the session is here or free to take, else sent on to the instance that holds it, whose
 * answer is streamed from the run's events wherever it runs. What a turn does is chat-turns.ts.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { TroupeError, type ErrorCode } from '../errors.js';
import type { ExecutionHandle } from '../engine/engine.js';
import type { ChatDeployment, Store } from '../store/types.js';
import type { ChatVisitor } from './chat.js';
import { ChatSessions, DEFAULT_CHAT_IDLE_MS, type ChatPlacement, type ForwardedMessage, type ForwardReply } from './chat-sessions.js';
import { ChatTurns, type ChatTurn, type TurnRequest } from './chat-turns.js';
import type { DeploymentService } from './deployments.js';
import type { ExecutionService } from './executions.js';
import { TokenBuckets } from './rate-limit.js';

export { HISTORY_WINDOW, MAX_CONVERSATION_MESSAGES, type Answer, type ChatTurn, type TurnOutcome } from './chat-turns.js';

const MESSAGES_PER_MINUTE = 30;
/** how long a message waits for a session whose owner is gone to be free (its lease to expire) */
const PLACE_WAIT_MS = 30_000;
const PLACE_RETRY_MS = 500;

export interface MessageBody {
  message: string;
  conversationId?: string | undefined;
  conversationToken?: string | undefined;
  /** the client's id of this message: sent again (a retry), it is the same turn (SPEC §4.4 extension, docs/architecture.md) */
  messageId?: string | undefined;
}

export interface ChatMessagesDeps {
  store: Store;
  deployments: DeploymentService;
  executions: ExecutionService;
  logger: Logger;
  now: () => number;
  /** how long a session stays active without a message (TROUPE_CHAT_IDLE_MS) */
  idleMs?: number;
}

export class ChatMessages {
  private readonly perVisitor: TokenBuckets;
  readonly turns: ChatTurns;
  readonly sessions: ChatSessions;

  constructor(private readonly deps: ChatMessagesDeps) {
    this.perVisitor = new TokenBuckets(MESSAGES_PER_MINUTE, deps.now);
    this.turns = new ChatTurns(deps);
    this.sessions = new ChatSessions({
      idleMs: deps.idleMs ?? DEFAULT_CHAT_IDLE_MS, logger: deps.logger,
      rehydrate: (id) => this.turns.rehydrate(id).catch((err: unknown) => deps.logger.warn({ err, conversationId: id }, 'chat session: an earlier turn could not be settled')),
    });
  }

  /** From now on sessions are placed by this port (a cluster), else all here. */
  usePlacement(placement: ChatPlacement): void {
    this.sessions.placement = placement;
  }

  /** 429, then what a turn refuses (chat-turns.ts) — all before anything is written. */
  async start(chat: ChatDeployment, visitor: ChatVisitor, ip: string, body: MessageBody): Promise<ChatTurn> {
    const taken = this.perVisitor.take(`${chat.subdomain}\u0000${visitor.email ?? ip}`);
    if (!taken.ok) throw new TroupeError('RATE_LIMITED', 'too many messages; slow down', { details: { retryAfterSec: taken.retryAfterSec } });
    // an id of our own when the client sends none: a forward retried after its owner died is then one turn still
    const request: TurnRequest = { message: body.message, conversationToken: body.conversationToken, messageId: body.messageId ?? randomUUID() };
    const isNew = body.conversationId === undefined;
    // refused here, before any lease or session: an id that is not the visitor's activates nothing
    if (!isNew) await this.turns.existing(chat, visitor, body.conversationId as string, body.conversationToken);
    const conversationId = body.conversationId ?? randomUUID();
    const deadline = this.deps.now() + PLACE_WAIT_MS;
    for (;;) {
      const where = await this.sessions.placement.place(conversationId);
      if (where.kind === 'here') return this.here(chat, visitor, request, conversationId, isNew);
      const msg: ForwardedMessage = { subdomain: chat.subdomain, visitor: { email: visitor.email }, conversationId, body: request };
      const reply = await this.sessions.placement.forward(where.owner, msg).catch((err: unknown) => {
        // its owner is gone: its lease expires, then this instance takes the session
        if (err instanceof TroupeError && (err.code === 'NO_RESPONDERS' || err.code === 'BUS_TIMEOUT')) return { kind: 'moved' } as const;
        throw err;
      });
      if (reply.kind === 'started') return this.followed(chat, reply);
      if (reply.kind === 'error') throw new TroupeError(reply.code as ErrorCode, reply.message, reply.details === undefined ? {} : { details: reply.details });
      if (this.deps.now() > deadline) throw new TroupeError('BUS_UNAVAILABLE', 'this conversation cannot be reached right now; retry later', { retryable: true, details: { retryAfterSec: 1 } });
      await new Promise((resolve) => setTimeout(resolve, PLACE_RETRY_MS));
    }
  }

  /** The turn in the conversation's session here: resolves once it began (or was refused). */
  private here(chat: ChatDeployment, visitor: ChatVisitor, request: TurnRequest, conversationId: string, isNew: boolean): Promise<ChatTurn> {
    return new Promise<ChatTurn>((resolve, reject) => {
      this.sessions.submit(conversationId, {
        run: async () => {
          let turn: ChatTurn;
          try {
            turn = await this.turns.begin(chat, visitor, request, conversationId, isNew);
          } catch (err) {
            reject(err);
            return;
          }
          resolve(turn);
          // the next turn waits for this one's answer: its history holds it
          await turn.answer.catch(() => undefined);
        },
        abandon: reject,
      });
    });
  }

  /** A turn begun at the owner: its outcome read from its run, wherever that runs. */
  private followed(chat: ChatDeployment, reply: Extract<ForwardReply, { kind: 'started' }>): ChatTurn {
    return { ...reply, answer: this.turns.outcomeOf(chat, reply.conversationId, reply.executionId, false) };
  }

  /** A message another instance sent on: its turn here, or `moved` when the session is not here (any more). */
  async serveForwarded(msg: ForwardedMessage): Promise<ForwardReply> {
    try {
      if ((await this.sessions.placement.place(msg.conversationId)).kind !== 'here') return { kind: 'moved' };
      const chat = await this.deps.store.chats.getBySubdomain(msg.subdomain);
      if (chat === null) throw new TroupeError('NOT_FOUND', `no chat at ${msg.subdomain}`);
      const turn = await this.here(chat, msg.visitor, msg.body, msg.conversationId, false);
      return { kind: 'started', conversationId: turn.conversationId, conversationToken: turn.conversationToken, executionId: turn.executionId };
    } catch (err) {
      if (err instanceof TroupeError) return { kind: 'error', code: err.code, message: err.message, ...(err.details === undefined ? {} : { details: err.details }) };
      throw err;
    }
  }

  /** A chat execution that restart recovery or a takeover resumed (see ChatTurns.adopt). */
  adopt(handle: ExecutionHandle, trigger: object): Promise<void> {
    return this.turns.adopt(handle, trigger);
  }
}
