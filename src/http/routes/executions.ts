/**
 * Execution records, their events (SSE, replayed then live) and cancel (SPEC §4.2). Allowed for
 * the admin token or an API key of the execution's workflow; checked like execute: credentials,
 * then the execution (404), then the key (401 unknown/revoked, 403 other workflow).
 */
import type { Logger } from 'pino';
import { TroupeError, ValidationError } from '../../errors.js';
import type { ExecutionDetail } from '../../service/executions.js';
import type { Services } from '../../service/index.js';
import { isAdmin, unauthorized } from '../middleware/auth.js';
import { refuseOversizedBody } from '../middleware/body.js';
import { executionView } from '../present.js';
import { streamEvents } from '../respond.js';
import { errorResponse, param, parseQuery, type RouteSpec } from '../route-spec.js';
import { cancelResponseSchema, eventsQuery, executionRecordSchema } from '../schemas.js';
import type { Ctx } from '../types.js';

export async function authorizedExecution(ctx: Ctx, s: Services, adminToken: string): Promise<ExecutionDetail> {
  const id = param(ctx, 'id');
  if (isAdmin(ctx, adminToken)) {
    return tagged(ctx, await s.executions.get(id));
  }
  const presented = ctx.get('X-API-Key');
  if (presented === '') {
    ctx.set('WWW-Authenticate', 'Bearer');
    throw unauthorized('an admin token or an API key of the workflow is required');
  }
  const rec = await s.executions.get(id);
  const key = await s.keys.authenticate(presented);
  if (key === null) throw unauthorized('unknown or revoked API key');
  if (key.workflowId !== rec.workflowId || !(await ranUnderCurrentWorkflow(s, rec))) {
    throw new TroupeError('FORBIDDEN', "this API key does not belong to the execution's workflow");
  }
  return tagged(ctx, rec);
}

/**
 * Once the caller may see the execution, every answer about it carries X-Execution-Id (SPEC §4),
 * the refusals that follow too (413, a bad Last-Event-ID, cancel's 409); never before, so a
 * refused caller learns nothing from the header.
 */
async function tagged(ctx: Ctx, rec: ExecutionDetail): Promise<ExecutionDetail> {
  ctx.set('X-Execution-Id', rec.id);
  await refuseOversizedBody(ctx);
  return rec;
}

/**
 * A workflow deleted and created again under the same id is another workflow: its keys do not
 * reach the runs of the one before (whose history it does not list either, docs/http.md).
 */
async function ranUnderCurrentWorkflow(s: Services, rec: ExecutionDetail): Promise<boolean> {
  const workflow = await s.workflows.get(rec.workflowId);
  return rec.createdAt === undefined || rec.createdAt >= workflow.createdAt;
}

/**
 * Where to resume: the later of `?after=` and `Last-Event-ID`. A browser's EventSource keeps its
 * URL (with the `after` it started from) and sends the header when it reconnects, so the header
 * must not lose to the query, or events the client has would come again.
 */
function lastEventId(ctx: Ctx): number {
  const q = parseQuery(ctx, eventsQuery);
  const header = ctx.get('Last-Event-ID').trim();
  if (header !== '' && !/^\d{1,15}$/.test(header)) {
    throw new ValidationError('INVALID_REQUEST', 'invalid Last-Event-ID', [{ path: '/Last-Event-ID', message: 'must be an event number in decimal digits' }]);
  }
  return Math.max(q.after ?? 0, header === '' ? 0 : Number(header));
}

const auth401 = errorResponse('no admin token or API key, or an unknown or revoked key (UNAUTHORIZED)');
const auth403 = errorResponse("an API key of another workflow (FORBIDDEN)");
const unknown404 = errorResponse('unknown execution (NOT_FOUND)');

export function executionRoutes(s: Services, adminToken: string, logger: Logger): RouteSpec[] {
  return [
    {
      method: 'get', path: '/api/executions/{id}', operationId: 'getExecution', tag: 'executions', auth: 'adminOrKey',
      summary: 'The execution record with its block logs',
      responses: { 200: { description: 'the record', schema: executionRecordSchema, headers: ['X-Execution-Id'] }, 401: auth401,
        403: auth403, 404: unknown404 },
      handler: async (ctx) => {
        const rec = await authorizedExecution(ctx, s, adminToken);
        ctx.body = executionView(rec, isAdmin(ctx, adminToken) ? s.approvals : undefined);
      },
    },
    {
      method: 'get', path: '/api/executions/{id}/events', operationId: 'executionEvents', tag: 'executions', auth: 'adminOrKey',
      summary: 'The execution events as SSE: replayed from the start (or after Last-Event-ID / ?after=), then live until done',
      query: eventsQuery,
      requestHeaders: [{ name: 'Last-Event-ID', description: 'resume after this event number (with `after`, the later of the two)' }],
      responses: { 200: { description: 'text/event-stream; each event has `id` (its sequence number), `event` and JSON `data`',
        contentType: 'text/event-stream', headers: ['X-Execution-Id'] }, 400: errorResponse('invalid query or Last-Event-ID (INVALID_REQUEST)', ['X-Execution-Id']),
        401: auth401, 403: auth403, 404: unknown404 },
      handler: async (ctx) => {
        const rec = await authorizedExecution(ctx, s, adminToken);
        const after = lastEventId(ctx);
        streamEvents(ctx, s.executions, rec.id, logger, after);
      },
    },
    {
      method: 'post', path: '/api/executions/{id}/cancel', operationId: 'cancelExecution', tag: 'executions', auth: 'adminOrKey',
      summary: 'Cancel a queued, running or waiting execution',
      description: 'When it runs in this process the answer waits for it to end: 200 with the final status. Otherwise the cancel is '
        + 'sent over the bus to the process running it: 202 with status "cancelling".',
      responses: { 200: { description: 'ended', schema: cancelResponseSchema, headers: ['X-Execution-Id'] },
        202: { description: 'cancel requested', schema: cancelResponseSchema, headers: ['X-Execution-Id'] }, 401: auth401, 403: auth403,
        404: unknown404, 409: errorResponse('the execution has already ended (CONFLICT)', ['X-Execution-Id']) },
      handler: async (ctx) => {
        const rec = await authorizedExecution(ctx, s, adminToken);
        const status = await s.executions.cancel(rec);
        ctx.status = status === null ? 202 : 200;
        ctx.body = { executionId: rec.id, status: status ?? 'cancelling' };
      },
    },
  ];
}
