/**
 * Collection names, document shapes and indexes. Opaque payloads (definitions, inputs,
 * outputs, contexts, event data) are stored as JSON strings: user data may hold `$`-prefixed
 * or dotted keys (`$ref`, JSON Schema) that MongoDB treats specially, and JSON text gives
 * exactly the round-trip of the SQLite adapter. A new entity = a new name + indexes here.
 */
import type { Db, IndexDescription } from 'mongodb';

export const COLLECTIONS = {
  workflows: 'workflows',
  workflowVersions: 'workflow_versions',
  deployments: 'deployments',
  apiKeys: 'api_keys',
  executions: 'executions',
  blockLogs: 'block_logs',
  events: 'execution_events',
  secrets: 'secrets',
  webhookRoutes: 'webhook_routes',
  webhookEvents: 'webhook_events',
  webhookDeliveries: 'webhook_deliveries',
  schedules: 'schedules',
  scheduleFires: 'schedule_fires',
  schedulerHeartbeat: 'scheduler_heartbeat',
  chatDeployments: 'chat_deployments',
  chatConversations: 'chat_conversations',
  chatCodes: 'chat_codes',
  chatSessions: 'chat_sessions',
  memories: 'memories',
  memoryCounters: 'memory_counters',
  waits: 'waits',
  approvals: 'approvals',
} as const;

export interface WorkflowDoc { _id: string; version: number; definition: string; createdAt: string; updatedAt: string }
export interface WorkflowVersionDoc { workflowId: string; version: number; definition: string; createdAt: string }
export interface DeploymentDoc { _id: string; version: number; deployedAt: string; endpoint: string | null }
export interface ApiKeyDoc {
  _id: string; workflowId: string; prefix: string; hash: string; createdAt: string; revokedAt: string | null; lastUsedAt: string | null;
}
export interface ExecutionDoc {
  _id: string; workflowId: string; version: number; status: string; trigger: string; input: string; output: string;
  error: string; startedAt: string | null; endedAt: string | null; durationMs: number | null; context: string | null; createdAt: string;
  /** the trigger's `type` (absent in records written before it was kept) */
  triggerType?: string | null;
}
export interface BlockLogDoc { executionId: string; blockId: string; iterationKey: string; order: number; status: string; body: string }
export interface EventDoc { executionId: string; seq: number; event: string; data: string; at: string }
export interface SecretDoc { _id: string; ciphertext: string; updatedAt: string }
export interface WebhookRouteDoc { _id: string; workflowId: string; triggerId: string }
export interface WebhookEventDoc {
  _id: string; workflowId: string; triggerId: string; version: number; deliveryId: string | null; payload: string; receivedAt: string; status: string; executionId: string; announced: boolean;
}
export interface ScheduleDoc { _id: string; workflowId: string; triggerId: string; version: number; spec: string; activeFrom: string; lastDueAt: string | null }
export interface HeartbeatDoc { _id: string; at: string }
/** `_id` is (workflow, trigger, due time): the unique key that lets one instance fire a due time */
export interface ScheduleFireDoc {
  _id: string; workflowId: string; triggerId: string; dueAt: string; executionId: string | null; outcome: string; firedAt: string;
}
/**
 * `_id` is the de-duplication key (workflow, trigger, delivery id). `event` is the event the claim
 * stands for, so whoever finds it unwritten can write it (absent in claims of older versions).
 */
export interface WebhookDeliveryDoc { _id: string; workflowId: string; eventId: string; receivedAt: string; event?: WebhookEventDoc }
/** `_id` is the workflow id; `body` the JSON of `{ auth, branding, output }`; `subdomain` has a unique index */
export interface ChatDeploymentDoc { _id: string; subdomain: string; body: string; createdAt: string; updatedAt: string }
/** `messages` holds one JSON string per message, appended with `$push`/`$each` (atomic, in order) */
export interface ChatConversationDoc {
  _id: string; workflowId: string; subdomain: string; owner: string | null; tokenHash?: string; messages: string[]; createdAt: string; updatedAt: string;
}
/** `_id` is the hash of the session id its cookie carries */
export interface ChatSessionDoc { _id: string; workflowId: string; subdomain: string; email: string | null; expiresAt: string }
/** `_id` is (subdomain, email, client); `workflowId` held the subdomain when the code was sent (null: no chat did) */
export interface ChatCodeDoc {
  _id: string; subdomain: string; email: string; client: string; workflowId: string | null; codeHash: string; expiresAt: string; attempts: number;
}

