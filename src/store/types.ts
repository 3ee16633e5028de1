/**
 * The store port. One narrow repository per entity, combined in `Store`; adapters live in
 * ./sqlite (embedded default) and ./mongo. Every timestamp is an ISO-8601 string (UTC, ms).
 * Opaque payloads (`unknown`) round-trip as JSON: `undefined` comes back as `null`.
 */
import type { WorkflowDef } from '../model/types.js';
import type { ChatRepo, ScheduleRepo, WebhookRepo } from './trigger-types.js';

export type * from './trigger-types.js';

export interface Page<T> {
  items: T[];
  /** opaque; pass back as `cursor` to get the next page; null on the last page */
  nextCursor: string | null;
}

export interface PageOptions {
  /** clamped to 1..MAX_PAGE_SIZE */
  limit: number;
  cursor?: string | null;
}

export const MAX_PAGE_SIZE = 1000;

// ---- workflows ------------------------------------------------------------------------------

export interface StoredWorkflow {
  id: string;
  version: number;
  /** the definition as stored; `definition.id` always equals `id` */
  definition: WorkflowDef;
  /** when the workflow (version 1) was created */
  createdAt: string;
  /** when this version was written */
  updatedAt: string;
}

/** One stored version of a workflow, without its definition (a version list). */
export interface WorkflowVersionInfo {
  version: number;
  /** when this version was written */
  createdAt: string;
}

export interface WorkflowRepo {
  /** stores version 1; TroupeError CONFLICT when the id exists */
  create(def: WorkflowDef & { id: string }): Promise<StoredWorkflow>;
  /** the current version */
  get(id: string): Promise<StoredWorkflow | null>;
  getVersion(id: string, version: number): Promise<StoredWorkflow | null>;
  /** every stored version, newest first; an empty page when the workflow does not exist */
  listVersions(id: string, opts: PageOptions): Promise<Page<WorkflowVersionInfo>>;
  /** ordered by id ascending */
  list(opts: PageOptions): Promise<Page<StoredWorkflow>>;
  /** writes version+1 (older versions stay readable); null when the workflow does not exist */
  replace(id: string, def: WorkflowDef): Promise<StoredWorkflow | null>;
  /**
   * Deletes the workflow, all its versions, its deployment and its API keys. Executions (and
   * their logs and events) are history and are kept.
   */
  delete(id: string): Promise<boolean>;
}

// ---- deployments ----------------------------------------------------------------------------

export interface Deployment {
  workflowId: string;
  /** the pinned version */
  version: number;
  deployedAt: string;
  endpoint?: string;
}

export interface DeploymentRepo {
  /** insert or replace the workflow's one deployment */
  put(d: Deployment): Promise<Deployment>;
  get(workflowId: string): Promise<Deployment | null>;
  delete(workflowId: string): Promise<boolean>;
}

// ---- API keys -------------------------------------------------------------------------------

export interface ApiKeyRecord {
  id: string;
  workflowId: string;
  /** first characters shown to users, e.g. `trp_ab12` */
  prefix: string;
  /** sha256 hex of the full key; the key itself is never stored */
  hash: string;
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt?: string | null;
}

export interface ApiKeyRepo {
  /** TroupeError CONFLICT when the id or the hash exists */
  create(rec: ApiKeyRecord): Promise<ApiKeyRecord>;
  /** revoked keys included, oldest first */
  listByWorkflow(workflowId: string): Promise<ApiKeyRecord[]>;
  /** revoked keys are returned too: the caller decides (401 either way) */
  findByHash(hash: string): Promise<ApiKeyRecord | null>;
  /** true when the key exists for this workflow; the first revocation time is kept */
  revoke(workflowId: string, keyId: string, at?: string): Promise<boolean>;
  markUsed(keyId: string, at: string): Promise<void>;
  /** returns how many keys were deleted */
  deleteByWorkflow(workflowId: string): Promise<number>;
}

// ---- executions -----------------------------------------------------------------------------

export type ExecutionStatus = 'queued' | 'running' | 'waiting' | 'completed' | 'failed' | 'cancelled';
export const EXECUTION_STATUSES: readonly ExecutionStatus[] = ['queued', 'running', 'waiting', 'completed', 'failed', 'cancelled'];

export interface ExecutionRecord {
  id: string;
  workflowId: string;
  version: number;
  status: ExecutionStatus;
  trigger: unknown;
  input: unknown;
  output: unknown;
  error: unknown | null;
  startedAt: string | null;
  endedAt: string | null;
  durationMs: number | null;
  /** execution context (outputs, states, decisions...); omitted by `list` */
  context?: unknown;
  /** set by the store at `create` unless given; orders history (newest first) */
  createdAt?: string;
}

/** Where a listByStatus page ends: the last record's createdAt and id. */
export interface StatusCursor {
  createdAt: string;
  id: string;
}

export type ExecutionPatch = Partial<Omit<ExecutionRecord, 'id' | 'createdAt'>>;

