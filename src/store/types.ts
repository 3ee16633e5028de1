/**
 * The store port. One narrow repository per entity, combined in `Store`; adapters live in
 * ./sqlite (embedded default) and ./mongo. Every timestamp is an ISO-8601 string (UTC, ms).
 * Opaque payloads (`unknown`) round-trip as JSON: `undefined` comes back as `null`.
 */
import type { WorkflowDef } from '../model/types.js';

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

export interface WorkflowRepo {
  /** stores version 1; TroupeError CONFLICT when the id exists */
  create(def: WorkflowDef & { id: string }): Promise<StoredWorkflow>;
  /** the current version */
  get(id: string): Promise<StoredWorkflow | null>;
  getVersion(id: string, version: number): Promise<StoredWorkflow | null>;
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

export type ExecutionStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
export const EXECUTION_STATUSES: readonly ExecutionStatus[] = ['queued', 'running', 'completed', 'failed', 'cancelled'];

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
  patch?: ExecutionPatch;
  /** upserted by (executionId, blockId, iteration) */
  logs?: BlockLog[];
  /** upserted by (executionId, seq), so re-saving a batch is harmless */
  events?: ExecutionEvent[];
}

export interface BoundaryItem {
  id: string;
  batch: BoundaryBatch;
}

export interface ExecutionListOptions extends PageOptions {
  status?: ExecutionStatus;
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
  /** oldest first, across workflows: for restart recovery of queued/running executions */
  listByStatus(statuses: readonly ExecutionStatus[], limit: number): Promise<ExecutionRecord[]>;
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

// ---- webhooks -------------------------------------------------------------------------------

/** Where `POST /webhooks/{path}` leads: an index kept at deploy time, checked against the pinned version. */
export interface WebhookRoute {
  path: string;
  workflowId: string;
  triggerId: string;
}

export type WebhookEventStatus = 'pending' | 'started';

/** One accepted webhook delivery: written before the 202, so an accepted event is never lost. */
export interface WebhookEvent {
  id: string;
  workflowId: string;
  triggerId: string;
  /** the deployed version it was accepted for: it runs on that version, even after a redeploy */
  version: number;
  /** the provider's delivery id (de-duplication key), null when the request carried none */
  deliveryId: string | null;
  /** the starter's input: `{ body, headers, query, method }` */
  payload: unknown;
  receivedAt: string;
  status: WebhookEventStatus;
  /** chosen at accept time: starting it is creating this execution, which can happen only once */
  executionId: string;
}

export interface WebhookRepo {
  /**
   * Replaces the workflow's routes. TroupeError CONFLICT (nothing written, details.path) when a
   * path is routed to another workflow.
   */
  putRoutes(workflowId: string, routes: readonly { path: string; triggerId: string }[]): Promise<void>;
  findRoute(path: string): Promise<WebhookRoute | null>;
  deleteRoutes(workflowId: string): Promise<number>;
  /**
   * Stores a pending event unless the same (workflowId, triggerId, deliveryId) was accepted at
   * or after `dedupSince`: then nothing is written and the earlier event is returned with
   * `duplicate: true`. Events without a delivery id are never duplicates.
   */
  accept(event: WebhookEvent, dedupSince: string): Promise<{ event: WebhookEvent; duplicate: boolean }>;
  /** pending → started (its execution exists); false when it was not pending */
  markStarted(eventId: string): Promise<boolean>;
  get(eventId: string): Promise<WebhookEvent | null>;
  /** pending events received at or before `receivedBefore`, oldest first */
  listPending(receivedBefore: string, limit: number): Promise<WebhookEvent[]>;
  /** deletes started events received before `before` (their delivery ids stop de-duplicating); returns how many */
  purgeStarted(before: string): Promise<number>;
}

// ---- schedules ------------------------------------------------------------------------------

/** A schedule trigger of a deployed workflow: kept at deploy time, read by every instance's scheduler. */
export interface ScheduleEntry {
  workflowId: string;
  triggerId: string;
  /** `cron|timezone` as deployed */
  spec: string;
  /** the pinned version whose trigger this is */
  version: number;
  /** due times before this (the deployment) are never fired */
  activeFrom: string;
  /** the latest due time handled (fired, skipped or passed over); null before the first */
  lastDueAt: string | null;
}

/** claimed: this instance won the due time and is starting it; started: its execution exists */
export type FireOutcome = 'claimed' | 'started' | 'skipped';

export interface ScheduleFire {
  workflowId: string;
  triggerId: string;
  dueAt: string;
  /** chosen before the claim; null when skipped */
  executionId: string | null;
  outcome: FireOutcome;
  firedAt: string;
}

export interface ScheduleRepo {
  /**
   * Replaces the workflow's schedules. A trigger id that stays keeps its `lastDueAt`, and its
   * `activeFrom` too while its `spec` (cron and zone) is unchanged: a redeploy drops no due time.
   */
  put(workflowId: string, entries: readonly { triggerId: string; version: number; spec: string }[], activeFrom: string): Promise<void>;
  deleteByWorkflow(workflowId: string): Promise<number>;
  /** every schedule of every deployed workflow, by workflow then trigger id */
  list(): Promise<ScheduleEntry[]>;
  listByWorkflow(workflowId: string): Promise<ScheduleEntry[]>;
  /**
   * Records the fire of one due time unless one exists (false: another caller had it; this is
   * what makes a due time fire once across instances); advances the schedule's `lastDueAt`.
   */
  claim(fire: ScheduleFire): Promise<boolean>;
  /** advances `lastDueAt` over due times that are not fired (missed while down, catchUp none) */
  pass(workflowId: string, triggerId: string, dueAt: string): Promise<void>;
  /** claimed → started; false when it was not claimed */
  markStarted(workflowId: string, triggerId: string, dueAt: string): Promise<boolean>;
  /** fires still `claimed` that were claimed at or before `firedBefore`, oldest first */
  listClaimed(firedBefore: string, limit: number): Promise<ScheduleFire[]>;
  /** newest due time first */
  lastFires(workflowId: string, triggerId: string, limit: number): Promise<ScheduleFire[]>;
  /** the newest fire that has an execution (claimed or started), or null */
  lastRun(workflowId: string, triggerId: string): Promise<ScheduleFire | null>;
  /**
   * Drops fires due before `before`, except claimed ones and, per schedule, the newest fire
   * and the newest with an execution (what GET /schedules and overlap need). Returns how many.
   */
  purgeFires(before: string): Promise<number>;
  /** when any instance last finished a scheduler tick (the time it examined up to), or null */
  heartbeat(): Promise<string | null>;
  /** records a finished tick; never moves the heartbeat back */
  beat(at: string): Promise<void>;
}

// ---- the whole store ------------------------------------------------------------------------

export interface Store {
  readonly kind: 'sqlite' | 'mongodb';
  readonly workflows: WorkflowRepo;
  readonly deployments: DeploymentRepo;
  readonly apiKeys: ApiKeyRepo;
  readonly executions: ExecutionRepo;
  readonly secrets: SecretRepo;
  readonly webhooks: WebhookRepo;
  readonly schedules: ScheduleRepo;
  /** resolves when the database answers; rejects with TroupeError STORE_ERROR otherwise */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Clock injected by tests; adapters default to `() => new Date()`. */
export type Now = () => Date;
