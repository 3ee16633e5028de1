import { z } from 'zod';
import { TroupeError } from '../errors.js';
import { idempotencyKeyOf } from '../model/block-run.js';
import { hasPlaceholder } from '../model/ref-parse.js';
import { MAX_TIMER_MS } from '../model/schema.js';
import type { AttemptInfo, OutboundRequest, OutboundResult } from '../outbound/types.js';
import { checkLiteralHeaders, unsetWhenNull } from './schemas.js';
import type { BlockResult, BlockRunContext, BlockType } from './types.js';

/**
 * The API block (SPEC §3): builds the request from its resolved config and hands it to the
 * process-wide outbound client (retries, SSRF guard, throttle, size cap live there).
 * A response ≥ 400 completes the block with `error` set; no response at all throws.
 */
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] as const;

/** Rows `[{ key, value }]` as the editor stores them, or a plain object map. */
const pairsInput = z.union([z.array(z.object({ key: z.string(), value: z.unknown() })), z.record(z.string(), z.unknown())]);

const asPairs = (input: typeof pairsInput) =>
  input
    .optional()
    .transform((v): Array<{ key: string; value: unknown }> =>
      v === undefined ? [] : Array.isArray(v) ? v.map((row) => ({ key: row.key, value: row.value })) : Object.entries(v).map(([key, value]) => ({ key, value })),
    );

const pairsSchema = asPairs(pairsInput);
// a header name HTTP cannot carry is refused on save rather than by the HTTP client at run time
const headersSchema = asPairs(pairsInput.superRefine((headers, ctx) => checkLiteralHeaders(headers, ctx, { trimmed: true, values: false })));

const upper = (v: unknown): unknown => (typeof v === 'string' ? v.trim().toUpperCase() : v);
const int = (min: number, max?: number) => {
  const base = z.coerce.number({ error: 'must be a number' }).int().min(min);
  return max === undefined ? base : base.max(max);
};

/**
 * A URL that is all literal text can be checked when the workflow is saved: it must be absolute
 * http(s). One built from references or `{path}` parameters is checked once they are filled in
 * (at run time the resolved URL comes through here again, and the client checks the final one).
 */
function literalUrlProblem(url: string): string | null {
  if (hasPlaceholder(url)) return null;
  // `{name}` parameters (filled from pathParams) may stand anywhere, a port or a host too:
  // only the scheme can be judged before they are filled in
  if (url.includes('{')) return /^(https?:\/\/|\{)/i.test(url) ? null : 'url must be an absolute http or https URL';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'url must be an absolute http or https URL';
  }
  return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? null : `url must be http or https, not ${parsed.protocol}`;
}

export const apiConfigSchema = z.object({
  url: z.string().trim().min(1, 'url is required').superRefine((url, ctx) => {
    const problem = literalUrlProblem(url);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  }),
  // url, method and pathParams say where the request goes: null there fails, never guessed
  method: z.preprocess(upper, z.enum(METHODS).default('GET')),
  pathParams: pairsSchema,
  // a list whose reference reads null is none, as a row whose value reads null is left out
  params: unsetWhenNull(pairsSchema),
  headers: unsetWhenNull(headersSchema),
  body: z.unknown().optional(),
  // A setting whose reference reads null keeps its default: coerced, null was 0 retries (or
  // backoff) without a word, and a timeout or size cap of 0, refused.
  // Delays at most the longest a timer takes (MAX_TIMER_MS): a longer one would fire at once.
  timeoutMs: unsetWhenNull(int(1, MAX_TIMER_MS).default(30_000)),
  retries: unsetWhenNull(int(0, 10).default(3)),
  retryBaseMs: unsetWhenNull(int(0, MAX_TIMER_MS).default(500)),
  retryMaxMs: unsetWhenNull(int(0, MAX_TIMER_MS).default(30_000)),
  maxResponseBytes: unsetWhenNull(int(1).default(10 * 1024 * 1024)),
});

export type ApiConfig = z.output<typeof apiConfigSchema>;

/** What run() returns: a BlockResult plus the per-attempt log for the block log. */
export interface ApiBlockResult extends BlockResult {
  attempts: number;
  attemptLog: AttemptInfo[];
}

/** Text of a resolved value: references may resolve to numbers, booleans or objects. */
function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

