import type { z } from 'zod';
import type { ExecutionLimits } from '../model/limits.js';
import type { OutboundRequest, OutboundResult } from '../outbound/types.js';
import type { ModelPort } from '../providers/types.js';
import type { Sandbox } from '../sandbox/types.js';
import type { Clock } from '../model/clock.js';

export type { Clock } from '../model/clock.js';

export interface TriggerInfo {
  type: 'manual' | 'api' | 'chat' | 'webhook' | 'schedule' | 'rerun' | 'workflow';
  [key: string]: unknown;
}

/** Outbound HTTP used by the api block (implemented in src/outbound). */
export interface HttpClientPort {
  send(request: OutboundRequest, signal: AbortSignal): Promise<OutboundResult>;
}

/** Conversation memory of the memory block and the agent (the store's memories, by workflow). */
export interface MemoryPort {
  append(workflowId: string, conversationId: string, messages: readonly { role: MemoryRole; content: string }[], keep: number): Promise<MemoryItem[]>;
  list(workflowId: string, conversationId: string, limit?: number): Promise<MemoryItem[]>;
  listAll(workflowId: string, limit: number): Promise<MemoryItem[]>;
  delete(workflowId: string, conversationId: string): Promise<number>;
}

export type MemoryRole = 'system' | 'user' | 'assistant';

export interface MemoryItem {
  conversationId: string;
  seq: number;
  role: MemoryRole;
  content: string;
  createdAt: string;
}

export interface BlockServices {
  sandbox: Sandbox;
  clock: Clock;
  http?: HttpClientPort;
  /** language models (agent block, router llm mode) */
  models?: ModelPort;
  memory?: MemoryPort;
  functionTimeoutMs: number;
  functionMemoryMb: number;
  /** due times of waiting blocks (the store's waits); absent: a wait is kept in memory only */
  waits?: WaitPort;
  /** the longest wait (TROUPE_MAX_WAIT_DAYS); default 30 days */
  maxWaitMs?: number;
  /** approval blocks (the service sets it: it knows its URL and secret key) */
  approvals?: ApprovalPort;
  /** workflow blocks (the service sets it) */
  children?: ChildWorkflowPort;
}

/** Where a wait block keeps its due time, so a run that starts again finds the same one. */
export interface WaitPort {
  begin(entry: { executionId: string; key: string; workflowId: string; since: string; dueAt: string }): Promise<{ since: string; dueAt: string }>;
  delete(executionId: string, key?: string): Promise<number>;
}

/** What a block that waits tells its execution (SPEC §2.1: the record's `waiting` entries). */
export interface WaitingInfo {
  kind: 'wait' | 'approval' | 'workflow';
  since: string;
  until?: string;
  /** an approval's message */
  message?: string;
  /** a workflow block's child execution */
  childExecutionId?: string;
}

/**
 * The abort reason of a block's signal when its execution parks (SPEC §2.1): the block is not
 * cancelled, it runs again when the execution resumes (a workflow block leaves its child alone).
 */
export const PARKED = Object.freeze({ parked: true });

/** Child executions of workflow blocks (src/service/children.ts). */
export interface ChildWorkflowPort {
  /** starts the child unless it was started (its id derives from the parent's block run); returns its id */
  start(req: { parentExecutionId: string; blockId: string; key: string; depth: number; workflowId: string; version: 'deployed' | 'current' | number; input: unknown }): Promise<string>;
  /** the child's end (or `waiting` while it is parked), null while it runs */
  result(childId: string): Promise<{ status: string; output: unknown; error: unknown } | null>;
  cancel(childId: string): Promise<void>;
  /** the block has settled: the nudge the child's end left for the waker goes */
  settled(parentExecutionId: string, childId: string): Promise<void>;
}

