import { z } from 'zod';
import { TroupeError } from '../errors.js';
import { hasPlaceholder } from '../model/ref-parse.js';
import { checkLiteralHeaders, headerNameProblem, headerText, headerValueProblem, keyValueEntries, keyValuesSchema } from './schemas.js';
import type { BlockType } from './types.js';

// 1xx are interim answers, never a final one: sent as the answer, the client waits for the real one
const STATUS_RULE = 'status must be an integer from 200 to 599';

/** A status given as a number or as digits, when it is one (200–599); null otherwise. */
function statusOf(status: unknown): number | null {
  const n = typeof status === 'string' && /^\s*\d+\s*$/.test(status) ? Number(status) : status;
  return typeof n === 'number' && Number.isInteger(n) && n >= 200 && n <= 599 ? n : null;
}

export const responseConfigSchema = z.object({
  // A string is a reference (resolved before run) or a status in digits such as "201".
  status: z
    .union([
      z.number().int(STATUS_RULE).min(200, STATUS_RULE).max(599, STATUS_RULE),
      z.string().refine((s) => hasPlaceholder(s) || statusOf(s) !== null, STATUS_RULE),
      z.null(),
    ])
    .optional(),
  headers: keyValuesSchema.superRefine((headers, ctx) => checkLiteralHeaders(headers, ctx, { trimmed: false, values: true })).optional(),
  data: z.unknown().optional(),
});

export type ResponseConfig = z.infer<typeof responseConfigSchema>;

function invalid(message: string): TroupeError {
  return new TroupeError('INVALID_CONFIG', message);
}

/**
 * The status after references resolved: a number, or a text holding one; 200 when absent or
 * null. Null is a reference that read nothing (`"<start.status>"` with no status given), which
 * the schema accepts: it used to fail the block with INVALID_CONFIG after the run did its work.
 */
export function responseStatus(status: unknown): number {
  if (status === undefined || status === null) return 200;
  const n = statusOf(status);
  if (n === null) throw invalid(`response ${STATUS_RULE}, got ${JSON.stringify(status) ?? String(status)}`);
  return n;
}

/** Header values as text (objects as JSON); null drops a header; what HTTP cannot carry is refused. */
export function responseHeaders(headers: ResponseConfig['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of keyValueEntries(headers)) {
    const nameProblem = headerNameProblem(name);
    if (nameProblem !== null) throw invalid(`response ${nameProblem}`);
    if (value === null || value === undefined) continue;
    const text = headerText(value);
    const valueProblem = headerValueProblem(name, text);
    if (valueProblem !== null) throw invalid(`response ${valueProblem}`);
    out[name] = text;
  }
  return out;
}

/** Sets the execution's HTTP response; it has no outgoing connections. */
export const responseBlock: BlockType<ResponseConfig> = {
  type: 'response',
  configSchema: responseConfigSchema,
  handles: () => [],
  async run(ctx) {
    const status = responseStatus(ctx.config.status);
    const headers = responseHeaders(ctx.config.headers);
    return { output: { status, headers, data: ctx.config.data ?? null }, handles: [] };
  },
};