export interface BlockLog {
  blockId: string;
  blockName: string;
  blockType: string;
  status: string;
  /** start order within the execution */
  order: number;
  startedAt: string | null;
  endedAt: string | null;
  durationMs: number | null;
  input: unknown;
  output: unknown;
  error: unknown | null;
  errorHandled: boolean;
  attempts: number;
  /** e.g. `{ container, index }` for a block inside a loop/parallel; null otherwise */
  iteration: unknown | null;
  /** per-attempt detail where the block retries (API block): status or error code, delay */
  attemptLog?: unknown[];
  /**
   * connection indexes a top-level block activated when it settled: kept so a run interrupted
   * by a crash can resume (src/model/resume.ts); not shown by the HTTP API
   */
  activated?: number[];
  /**
   * set on the logs a rerun from a block carried over from the execution it reruns (that
   * execution's id): those blocks did not run again, their outputs are the recorded ones
   */
  carriedFrom?: string;
}

export interface ExecutionEvent {
  executionId: string;
  /** per-execution sequence number, strictly increasing */
  seq: number;
  /** e.g. `block.started` */
  event: string;
  data: unknown;
  at: string;
}

export interface BoundaryBatch {
  /** the record to insert first (CONFLICT, and nothing of the batch written, when the id exists) */
  create?: ExecutionRecord;
  /**
   * CONFLICT, and nothing of the batch written, unless the record still has this status and
   * this context (compared as stored): a claim two instances may race for, such as resuming an
   * execution whose instance died
   */
  guard?: { status: ExecutionStatus; context: unknown };
  patch?: ExecutionPatch;
  /**
   * logs to remove, by (blockId, iteration), before `logs` are upserted: those of a loop's or
   * parallel's earlier attempt that its new attempt may not write again (a retry, a resumption)
   */
  dropLogs?: LogIdentity[];
  /** upserted by (executionId, blockId, iteration) */
  logs?: BlockLog[];
  /** upserted by (executionId, seq), so re-saving a batch is harmless */
  events?: ExecutionEvent[];
}

/** What names a block log within its execution. */
export interface LogIdentity {
  blockId: string;
  iteration: unknown | null;
}

export interface BoundaryItem {
  id: string;
  batch: BoundaryBatch;
}

export interface ExecutionListOptions extends PageOptions {
  status?: ExecutionStatus;
  /**
   * only records created at or after this time: a workflow deleted and created again under the
   * same id lists only the executions of the one that exists now
   */
  since?: string;
}

/** What the list across workflows filters on (every filter optional; all given ones must hold). */
export interface ExecutionQuery extends PageOptions {
  workflowId?: string;
  status?: ExecutionStatus;
  /** the trigger's `type` (manual, api, webhook, schedule, chat, rerun, ...) */
  triggerType?: string;
  /** created at or after this time */
  since?: string;
  /** created before this time */
  until?: string;
}

export interface ExecutionRepo {
  /** TroupeError CONFLICT when the id exists */
  create(rec: ExecutionRecord): Promise<ExecutionRecord>;
  /** false when the execution does not exist */
  update(id: string, patch: ExecutionPatch): Promise<boolean>;
  /** with logs ordered by `order` */
  get(id: string): Promise<(ExecutionRecord & { logs: BlockLog[] }) | null>;
  /** newest first (createdAt, then id); records without `context` */
  list(workflowId: string, opts: ExecutionListOptions): Promise<Page<ExecutionRecord>>;
  /** across workflows, newest first (createdAt, then id), filtered; records without `context` */
  listAll(query: ExecutionQuery): Promise<Page<ExecutionRecord>>;
  /**
   * Applies the patch, log upserts and event upserts of one block boundary in ONE transaction:
   * all of it is written or none of it. TroupeError NOT_FOUND when the execution is unknown.
   */
  saveBoundary(id: string, batch: BoundaryBatch): Promise<void>;
  /**
   * The boundaries of several executions at once (group commit): one transaction where the store
   * can, yet each item is written or not on its own. Returns, per item, null when it was written
   * or the error that stopped it (as saveBoundary would have thrown).
   */
  saveBoundaries(items: readonly BoundaryItem[]): Promise<(Error | null)[]>;
  /** events ordered by seq, only those with seq > afterSeq when given */
  listEvents(executionId: string, afterSeq?: number): Promise<ExecutionEvent[]>;
  /**
   * Oldest first (createdAt, then id), across workflows: for restart recovery of queued/running
   * executions. `after` continues past a record already seen (its createdAt and id), so a caller
   * that leaves records in these statuses still reaches every one.
   */
  listByStatus(statuses: readonly ExecutionStatus[], limit: number, after?: StatusCursor): Promise<ExecutionRecord[]>;
  /**
   * Retention: deletes at most `limit` (clamped to 1..1000) executions that ended (completed,
   * failed or cancelled) before `endedBefore`, in no promised order, with their logs and events, and
   * gives their space back where the store can (SQLite: incremental vacuum). Returns how many
   * executions went; fewer than `limit` means none older is left.
   */
  purgeEnded(endedBefore: string, limit: number): Promise<number>;
}

