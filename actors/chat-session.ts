/**
 * A chat session actor (SPEC §4.4, §9): one per active conversation, on one instance at a time.
 * It answers the conversation's messages one at a time, in arrival order, from its queue; it
 * begins by rehydrating (a turn an earlier owner left unanswered is settled first) and, idle for
 * `idleMs`, passivates: it ends, and the conversation lives on in the store until the next
 * message activates a new one, on whichever instance gets it. docs/architecture.md "Chat
 * session actors" tells the lifecycle; what a turn does is src/service/chat-messages.ts.
 */
import { assign, fromPromise, setup } from 'xstate';

/** One message's turn: `run` answers it and settles (never rejects) once its answer is stored or it failed. */
export interface ChatTurnJob {
  run(): Promise<void>;
  /** the session ended before the turn began (its lease went to another instance) */
  abandon(reason: Error): void;
}

export interface ChatSessionInput {
  conversationId: string;
  idleMs: number;
  /** settles what an earlier owner of the conversation left unanswered; never rejects */
  rehydrate(): Promise<void>;
}

export interface ChatSessionContext {
  conversationId: string;
  idleMs: number;
  rehydrate: () => Promise<void>;
  queue: ChatTurnJob[];
}

export type ChatSessionEvent = { type: 'TURN'; job: ChatTurnJob } | { type: 'PASSIVATE' };

export const chatSessionMachine = setup({
  types: {
    context: {} as ChatSessionContext,
    events: {} as ChatSessionEvent,
    input: {} as ChatSessionInput,
  },
  actors: {
    settle: fromPromise<void, { rehydrate: () => Promise<void> }>(({ input }) => input.rehydrate()),
    answer: fromPromise<void, { job: ChatTurnJob | undefined }>(async ({ input }) => {
      await input.job?.run();
    }),
  },
  actions: {
    enqueue: assign({ queue: ({ context, event }) => (event.type === 'TURN' ? [...context.queue, event.job] : context.queue) }),
    dequeue: assign({ queue: ({ context }) => context.queue.slice(1) }),
  },
  guards: {
    queued: ({ context }) => context.queue.length > 0,
  },
  delays: {
    idle: ({ context }) => context.idleMs,
  },
}).createMachine({
  id: 'chatSession',
  context: ({ input }) => ({ conversationId: input.conversationId, idleMs: input.idleMs, rehydrate: input.rehydrate, queue: [] }),
  initial: 'rehydrating',
  on: { TURN: { actions: 'enqueue' } },
  states: {
    rehydrating: {
      invoke: { src: 'settle', input: ({ context }) => ({ rehydrate: context.rehydrate }), onDone: 'next', onError: 'next' },
    },
    next: {
      always: [{ guard: 'queued', target: 'answering' }, { target: 'idle' }],
    },
    idle: {
      after: { idle: 'passivated' },
      on: { TURN: { actions: 'enqueue', target: 'next' }, PASSIVATE: 'passivated' },
    },
    answering: {
      invoke: {
        src: 'answer',
        input: ({ context }) => ({ job: context.queue[0] }),
        onDone: { target: 'next', actions: 'dequeue' },
        onError: { target: 'next', actions: 'dequeue' },
      },
    },
    passivated: { type: 'final' },
  },
});