const PLACEHOLDER = /\{([^{}/?#\s]+)\}/g;
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/**
 * A parameter that makes a path segment `.` or `..` (which encoding cannot stop: URLs treat `%2e`
 * as a dot too) would move the request elsewhere on the host (`/users/{id}/profile` with `..` is
 * `/profile`): refused, unless the author wrote that segment. So is one that leaves a segment
 * empty (a null or "" value): `/items/{id}` would become the collection `/items/`, and servers
 * that merge slashes read `/users//profile` as `/users/profile`.
 */
function refuseMovedSegments(url: string, fill: (text: string) => string): void {
  const end = url.search(/[?#]/);
  for (const segment of (end < 0 ? url : url.slice(0, end)).split('/')) {
    if (!segment.includes('{') || DOT_SEGMENT.test(segment)) continue;
    const filled = fill(segment);
    if (filled === '') {
      throw new TroupeError('INVALID_CONFIG', `a path parameter leaves the URL segment "${segment}" empty (its value is null or ""), which would change the path`);
    }
    if (DOT_SEGMENT.test(filled)) {
      throw new TroupeError('INVALID_CONFIG', `a path parameter makes the URL segment "${segment}" a dot segment ("${filled}"), which would change the path`);
    }
  }
}

/**
 * `{name}` filled from pathParams (percent-encoded, so a value cannot add path segments or a
 * query), then params appended after any query already there, before a `#fragment`.
 * Params whose value is null/absent are left out; an array value repeats the key.
 */
export function buildUrl(url: string, pathParams: ApiConfig['pathParams'], params: ApiConfig['params']): string {
  const byName = new Map(pathParams.map((p) => [p.key.trim(), p.value]));
  const fill = (text: string): string => text.replace(PLACEHOLDER, (whole, name: string) =>
    byName.has(name) ? encodeURIComponent(asText(byName.get(name))) : whole,
  );
  const filled = fill(url);
  refuseMovedSegments(url, fill);
  const hashAt = filled.indexOf('#');
  const base = hashAt >= 0 ? filled.slice(0, hashAt) : filled;
  const fragment = hashAt >= 0 ? filled.slice(hashAt) : '';
  const parts: string[] = [];
  for (const { key, value } of params) {
    if (key.trim() === '' || value === null || value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      parts.push(`${encodeURIComponent(key.trim())}=${encodeURIComponent(asText(item))}`);
    }
  }
  if (parts.length === 0) return filled;
  const separator = !base.includes('?') ? '?' : base.endsWith('?') || base.endsWith('&') ? '' : '&';
  return base + separator + parts.join('&') + fragment;
}

export function buildHeaders(rows: ApiConfig['headers']): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const { key, value } of rows) {
    if (key.trim() === '' || value === null || value === undefined) continue;
    headers[key.trim()] = asText(value);
  }
  return headers;
}

export function toOutboundRequest(config: ApiConfig): OutboundRequest {
  const request: OutboundRequest = {
    url: buildUrl(config.url, config.pathParams, config.params),
    method: config.method,
    headers: buildHeaders(config.headers),
    timeoutMs: config.timeoutMs,
    retries: config.retries,
    retryBaseMs: config.retryBaseMs,
    retryMaxMs: config.retryMaxMs,
    maxResponseBytes: config.maxResponseBytes,
  };
  if (config.body !== undefined) request.body = config.body;
  return request;
}

/** The `error` output of a response ≥ 400 (SPEC §3 shape). */
function responseError(result: OutboundResult, retryMaxMs: number): Record<string, unknown> {
  const attempts = result.attempts.length;
  const after = attempts > 1 ? ` after ${attempts} attempts` : '';
  if (result.status === 429) {
    const tooLong = result.retryAfterMs !== undefined && result.retryAfterMs > retryMaxMs;
    const message = tooLong
      ? `rate limited (429): the server asks to wait ${result.retryAfterMs} ms, more than retryMaxMs ${retryMaxMs}`
      : `rate limited (429)${after}`;
    const error: Record<string, unknown> = { code: 'RATE_LIMITED', message, status: 429, attempts };
    if (result.retryAfterMs !== undefined) error['retryAfterMs'] = result.retryAfterMs;
    return error;
  }
  return { code: 'HTTP_ERROR', message: `the server answered ${result.status}${after}`, status: result.status, attempts };
}

async function run(ctx: BlockRunContext<ApiConfig>): Promise<ApiBlockResult> {
  const http = ctx.services.http;
  if (!http) throw new TroupeError('INTERNAL', 'no outbound HTTP client is configured for the api block');
  const request = toOutboundRequest(ctx.config);
  // only a POST or PATCH carries the key (see prepareRequest): no hash for the other methods
  const keyed = request.method === 'POST' || request.method === 'PATCH';
  if (keyed && ctx.runKey !== undefined) request.idempotencyKey = idempotencyKeyOf(ctx.runKey);
  const result = await http.send(request, ctx.signal);
  const failed = result.status >= 400;
  return {
    output: { data: result.data, status: result.status, headers: result.headers, error: failed ? responseError(result, ctx.config.retryMaxMs) : null },
    handles: failed && ctx.hasErrorConnection ? ['error'] : ['success'],
    attempts: result.attempts.length,
    attemptLog: result.attempts,
  };
}

export const apiBlock: BlockType<ApiConfig> = {
  type: 'api',
  configSchema: apiConfigSchema,
  handles: () => ['success', 'error'],
  // no response arrived: SPEC §3 says status 0 (readable downstream as <api.status>)
  failureOutput: () => ({ data: null, status: 0, headers: {} }),
  run,
};
