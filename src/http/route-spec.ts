/**
 * Routes are declared once as data: the router is mounted from these specs and /openapi.json
 * is generated from the same specs, so every route is described and described truthfully.
 */
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { z } from 'zod';
import { ValidationError, type ValidationIssue } from '../errors.js';
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
}

export function errorResponse(description: string, headers?: readonly string[]): ResponseSpec {
  return { description, schema: errorSchema, ...(headers ? { headers } : {}) };
}

export function toRouterPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

export function mount(router: Router<AppState>, specs: readonly RouteSpec[], admin: Middleware<AppState>): void {
  for (const spec of specs) {
    const tag: Middleware<AppState> = async (ctx, next) => {
      ctx.state.route = spec.path;
      await next();
    };
    const handler = async (ctx: Ctx): Promise<void> => {
      await spec.handler(ctx);
    };
    const chain = spec.auth === 'admin' ? [tag, admin, handler] : [tag, handler];
    router.register(spec.routerPath ?? toRouterPath(spec.path), [spec.method.toUpperCase()], chain as never);
  }
}

function zodToIssues(error: z.ZodError, prefix: string): ValidationIssue[] {
  return error.issues.map((i) => ({
    path: prefix + i.path.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join(''),
    message: i.message,
  }));
}

export function parseQuery<T extends z.ZodObject>(ctx: Ctx, schema: T): z.output<T> {
  const parsed = schema.safeParse(ctx.query);
  if (!parsed.success) throw new ValidationError('INVALID_REQUEST', 'invalid query parameters', zodToIssues(parsed.error, ''));
  return parsed.data;
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
