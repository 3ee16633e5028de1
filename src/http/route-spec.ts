/**
 * Routes are declared once as data: the router is mounted from these specs and /openapi.json
 * is generated from the same specs, so every route is described and described truthfully.
 */
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import { ValidationError, type ValidationIssue } from '../errors.js';
import { refuseOversizedBody } from './middleware/body.js';
import { errorSchema } from './schemas.js';
import type { AppState, Ctx } from './types.js';

/** admin: bearer token checked before the handler; apiKey / adminOrKey: checked by the handler (order matters) */
export type AuthMode = 'none' | 'admin' | 'apiKey' | 'adminOrKey';

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** default application/json */
  contentType?: string;
  /** other media types the same status may answer with, as text (stream mode: text/event-stream) */
  alsoContentTypes?: readonly string[];
  headers?: readonly string[];
}

export interface RouteSpec {
  method: 'get' | 'post' | 'put' | 'delete';
  /** OpenAPI form: /api/workflows/{id} */
  path: string;
  /** the router's own pattern, when the OpenAPI form cannot say it (a parameter spanning segments) */
  routerPath?: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  auth: AuthMode;
  query?: z.ZodObject;
  /** request headers the route reads besides authentication (documented as header parameters) */
  requestHeaders?: readonly { name: string; description: string }[];
  body?: { schema: z.ZodType; description?: string; required?: boolean };
  /** by status; `default`: any other status (what a response block sets) */
  responses: Record<number, ResponseSpec> & { default?: ResponseSpec };
  handler: (ctx: Ctx) => Promise<void> | void;
  /** on the hot path (execute): also mounted on the small router tried first (see `mount`) */
  hot?: boolean;
}

export function errorResponse(description: string, headers?: readonly string[]): ResponseSpec {
  return { description, schema: errorSchema, ...(headers ? { headers } : {}) };
}

/**
 * Routes whose sync answer a response block may set (execute, run, sync webhooks): the block
 * chooses any status, so every status the route lists may also carry what such a block set,
 * as JSON or as text, besides the route's own answer.
 */
export function orResponseBlock<R extends RouteSpec['responses']>(responses: R): R {
  const out: RouteSpec['responses'] = { ...responses };
  for (const [key, r] of Object.entries(responses)) {
    if (key === 'default' || r === undefined) continue;
    // 200 already says so: its schema is the envelope or the block's data (syncAnswerSchema)
    if (key === '200') {
      out[200] = { ...r, alsoContentTypes: [...new Set([...(r.alsoContentTypes ?? []), 'text/plain'])] };
      continue;
    }
    out[Number(key)] = {
      ...r,
      description: `${r.description}; or, in sync mode, what a response block set with this status`,
      ...(r.schema ? { schema: z.union([r.schema, z.unknown().describe('the data a response block set')]) } : {}),
      alsoContentTypes: [...new Set([...(r.alsoContentTypes ?? []), 'text/plain'])],
    };
  }
  return out as R;
}

export function toRouterPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

/**
 * Registers the routes on `router`, and the `hot` ones on `hot` too. @koa/router tests every
 * route of a router against each request (about a hundred here, each test allocating through its
 * debug call), a measurable share of an execute; `hot` is mounted before `router` and holds only
 * the execute route, so an execute is matched among a few. A request it does not answer (another
 * method: 405) goes on to `router`, which holds every route.
 */
export function mount(router: Router<AppState>, specs: readonly RouteSpec[], admin: Middleware<AppState>, hot?: Router<AppState>): void {
  for (const spec of specs) {
    const tag: Middleware<AppState> = async (ctx, next) => {
      ctx.state.route = spec.path;
      await next();
    };
    // adminOrKey routes authenticate in their handler, which then refuses the body itself
    const refuseBody = spec.body === undefined && spec.auth !== 'adminOrKey';
    const handler = async (ctx: Ctx): Promise<void> => {
      if (refuseBody) await refuseOversizedBody(ctx);
      await spec.handler(ctx);
    };
    const chain = spec.auth === 'admin' ? [tag, admin, handler] : [tag, handler];
    router.register(spec.routerPath ?? toRouterPath(spec.path), [spec.method.toUpperCase()], chain as never);
    if (spec.hot === true) hot?.register(spec.routerPath ?? toRouterPath(spec.path), [spec.method.toUpperCase()], chain as never);
  }
}

function zodToIssues(error: z.ZodError, prefix: string): ValidationIssue[] {
  return error.issues.map((i) => ({
    path: prefix + i.path.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join(''),
    message: i.message,
  }));
}

export function parseQuery<T extends z.ZodObject>(ctx: Ctx, schema: T): z.output<T> {
  const parsed = schema.safeParse(withoutBlanks(ctx.query));
  if (!parsed.success) throw new ValidationError('INVALID_REQUEST', 'invalid query parameters', zodToIssues(parsed.error, ''));
  return parsed.data;
}

/**
 * An empty parameter is an absent one: SPEC §4.1 writes the history route as
 * `?status=&limit=&cursor=`, and a client filling that template with nothing means no filter.
 */
function withoutBlanks(query: Record<string, string | string[] | undefined>): Record<string, string | string[] | undefined> {
  const out = Object.create(null) as Record<string, string | string[] | undefined>;
  for (const [name, value] of Object.entries(query)) if (value !== '') out[name] = value;
  return out;
}

/** Reads the JSON body and validates it: 413, 400 INVALID_JSON, 400 INVALID_REQUEST. */
export async function parseBody<T extends z.ZodType>(ctx: Ctx, schema: T): Promise<z.output<T>> {
  const body = await ctx.state.readJson();
  return checkBody(body, schema);
}

export function checkBody<T extends z.ZodType>(body: unknown, schema: T): z.output<T> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new ValidationError('INVALID_REQUEST', 'invalid request body', zodToIssues(parsed.error, ''));
  return parsed.data;
}

export function param(ctx: Ctx, name: string): string {
  return ctx.params[name] ?? '';
}
