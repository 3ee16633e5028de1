/**
 * POST /api/workflows/{workflowId}/execute (API key, the deployed version) and
 * POST /api/workflows/{id}/run (admin, the current version): SPEC §4.1, §4.2.
 * Execute checks in the SPEC's order: key present, workflow, key valid, key's workflow,
 * deployed, JSON, rate limit; then input (422) and capacity (503).
 */
import type { Logger } from 'pino';
import { z } from 'zod';
import { TroupeError, ValidationError } from '../../errors.js';
import type { Services } from '../../service/index.js';
import { unauthorized } from '../middleware/auth.js';
import { respondAccepted, respondToExecution, type ExecutionMode } from '../respond.js';
import { checkBody, errorResponse, orResponseBlock, param, type ResponseSpec, type RouteSpec } from '../route-spec.js';
import { acceptedSchema, executeBodyDoc, executeEnvelope, syncAnswerSchema, syncResultSchema } from '../schemas.js';
import type { Ctx } from '../types.js';

export interface ExecuteRequest {
  input: unknown;
  mode: ExecutionMode;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `{ input, async?, stream? }`, or any other body as the input with the mode from headers. */
export function executeRequest(body: unknown, ctx: Pick<Ctx, 'get' | 'accepts'>): ExecuteRequest {
  const fromHeaders = headerMode(ctx);
  if (!isObject(body) || !Object.prototype.hasOwnProperty.call(body, 'input')) {
    // an empty body is `{}`; a body that is JSON `null` is the input null, as any other value
    return { input: body === undefined ? {} : body, mode: fromHeaders ?? 'sync' };
  }
  const env = plainEnvelope(body) ?? checkBody(body, executeEnvelope);
  return { input: env.input ?? null, mode: envelopeMode(env, fromHeaders) };
}

/**
 * The mode of a request whose body is an envelope of its own (a rerun's): the body's
 * `async`/`stream` flags, then the headers, as execute reads them.
 */
export function requestMode(flags: { async?: boolean; stream?: boolean }, ctx: Pick<Ctx, 'get' | 'accepts'>): ExecutionMode {
  return envelopeMode(flags, headerMode(ctx));
}

const HEADER_MODES: readonly ExecutionMode[] = ['sync', 'async', 'stream'];

/**
 * The mode the headers ask for, null when they ask for none. `X-Execution-Mode` names it
 * outright, so it decides over `Accept`, which only says what the client can read. Any other
 * value is refused: a mistyped `asynch` must not silently hold the client for the whole run.
 */
function headerMode(ctx: Pick<Ctx, 'get' | 'accepts'>): ExecutionMode | null {
  const named = ctx.get('X-Execution-Mode').trim().toLowerCase();
  if (named === '') return prefersEventStream(ctx) ? 'stream' : null;
  const mode = HEADER_MODES.find((m) => m === named);
  if (mode !== undefined) return mode;
  throw new ValidationError('INVALID_REQUEST', 'invalid X-Execution-Mode', [
    { path: '/X-Execution-Mode', message: 'must be sync, async or stream' },
  ]);
}

/**
 * `Accept` asks for the stream when it names text/event-stream and prefers it to JSON
 * (`application/json, text/event-stream` is a client that takes either but wants JSON).
 */
function prefersEventStream(ctx: Pick<Ctx, 'get' | 'accepts'>): boolean {
  const accept = ctx.get('Accept');
  if (!accept.toLowerCase().includes('text/event-stream')) return false;
  return ctx.accepts('text/event-stream', 'application/json') === 'text/event-stream';
}

/**
 * The body's flags win over the headers (docs/http.md): a mode the body asks for is taken
 * whatever the headers say, and one it turns off (`false`) is not taken from them. Only a body
 * asking for both is refused.
 */
function envelopeMode(env: { async?: boolean; stream?: boolean }, fromHeaders: ExecutionMode | null): ExecutionMode {
  if (env.async === true && env.stream === true) throw bothModes();
  if (env.async === true) return 'async';
  if (env.stream === true) return 'stream';
  if (fromHeaders === 'async' && env.async === undefined) return 'async';
  if (fromHeaders === 'stream' && env.stream === undefined) return 'stream';
  return 'sync';
}

/**
 * The envelope as nearly every client sends it (`input` and optional boolean `async`/`stream`,
 * nothing else) read without a schema parse; anything else goes through the schema, which says
 * what is wrong.
 */
function plainEnvelope(body: Record<string, unknown>): { input: unknown; async?: boolean; stream?: boolean } | null {
  let n = 1;
  const { async: a, stream: s } = body;
  if (a !== undefined) {
    if (typeof a !== 'boolean') return null;
    n += 1;
  }
  if (s !== undefined) {
    if (typeof s !== 'boolean') return null;
    n += 1;
  }
  if (Object.keys(body).length !== n) return null;
  const env: { input: unknown; async?: boolean; stream?: boolean } = { input: body['input'] };
  if (a !== undefined) env.async = a;
  if (s !== undefined) env.stream = s;
  return env;
}

function bothModes(): TroupeError {
  return new TroupeError('INVALID_REQUEST', 'an execution is either async or streamed, not both');
}

async function execute(ctx: Ctx, s: Services, logger: Logger): Promise<void> {
  const id = param(ctx, 'workflowId');
  const presented = ctx.get('X-API-Key');
  if (presented === '') throw unauthorized('the X-API-Key header is required');
  const deployment = await s.deployments.get(id);
  if (deployment === null) await s.workflows.get(id); // 404 NOT_FOUND when unknown
  const key = await s.keys.authenticate(presented);
  if (key === null) throw unauthorized('unknown or revoked API key');
  if (key.workflowId !== id) throw new TroupeError('FORBIDDEN', 'this API key belongs to another workflow');
  if (deployment === null) throw new TroupeError('NOT_DEPLOYED', `workflow ${id} is not deployed`);
  const req = executeRequest(await ctx.state.readJson(), ctx);
  const taken = s.rateLimits.take(key.id);
  if (!taken.ok) {
    throw new TroupeError('RATE_LIMITED', 'too many requests for this API key', { details: { retryAfterSec: taken.retryAfterSec } });
  }
  const loaded = await s.deployments.loadDeployed(deployment);
  s.executions.validateInput(loaded, req.input);
  // in a cluster an async execution goes to the work queue, for whichever instance has room
  if (req.mode === 'async' && s.executions.queued) {
    respondAccepted(ctx, await s.executions.enqueue(loaded, req.input, { type: 'api', keyId: key.id }));
    return;
  }
  s.executions.ensureCapacity();
  // sync answers only at the end, which waits for the record: no need to wait for it twice
  const handle = await s.executions.start(loaded, req.input, { type: 'api', keyId: key.id }, { awaitRecord: req.mode !== 'sync' });
  await respondToExecution(ctx, handle, req.mode, s.executions, logger);
}

async function run(ctx: Ctx, s: Services, logger: Logger): Promise<void> {
  const stored = await s.workflows.get(param(ctx, 'id'));
  const req = executeRequest(await ctx.state.readJson(), ctx);
  const loaded = s.cache.load(stored, stored.updatedAt);
  s.executions.validateInput(loaded, req.input);
  if (req.mode === 'async' && s.executions.queued) {
    respondAccepted(ctx, await s.executions.enqueue(loaded, req.input, { type: 'manual' }));
    return;
  }
  s.executions.ensureCapacity();
  const handle = await s.executions.start(loaded, req.input, { type: 'manual' }, { awaitRecord: req.mode !== 'sync' });
  await respondToExecution(ctx, handle, req.mode, s.executions, logger);
}

const EXEC_HEADERS = ['X-Execution-Id'] as const;

export function executionResponses(): Record<number, ResponseSpec> & { default: ResponseSpec } {
  return {
    200: {
      description: 'sync: the result envelope, or the data set by a response block (with its headers) when it set 200; stream: text/event-stream '
        + '(block.started, block.completed|block.failed|block.skipped, chunk, then done with the sync body)',
      schema: syncAnswerSchema(), headers: EXEC_HEADERS, alsoContentTypes: ['text/event-stream'],
    },
    default: {
      description: 'sync, when a response block ran: the status, headers and data it set (any status; data as JSON, or text)',
      schema: z.unknown().describe('the data the response block set'), headers: EXEC_HEADERS, alsoContentTypes: ['text/plain'],
    },
    202: { description: 'async: accepted, the record exists', schema: acceptedSchema, headers: [...EXEC_HEADERS, 'Location'] },
    400: errorResponse('invalid JSON, body or X-Execution-Mode (INVALID_JSON, INVALID_REQUEST)'),
    413: errorResponse('body over the size limit (PAYLOAD_TOO_LARGE)'),
    422: errorResponse("input does not match the starter's inputFormat (INVALID_INPUT)"),
    500: { description: 'the execution failed: success false with error { code, message, blockId }', schema: syncResultSchema, headers: EXEC_HEADERS },
    503: errorResponse('no capacity (OVERLOADED), or the bus is reconnecting to NATS (BUS_UNAVAILABLE)', ['Retry-After']),
    504: { description: 'the execution exceeded its time limit (EXECUTION_TIMEOUT)', schema: syncResultSchema, headers: EXEC_HEADERS },
  };
}

// (`Accept: text/event-stream` also selects the stream; OpenAPI has content negotiation say that,
// through the 200 answer's media types, not an Accept parameter)
export const MODE_HEADERS = [{
  name: 'X-Execution-Mode',
  description: '`async`: answer 202 at once (as `"async": true`); `stream`: answer with server-sent events (as `"stream": true`, or, '
    + 'without this header, an `Accept` that prefers text/event-stream); `sync`: wait for the result (the default). It decides over '
    + '`Accept`, the body\'s `async`/`stream` over it; any other value is 400 INVALID_REQUEST',
}] as const;


const BODY_DOC = 'Either `{ "input": <any JSON>, "async"?: true, "stream"?: true }`, or any JSON without an `input` key, which is '
  + 'then the input itself (mode from the headers only: `X-Execution-Mode`, else an `Accept` that prefers text/event-stream). '
  + 'Empty body: input `{}`.';

export function executeRoutes(s: Services, logger: Logger): RouteSpec[] {
  return [
    {
      method: 'post', path: '/api/workflows/{workflowId}/execute', operationId: 'executeWorkflow', tag: 'execute', auth: 'apiKey',
      summary: 'Execute the deployed (pinned) version of a workflow',
      description: 'Errors in this order: 401 no key, 404 unknown workflow, 401 unknown or revoked key, 403 FORBIDDEN key of another '
        + 'workflow, 403 NOT_DEPLOYED, 413 or 400 INVALID_JSON, 400 INVALID_REQUEST (a bad envelope or X-Execution-Mode), 429 RATE_LIMITED, '
        + 'then 422 INVALID_INPUT and 503 OVERLOADED.',
      body: { schema: executeBodyDoc, description: BODY_DOC, required: false },
      requestHeaders: MODE_HEADERS,
      responses: orResponseBlock({
        ...executionResponses(),
        401: errorResponse('no, unknown or revoked API key (UNAUTHORIZED)'),
        403: errorResponse('key of another workflow (FORBIDDEN) or workflow not deployed (NOT_DEPLOYED)'),
        404: errorResponse('unknown workflow (NOT_FOUND)'),
        429: errorResponse('too many requests for this key (RATE_LIMITED)', ['Retry-After']),
      }),
      handler: (ctx) => execute(ctx, s, logger),
      hot: true,
    },
    {
      method: 'post', path: '/api/workflows/{id}/run', operationId: 'runWorkflow', tag: 'execute', auth: 'admin',
      summary: 'Manual trigger on the current version (deployed or not); body and answers as execute',
      body: { schema: executeBodyDoc, description: BODY_DOC, required: false },
      requestHeaders: MODE_HEADERS,
      responses: orResponseBlock({
        ...executionResponses(),
        401: errorResponse('no or wrong admin token (UNAUTHORIZED)'),
        404: errorResponse('unknown workflow (NOT_FOUND)'),
      }),
      handler: (ctx) => run(ctx, s, logger),
    },
  ];
}
