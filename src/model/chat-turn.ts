/**
 * Chat turns and chat session placement (SPEC §4.4, §9): the decisions, free of effects. The
 * session actor is actors/chat-session.ts, the turns src/service/chat-messages.ts, the
 * placement by lease src/server/cluster/chat-leases.ts; docs/architecture.md "Chat session
 * actors" tells the lifecycle.
 */
import { mayTakeOver, type Lease, type LeaseTiming } from './lease.js';

/** What a turn's messages carry: the user's message names its client id and its run. */
export interface TurnMessage {
  role: 'user' | 'assistant';
  /** the client's id of a user message (a retry sends it again) */
  messageId?: string;
  /** the run of the turn (user messages) or the run that answered (assistant messages) */
  executionId?: string;
}

/**
 * What a message does to its conversation: a new turn, or, when its client id is already a
 * user message there (a retry of a request whose answer was lost), that turn again, answered
 * or still running, so a retry never makes a second turn.
 */
export type TurnDecision =
  | { kind: 'new' }
  | { kind: 'answered'; executionId: string }
  | { kind: 'pending'; executionId: string };

export function turnDecision(messages: readonly TurnMessage[], messageId: string | undefined): TurnDecision {
  if (messageId === undefined) return { kind: 'new' };
  const asked = messages.find((m) => m.role === 'user' && m.messageId === messageId);
  if (asked?.executionId === undefined) return { kind: 'new' };
  return answered(messages, asked.executionId) ? { kind: 'answered', executionId: asked.executionId } : { kind: 'pending', executionId: asked.executionId };
}

function answered(messages: readonly TurnMessage[], executionId: string): boolean {
  return messages.some((m) => m.role === 'assistant' && m.executionId === executionId);
}

/**
 * The run of the conversation's last turn when its answer is not stored yet: a turn an owner
 * that died left running (another instance resumes the run) or whose answer it had no time to
 * store. The next turn waits for it, so the history stays user, assistant, user, assistant.
 */
export function unansweredTurn(messages: readonly TurnMessage[]): string | null {
  const last = messages.at(-1);
  if (last === undefined || last.role !== 'user' || last.executionId === undefined) return null;
  return last.executionId;
}

/**
 * Whether the answer of this run belongs in the conversation now: its question is there (a run
 * whose question was never stored, its instance dying in between, answers nobody) and its
 * answer is not yet.
 */
export function answerBelongs(messages: readonly TurnMessage[], executionId: string): boolean {
  return messages.some((m) => m.role === 'user' && m.executionId === executionId) && !answered(messages, executionId);
}

/** Where a conversation's session is to run, given its lease entry. */
export type Placement = { kind: 'here' } | { kind: 'take' } | { kind: 'owner'; owner: string };

/**
 * `here`: this instance holds it (its own entry, which may be left by an earlier start of the
 * same instance id); `take`: free, expired or released; else the live owner's, where the
 * message is forwarded.
 */
export function placement(lease: Lease | null, self: string, now: number, timing: LeaseTiming): Placement {
  if (lease === null) return { kind: 'take' };
  if (lease.owner === self && lease.released !== true) return { kind: 'here' };
  if (mayTakeOver(lease, Number.NEGATIVE_INFINITY, now, timing)) return { kind: 'take' };
  return { kind: 'owner', owner: lease.owner };
}