/** Where approval blocks keep their state and learn of decisions (src/service/approvals.ts). */
export interface ApprovalPort {
  /** stores the block run's approval unless stored; `created` when this call stored it */
  begin(entry: { executionId: string; key: string; blockId: string; workflowId: string; message: string; since: string; expiresAt: string | null }): Promise<{ state: ApprovalState; approveUrl: string; created: boolean }>;
  get(executionId: string, key: string): Promise<ApprovalState | null>;
  /** records the timeout unless a decision came first: false then */
  timeOut(executionId: string, key: string, at: string): Promise<boolean>;
  /** the block has settled: the nudge a decision left for the waker goes */
  settled(executionId: string, key: string): Promise<void>;
}

export interface ApprovalState {
  since: string;
  expiresAt: string | null;
  decision: 'approved' | 'rejected' | 'timeout' | null;
  data: unknown;
  decidedAt: string | null;
  decidedBy: string | null;
}

export interface BlockRunContext<C> {
  executionId: string;
  workflowId: string;
  block: { id: string; name: string; type: string };
  /** config with references resolved and secrets substituted, except `codeFields` (left raw) */
  config: C;
  /** the trigger's input (what the starter receives) */
  input: unknown;
  trigger: TriggerInfo;
  conversationId?: string;
  /**
   * Turns code/expression text holding `<refs>` into source that reads bound identifiers,
   * plus their values: references are bound as values, never pasted as source.
   */
  bindCode(source: string): { source: string; bindings: Record<string, unknown> };
  /** resolve a config value (references and secrets) against the current scope */
  resolve(value: unknown): unknown;
  hasErrorConnection: boolean;
  /** the handles that have outgoing connections (an approval's `timeout` fails the block without one) */
  connectedHandles?: readonly string[];
  /**
   * Names this block's run within the execution (one per loop or parallel iteration), the same
   * when the run is repeated: by a whole-block retry, or after a crash resumed the execution
   */
  runKey?: string;
  signal: AbortSignal;
  services: BlockServices;
  /** streaming output (agent tokens) */
  emitChunk(text: string): void;
  /** the block is waiting (wait block): its execution may park while nothing else runs */
  onWaiting?(info: WaitingInfo): void;
}

export interface BlockResult {
  output: Record<string, unknown>;
  /** the out handles this run activates (e.g. ["success"], ["yes"], [] for a dead end) */
  handles: string[];
  /** attempts made (api block); defaults to 1 */
  attempts?: number;
  /** per-attempt detail (api block), recorded in the block log */
  attemptLog?: unknown[];
}

export interface BlockType<C = Record<string, unknown>> {
  type: string;
  configSchema: z.ZodType<C>;
  /** out handles for a config, including "error" where the type has one */
  handles(config: C): string[];
  /** top-level config keys that hold code/expressions (not resolved textually) */
  codeFields?: readonly string[];
  /** top-level config keys that decide the block's shape or handles: never a reference */
  literalFields?: readonly string[];
  /** outputs besides `error` when a failure takes the error connection (api: status 0, no data) */
  failureOutput?: () => Record<string, unknown>;
  /** checks of a literal config that hold when a workflow is saved, not when it runs (a wait's `until` in the past) */
  validateSaved?(config: C): { path: PropertyKey[]; message: string }[];
  run(ctx: BlockRunContext<C>): Promise<BlockResult>;
}

/**
 * A container block (loop, parallel): it has a config and handles like any block, but no run():
 * its container actor (actors/container.ts) spawns block actors per iteration instead.
 */
export interface ContainerType<C = Record<string, unknown>> {
  type: string;
  container: true;
  configSchema: z.ZodType<C>;
  handles(config: C): string[];
  codeFields?: readonly string[];
  literalFields?: readonly string[];
  /**
   * The settings of a (valid) config that cannot fit the execution limits as written: a literal
   * count or collection, never a reference (that is checked when the block runs). Paths are JSON
   * Pointers relative to the config.
   */
  limitIssues?(config: Record<string, unknown>, limits: ExecutionLimits): { path: string; message: string }[];
}

export type AnyBlockType = BlockType<any> | ContainerType<any>;

export function isContainerType(t: AnyBlockType | undefined): t is ContainerType<any> {
  return t !== undefined && 'container' in t && t.container === true;
}
