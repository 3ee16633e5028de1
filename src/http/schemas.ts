/**
 * Zod schemas of the HTTP interface: routes validate requests with them and /openapi.json is
 * generated from them (with the workflow schema of src/model), so the two cannot drift apart.
 */
import { z } from 'zod';
import { workflowSchema } from '../model/schema.js';
import { EXECUTION_STATUSES, MAX_PAGE_SIZE } from '../store/types.js';

export const DEFAULT_PAGE_SIZE = 50;

export const errorSchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.unknown().describe('more about the error, or null') }),
});

// ---- paths and queries ------------------------------------------------------------------------

/** A whole number in decimal digits (a coerced number also took `0x10`, `1e1` and ` 5`). */
function decimalParam(min: number, max: number) {
  return z.string().regex(/^\d{1,15}$/, 'must be a whole number in decimal digits').transform(Number).pipe(z.number().int().min(min).max(max));
}

export const pageQuery = z.object({
  limit: decimalParam(1, MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
  cursor: z.string().min(1).optional(),
});

export const executionListQuery = pageQuery.extend({ status: z.enum(EXECUTION_STATUSES as [string, ...string[]]).optional() });

export const eventsQuery = z.object({
  /** resume after this event number (the SSE `id`); the Last-Event-ID header does the same */
  after: decimalParam(0, Number.MAX_SAFE_INTEGER).optional(),
});

export function page<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), nextCursor: z.string().nullable() });
}

// ---- workflows, deployments, keys, secrets --------------------------------------------------

export const workflowInput = workflowSchema;

export const storedWorkflowSchema = workflowSchema.extend({
  id: z.string(),
  version: z.number().int().min(1),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const issuedKeySchema = z.object({ id: z.string(), key: z.string(), prefix: z.string(), createdAt: z.string() });

export const keyViewSchema = z.object({
  id: z.string(),
  prefix: z.string(),
  createdAt: z.string(),
  revokedAt: z.string().nullable(),
  lastUsedAt: z.string().nullable(),
});

export const deployResponseSchema = z.object({
  deployment: z.object({ version: z.number().int(), endpoint: z.string(), deployedAt: z.string() }),
  apiKey: issuedKeySchema,
});

export const secretPutBody = z.object({ value: z.string().min(1, 'value must not be empty').max(65_536) });
export const secretViewSchema = z.object({ name: z.string(), updatedAt: z.string() });
export const secretPutResponse = z.object({ name: z.string(), created: z.boolean() });

// ---- execute ----------------------------------------------------------------------------------

/** The envelope form of an execute/run body; any other JSON body is the input itself. */
export const executeEnvelope = z.object({
  input: z.unknown(),
  async: z.boolean().optional(),
  stream: z.boolean().optional(),
});

export const executeBodyDoc = z.union([executeEnvelope, z.unknown()]);

export const executionErrorSchema = z.object({ code: z.string(), message: z.string(), blockId: z.string().nullable() });

export const syncResultSchema = z.object({
  success: z.boolean(),
  executionId: z.string(),
  output: z.unknown(),
  error: executionErrorSchema.nullable(),
  metadata: z.object({ startedAt: z.string(), endedAt: z.string(), durationMs: z.number() }),
});

/** A sync 200: the envelope, unless a response block set 200 with data of its own. */
export function syncAnswerSchema(otherwise = 'the data a response block set'): z.ZodType {
  return z.union([syncResultSchema, z.unknown().describe(otherwise)]);
}

export const acceptedSchema = z.object({ executionId: z.string(), statusUrl: z.string(), status: z.literal('waiting').optional() });

export const webhookAcceptedSchema = z.object({
  eventId: z.string(),
  duplicate: z.boolean().describe('true: this delivery id was accepted within the last 24 h; nothing was started'),
});

// ---- execution records ------------------------------------------------------------------------

export const blockLogSchema = z.object({
  blockId: z.string(),
  blockName: z.string(),
  blockType: z.string(),
  status: z.string(),
  order: z.number().int(),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
  durationMs: z.number().nullable(),
  input: z.unknown(),
  output: z.unknown(),
  error: z.unknown().nullable(),
  errorHandled: z.boolean(),
  attempts: z.number().int(),
  iteration: z.unknown().nullable(),
  carriedFrom: z.string().optional().describe('a rerun from a block: this block did not run again, its log is the one of that execution'),
});

export const executionSummarySchema = z.object({
  id: z.string(),
  workflowId: z.string(),
  version: z.number().int(),
  status: z.enum(EXECUTION_STATUSES as [string, ...string[]]),
  trigger: z.unknown(),
  input: z.unknown(),
  output: z.unknown(),
  error: z.unknown().nullable(),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
  durationMs: z.number().nullable(),
});

export const executionRecordSchema = executionSummarySchema.extend({
  context: z.unknown().optional(),
  logs: z.array(blockLogSchema),
});

export const cancelResponseSchema = z.object({
  executionId: z.string(),
  status: z.enum(['cancelled', 'completed', 'failed', 'cancelling']),
});

// ---- system -----------------------------------------------------------------------------------

export const healthSchema = z.object({ status: z.literal('ok') });
export const readySchema = z.object({ status: z.literal('ready'), checks: z.record(z.string(), z.string()) });
