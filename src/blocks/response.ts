import { z } from 'zod';
import { TroupeError } from '../errors.js';
import { hasPlaceholder } from '../model/ref-parse.js';
import { keyValueEntries, keyValuesSchema } from './schemas.js';
import type { BlockType } from './types.js';

const STATUS_RULE = 'status must be an integer from 100 to 599';
const NUMERIC = /^\s*\d+\s*$/;

/** Status text: digits in range, or something a reference fills in at run time. */
function statusText(text: string): boolean {
  if (hasPlaceholder(text)) return true;
  const n = Number(text);
  return NUMERIC.test(text) && n >= 100 && n <= 599;
}
/** RFC 9110 token characters: anything else cannot be a header name. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export const responseConfigSchema = z.object({
  // A string is a reference (resolved before run) or a numeric text such as "201"; the range of
  // a numeric text is checked with the resolved value (responseStatus).
  status: z
    .union([z.number().int(STATUS_RULE).min(100, STATUS_RULE).max(599, STATUS_RULE), z.string().refine(statusText, STATUS_RULE), z.null()])
    .optional(),
  headers: keyValuesSchema.optional(),
  data: z.unknown().optional(),
});

export type ResponseConfig = z.infer<typeof responseConfigSchema>;

function invalid(message: string): TroupeError {
  return new TroupeError('INVALID_CONFIG', message);
}

/** The status after references resolved: a number, or a text holding one; 200 when absent. */
export function responseStatus(status: unknown): number {
  if (status === undefined) return 200;
  const n = typeof status === 'string' && NUMERIC.test(status) ? Number(status) : status;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 100 || n > 599) {
    throw invalid(`response ${STATUS_RULE}, got ${JSON.stringify(status) ?? String(status)}`);
  }
  return n;
}

/** Header values as text (objects as JSON); null drops a header; line breaks are refused. */
export function responseHeaders(headers: ResponseConfig['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of keyValueEntries(headers)) {
    if (!HEADER_NAME.test(name)) throw invalid(`response header name ${JSON.stringify(name)} is not a valid HTTP header name`);
    if (value === null || value === undefined) continue;
    const text = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
    if (/[\r\n\0]/.test(text)) throw invalid(`response header "${name}" contains a line break or NUL character`);
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