/** One remembered message; `_id` is (workflow, conversation) and its seq */
export interface MemoryDoc { _id: string; workflowId: string; conversationId: string; seq: number; role: string; content: string; createdAt: string }
/** A conversation's last seq given out: `_id` is (workflow, conversation); kept by a delete so seqs never repeat */
export interface WaitDoc { _id: string; executionId: string; key: string; workflowId: string; since: string; dueAt: string }
export interface ApprovalDoc {
  _id: string; executionId: string; key: string; blockId: string; workflowId: string; tokenHash: string; message: string; since: string;
  expiresAt: string | null; decision: string | null; data: string | null; decidedAt: string | null; decidedBy: string | null;
}
export interface MemoryCounterDoc { _id: string; workflowId: string; conversationId: string; lastSeq: number }

const NAMESPACE_EXISTS = 48;

const INDEXES: Record<string, IndexDescription[]> = {
  [COLLECTIONS.workflowVersions]: [{ key: { workflowId: 1, version: 1 }, unique: true }],
  [COLLECTIONS.apiKeys]: [{ key: { hash: 1 }, unique: true }, { key: { workflowId: 1, createdAt: 1, _id: 1 } }],
  [COLLECTIONS.executions]: [
    { key: { workflowId: 1, createdAt: -1, _id: -1 } },
    { key: { workflowId: 1, status: 1, createdAt: -1, _id: -1 } },
    { key: { status: 1, createdAt: 1, _id: 1 } },
    { key: { createdAt: -1, _id: -1 } },
    { key: { triggerType: 1, createdAt: -1, _id: -1 } },
  ],
  [COLLECTIONS.blockLogs]: [{ key: { executionId: 1, blockId: 1, iterationKey: 1 }, unique: true }, { key: { executionId: 1, order: 1 } }],
  [COLLECTIONS.events]: [{ key: { executionId: 1, seq: 1 }, unique: true }],
  [COLLECTIONS.webhookRoutes]: [{ key: { workflowId: 1 } }],
  [COLLECTIONS.webhookEvents]: [{ key: { status: 1, receivedAt: 1, _id: 1 } }, { key: { announced: 1, receivedAt: 1, _id: 1 } }, { key: { workflowId: 1 } }],
  [COLLECTIONS.webhookDeliveries]: [{ key: { receivedAt: 1 } }, { key: { workflowId: 1 } }],
  [COLLECTIONS.schedules]: [{ key: { workflowId: 1, triggerId: 1 } }],
  [COLLECTIONS.scheduleFires]: [{ key: { outcome: 1, firedAt: 1 } }, { key: { workflowId: 1, triggerId: 1, dueAt: -1 } }],
  [COLLECTIONS.chatDeployments]: [{ key: { subdomain: 1 }, unique: true }],
  [COLLECTIONS.chatConversations]: [{ key: { workflowId: 1 } }],
  [COLLECTIONS.chatCodes]: [{ key: { workflowId: 1 } }, { key: { subdomain: 1 } }],
  [COLLECTIONS.chatSessions]: [{ key: { workflowId: 1 } }, { key: { expiresAt: 1 } }],
  [COLLECTIONS.memories]: [{ key: { workflowId: 1, conversationId: 1, seq: 1 }, unique: true }],
  [COLLECTIONS.memoryCounters]: [{ key: { workflowId: 1 } }],
  [COLLECTIONS.approvals]: [{ key: { tokenHash: 1 }, unique: true }],
  [COLLECTIONS.waits]: [{ key: { dueAt: 1, executionId: 1, key: 1 } }, { key: { executionId: 1, key: 1 } }],
};

/**
 * Idempotent start-up step. Collections are created up front because servers before 4.4
 * cannot create one inside a transaction; createIndexes is a no-op for existing indexes.
 */
export async function ensureCollections(db: Db): Promise<Set<string>> {
  const existing = new Set((await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name));
  const created = new Set<string>();
  for (const name of Object.values(COLLECTIONS)) {
    if (existing.has(name)) continue;
    try {
      await db.createCollection(name);
      created.add(name);
    } catch (err) {
      // another instance starting at the same time created it first
      if ((err as { code?: unknown }).code !== NAMESPACE_EXISTS) throw err;
    }
  }
  for (const [name, specs] of Object.entries(INDEXES)) {
    await db.collection(name).createIndexes(specs);
  }
  return created;
}

export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 11000;
}
