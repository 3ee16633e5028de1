/**
 * The chat session actors active on this instance (actors/chat-session.ts), by conversation,
 * and where a conversation's session is: here, or at another instance of a cluster (the
 * ChatPlacement port: embedded, always here; distributed, a lease per conversation in a
 * JetStream key-value bucket, src/server/cluster/chat-leases.ts).
 */
import { createActor, type Actor } from 'xstate';
import type { Logger } from 'pino';
import { chatSessionMachine, type ChatTurnJob } from '../../actors/chat-session.js';
import { TroupeError } from '../errors.js';

/** how long a session stays active without a message before it passivates, by default */
export const DEFAULT_CHAT_IDLE_MS = 300_000;

/** A message sent on to the instance whose session holds its conversation. */
export interface ForwardedMessage {
  subdomain: string;
  visitor: { email: string | null };
  conversationId: string;
  body: { message: string; conversationToken?: string | undefined; messageId: string };
}

/** What the owner answers once the forwarded message's turn began (or could not). */
export type ForwardReply =
  | { kind: 'started'; conversationId: string; conversationToken: string; executionId: string }
  | { kind: 'error'; code: string; message: string; details?: unknown }
  /** the session is not here (any more): place the message again */
  | { kind: 'moved' };

export interface ChatPlacement {
  /** `here`: this instance holds (or has just taken) the session's lease; else the live owner */
  place(conversationId: string): Promise<{ kind: 'here' } | { kind: 'owner'; owner: string }>;
  /** the session passivated here: its lease goes, so any instance may take it at once */
  release(conversationId: string): Promise<void>;
  /** rejects NO_RESPONDERS (or BUS_TIMEOUT) when the owner is gone */
  forward(owner: string, msg: ForwardedMessage): Promise<ForwardReply>;
}

/** One process: every session is here. */
export const LOCAL_PLACEMENT: ChatPlacement = {
  place: async () => ({ kind: 'here' }),
  release: async () => undefined,
  forward: async () => ({ kind: 'moved' }),
};

export interface ChatSessionsDeps {
  idleMs: number;
  /** settles the turn an earlier owner left unanswered (see ChatMessages.rehydrate) */
  rehydrate(conversationId: string): Promise<void>;
  logger: Logger;
}

type SessionActor = Actor<typeof chatSessionMachine>;

export class ChatSessions {
  private readonly actors = new Map<string, SessionActor>();
  placement: ChatPlacement = LOCAL_PLACEMENT;
  /** sessions activated here since the start, of them rehydrated from the store */
  activated = 0;

  constructor(private readonly deps: ChatSessionsDeps) {}

  /** the conversations whose session is active here */
  get ids(): string[] {
    return [...this.actors.keys()];
  }

  /** Queues the turn in the conversation's session here, activating (rehydrating) it when it is not active. */
  submit(conversationId: string, job: ChatTurnJob): void {
    const actor = this.actors.get(conversationId) ?? this.activate(conversationId);
    actor.send({ type: 'TURN', job });
  }

  private activate(conversationId: string): SessionActor {
    const actor = createActor(chatSessionMachine, {
      input: { conversationId, idleMs: this.deps.idleMs, rehydrate: () => this.deps.rehydrate(conversationId) },
    });
    this.actors.set(conversationId, actor);
    this.activated += 1;
    actor.subscribe({
      complete: () => this.passivated(conversationId, actor),
      error: (err: unknown) => {
        this.deps.logger.error({ err, conversationId }, 'chat session actor failed');
        this.passivated(conversationId, actor);
      },
    });
    actor.start();
    return actor;
  }

  /** Idle long enough: the actor has ended; the conversation lives on in the store. */
  private passivated(conversationId: string, actor: SessionActor): void {
    if (this.actors.get(conversationId) !== actor) return;
    this.actors.delete(conversationId);
    this.placement.release(conversationId).catch((err: unknown) => this.deps.logger.warn({ err, conversationId }, 'chat session lease not released'));
  }

  /**
   * Another instance holds the session now (this one could not renew its lease in time): the
   * turns not begun here are refused, to be sent again; the one being answered ends on its own.
   */
  lost(conversationId: string): void {
    const actor = this.actors.get(conversationId);
    if (actor === undefined) return;
    this.actors.delete(conversationId);
    const queued = actor.getSnapshot().context.queue;
    const waiting = actor.getSnapshot().value === 'answering' ? queued.slice(1) : queued;
    actor.stop();
    const moved = new TroupeError('BUS_UNAVAILABLE', 'this conversation moved to another instance; send the message again', { retryable: true, details: { retryAfterSec: 1 } });
    for (const job of waiting) job.abandon(moved);
  }

  /** Passivates every idle session at once (an orderly stop): the next message activates it elsewhere. */
  passivateAll(): void {
    for (const actor of this.actors.values()) actor.send({ type: 'PASSIVATE' });
  }
}
