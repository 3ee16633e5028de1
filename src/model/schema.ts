/**
 * Zod schema of the workflow document (SPEC §1, §1.1, §4.3, §4.5): structure only. The rules
 * that need the whole document (names, graph, references, registry) live in validate*.ts.
 * Unknown keys are dropped (editors keep things like block positions next to the definition).
 */
import { z } from 'zod';
import { MAX_NAME_LENGTH } from './names.js';
import type { BlockDef, ConnectionDef, TriggerDef, WorkflowDef } from './types.js';

export const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const idMessage = 'must be 1-64 letters, digits, "_" or "-"';

export const idSchema = z.string().regex(ID_PATTERN, idMessage);

/** The longest setTimeout delay Node honours (2^31 − 1 ms); a longer one fires after 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;

export const retrySchema = z.object({
  maxAttempts: z.number().int().min(1).max(100),
  // n8n's "wait between tries" default: a retry without a stated backoff still backs off
  backoffMs: z.number().int().min(0).max(3_600_000).default(1000),
});

export const blockSchema = z.object({
  id: idSchema,
  type: z.string().min(1, 'type is required'),
  name: z.string().max(MAX_NAME_LENGTH).refine((s) => s.trim().length > 0, 'name must not be empty'),
  config: z.record(z.string(), z.unknown()).default({}),
  enabled: z.boolean().optional(),
  parent: z.string().min(1).optional(),
  // the longest delay a timer can take (about 24.8 days): beyond it Node fires at once
  timeoutMs: z.number().int().positive().max(MAX_TIMER_MS).optional(),
  retry: retrySchema.optional(),
});

export const connectionSchema = z.object({
  from: z.string().min(1),
  to: z.string().min(1),
  handle: z.string().min(1).optional(),
});

export const WEBHOOK_PATH_PATTERN = /^[A-Za-z0-9._~-]+(?:\/[A-Za-z0-9._~-]+)*$/;

export const scheduleTriggerSchema = z.object({
  type: z.literal('schedule'),
  id: idSchema,
  cron: z.string(),
  timezone: z.string().optional(),
  input: z.record(z.string(), z.unknown(), 'a schedule input is an object').optional(),
  overlap: z.enum(['skip', 'allow']).optional(),
  catchUp: z.enum(['none', 'last']).optional(),
});

export const webhookTriggerSchema = z.object({
  type: z.literal('webhook'),
  id: idSchema,
  path: z.string().regex(WEBHOOK_PATH_PATTERN, 'path must be URL path segments (letters, digits, ".", "_", "~", "-") without a leading "/"'),
  provider: z.enum(['generic', 'github', 'stripe', 'slack']).optional(),
  secret: z.string().optional(),
  responseMode: z.enum(['accepted', 'sync']).optional(),
  requireTimestamp: z.boolean().optional(),
});

export const triggerSchema = z.discriminatedUnion('type', [scheduleTriggerSchema, webhookTriggerSchema]);

/**
 * Far beyond real workflows (tens of blocks), and inside what the graph walks take: a chain of
 * about 5,000 blocks ran them out of stack, and compiling a chain costs time and memory that
 * grow with its length squared (a 2,000-block chain: ~0.7 s and ~160 MiB on this machine).
 */
export const MAX_BLOCKS = 1000;
export const MAX_CONNECTIONS = 10_000;

/** The top level alone: elements are checked one by one so every broken one is reported. */
export const workflowShellSchema = z.object({
  id: idSchema.optional(),
  name: z.string().refine((s) => s.trim().length > 0, 'name must not be empty'),
  description: z.string().optional(),
  variables: z.record(z.string(), z.unknown()).optional(),
  blocks: z.array(z.unknown()).max(MAX_BLOCKS, `a workflow has at most ${MAX_BLOCKS} blocks`),
  connections: z.array(z.unknown()).max(MAX_CONNECTIONS, `a workflow has at most ${MAX_CONNECTIONS} connections`).default([]),
  triggers: z.array(z.unknown()).optional(),
});

export const workflowSchema = workflowShellSchema.extend({
  blocks: z.array(blockSchema),
  connections: z.array(connectionSchema).default([]),
  triggers: z.array(triggerSchema).optional(),
});

// Compile-time check that the schema produces the shapes of types.ts.
type Assignable<T, U extends T> = U;
export type _SchemaMatchesTypes = [
  Assignable<BlockDef, z.output<typeof blockSchema>>,
  Assignable<ConnectionDef, z.output<typeof connectionSchema>>,
  Assignable<TriggerDef, z.output<typeof triggerSchema>>,
  Assignable<WorkflowDef, z.output<typeof workflowSchema>>,
];
