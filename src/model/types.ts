/** Shapes of a workflow definition (SPEC §1). The zod schema in schema.ts produces these. */
export interface RetryPolicy {
  maxAttempts: number;
  backoffMs: number;
}

export interface BlockDef {
  id: string;
  type: string;
  name: string;
  config: Record<string, unknown>;
  enabled?: boolean;
  /** id of the enclosing loop/parallel block */
  parent?: string;
  timeoutMs?: number;
  retry?: RetryPolicy;
}

export interface ConnectionDef {
  from: string;
  to: string;
  /** out handle of `from`; absent means "success" */
  handle?: string;
}

export interface ScheduleTrigger {
  type: 'schedule';
  id: string;
  cron: string;
  timezone?: string;
  input?: unknown;
  overlap?: 'skip' | 'allow';
  catchUp?: 'none' | 'last';
}

export interface WebhookTrigger {
  type: 'webhook';
  id: string;
  path: string;
  provider?: 'generic' | 'github' | 'stripe' | 'slack';
  secret?: string;
  responseMode?: 'accepted' | 'sync';
  /** generic only: deliveries must sign X-Signature-Timestamp, so a captured one cannot be replayed */
  requireTimestamp?: boolean;
}

export type TriggerDef = ScheduleTrigger | WebhookTrigger;

export interface WorkflowDef {
  id?: string;
  name: string;
  description?: string;
  variables?: Record<string, unknown>;
  blocks: BlockDef[];
  connections: ConnectionDef[];
  triggers?: TriggerDef[];
}

export const RESERVED_NAMES = ['start', 'loop', 'parallel', 'variable', 'env'] as const;

/** What validation needs to know about each block type (supplied by src/blocks/index.ts). */
export interface BlockTypeInfo {
  /** validates config; returns issues with paths relative to the config object ("" = config itself) */
  validateConfig(config: unknown): { path: string; message: string }[];
  /** out handles for a (valid) config, including "error" where the type has one */
  handles(config: Record<string, unknown>): string[];
  /** top-level config keys holding code/expressions: references there are bound, not pasted */
  codeFields?: readonly string[];
}

export type BlockTypeRegistry = Readonly<Record<string, BlockTypeInfo>>;