// ---- secrets --------------------------------------------------------------------------------

export interface SecretRepo {
  /** `ciphertext` comes from crypto.ts encryptSecret: the store never sees plaintext */
  put(name: string, ciphertext: string): Promise<void>;
  get(name: string): Promise<string | null>;
  /** names only, ordered by name */
  list(): Promise<{ name: string; updatedAt: string }[]>;
  delete(name: string): Promise<boolean>;
}

// ---- conversation memory (the memory block and the agent's memory) ---------------------------

export type MemoryRole = 'system' | 'user' | 'assistant';

/** One remembered message of a conversation, scoped to a workflow. */
export interface MemoryEntry {
  conversationId: string;
  /** position in its conversation, from 1, increasing (never reused after a trim or delete) */
  seq: number;
  role: MemoryRole;
  content: string;
  createdAt: string;
}

export interface MemoryRepo {
  /**
   * Appends the messages in order (atomically: concurrent appends never interleave or share a
   * seq) and keeps only the newest `keep` entries of the conversation; returns what it stored.
   */
  append(workflowId: string, conversationId: string, messages: readonly { role: MemoryRole; content: string }[], keep: number): Promise<MemoryEntry[]>;
  /** the newest `limit` entries (all when absent), oldest first */
  list(workflowId: string, conversationId: string, limit?: number): Promise<MemoryEntry[]>;
  /** every entry of the workflow, by conversation id then seq, at most `limit` */
  listAll(workflowId: string, limit: number): Promise<MemoryEntry[]>;
  /** forgets a conversation; returns how many entries it had */
  delete(workflowId: string, conversationId: string): Promise<number>;
  /** forgets every conversation of a workflow (the workflow was deleted) */
  deleteWorkflow(workflowId: string): Promise<number>;
}

// ---- waits (wait blocks: SPEC §2.1, docs/waiting.md) ------------------------------------------

/**
 * The due time of one waiting block run. Written when the block starts waiting, so a run that
 * starts again (a resumption after a crash, a wake-up) finds the same due time; the waker
 * polls the entries that fell due.
 */
export interface WaitEntry {
  executionId: string;
  /** the block's run within its execution (its runKey: scope and block id) */
  key: string;
  workflowId: string;
  /** when the block started waiting */
  since: string;
  dueAt: string;
}

export interface WaitRepo {
  /** stores the entry unless one exists for (executionId, key); returns the stored one (the first wins) */
  begin(entry: WaitEntry): Promise<WaitEntry>;
  /** entries due at or before `at`, earliest first (dueAt, executionId, key), at most `limit` */
  due(at: string, limit: number): Promise<WaitEntry[]>;
  /** an execution's entries, by key */
  listByExecution(executionId: string): Promise<WaitEntry[]>;
  /** removes one entry, or every entry of the execution when `key` is absent; returns how many */
  delete(executionId: string, key?: string): Promise<number>;
}

// ---- approvals (approval blocks: SPEC §2.1, docs/waiting.md) -----------------------------------

export type ApprovalDecision = 'approved' | 'rejected' | 'timeout';

/** One approval block run waiting for (or having had) a decision. */
export interface ApprovalEntry {
  executionId: string;
  /** the block's run within its execution (scope and block id) */
  key: string;
  blockId: string;
  workflowId: string;
  /** sha256 hex of the one-time link's token; the token itself is never stored */
  tokenHash: string;
  message: string;
  since: string;
  /** when `timeoutMs` passes; null without one */
  expiresAt: string | null;
  decision: ApprovalDecision | null;
  data: unknown;
  decidedAt: string | null;
  decidedBy: string | null;
}

export interface ApprovalRepo {
  /** stores the entry unless one exists for (executionId, key); returns the stored one (the first wins) */
  begin(entry: ApprovalEntry): Promise<ApprovalEntry>;
  get(executionId: string, key: string): Promise<ApprovalEntry | null>;
  findByTokenHash(tokenHash: string): Promise<ApprovalEntry | null>;
  /** records the decision only while there is none: false when one was already recorded */
  decide(executionId: string, key: string, d: { decision: ApprovalDecision; data: unknown; decidedAt: string; decidedBy: string }): Promise<boolean>;
}

// ---- the whole store ------------------------------------------------------------------------

export interface Store {
  readonly kind: 'sqlite' | 'mongodb' | 'postgres';
  readonly workflows: WorkflowRepo;
  readonly deployments: DeploymentRepo;
  readonly apiKeys: ApiKeyRepo;
  readonly executions: ExecutionRepo;
  readonly secrets: SecretRepo;
  readonly webhooks: WebhookRepo;
  readonly schedules: ScheduleRepo;
  readonly chats: ChatRepo;
  readonly memories: MemoryRepo;
  readonly waits: WaitRepo;
  readonly approvals: ApprovalRepo;
  /** resolves when the database answers; rejects with TroupeError STORE_ERROR otherwise */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Clock injected by tests; adapters default to `() => new Date()`. */
export type Now = () => Date;
