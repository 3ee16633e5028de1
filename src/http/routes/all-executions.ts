/** Admin: executions of every workflow, newest first, with filters (SPEC §4.1; the console's list). */
import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import type { Services } from '../../service/index.js';
import type { ExecutionQuery, ExecutionStatus } from '../../store/types.js';
import { executionSummary } from '../present.js';
import { errorResponse, parseQuery, type RouteSpec } from '../route-spec.js';
import { executionListQuery, executionSummarySchema, page } from '../schemas.js';

/** The trigger types an execution may have (SPEC §1.1, the starter's `trigger.type`). */
export const TRIGGER_TYPES = ['manual', 'api', 'chat', 'webhook', 'schedule', 'workflow', 'rerun'] as const;

const time = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time with a time zone, e.g. 2026-11-27T12:00:00Z' });

export const allExecutionsQuery = executionListQuery.extend({
  workflowId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a workflow id ([A-Za-z0-9_-]{1,64})').optional(),
  trigger: z.enum(TRIGGER_TYPES).optional().describe("the trigger's type"),
  since: time.optional().describe('created at or after this time'),
  until: time.optional().describe('created before this time'),
});

function toQuery(q: z.output<typeof allExecutionsQuery>): ExecutionQuery {
  if (q.since !== undefined && q.until !== undefined && Date.parse(q.since) > Date.parse(q.until)) {
    throw new ValidationError('INVALID_REQUEST', 'invalid query parameters', [{ path: '/until', message: 'must not be before since' }]);
  }
  return {
    limit: q.limit,
    cursor: q.cursor ?? null,
    ...(q.workflowId === undefined ? {} : { workflowId: q.workflowId }),
    ...(q.status === undefined ? {} : { status: q.status as ExecutionStatus }),
    ...(q.trigger === undefined ? {} : { triggerType: q.trigger }),
    ...(q.since === undefined ? {} : { since: q.since }),
    ...(q.until === undefined ? {} : { until: q.until }),
  };
}

export function allExecutionsRoutes(s: Services): RouteSpec[] {
  return [{
    method: 'get', path: '/api/executions', operationId: 'listAllExecutions', tag: 'executions', auth: 'admin',
    summary: 'Executions of every workflow, newest first (without logs), filtered by workflow, status, trigger type and creation time',
    description: 'Every filter is optional and all given ones must hold. Executions of deleted workflows stay listed (their records are kept); '
      + 'a workflowId no workflow has lists what was recorded under it, if anything.',
    query: allExecutionsQuery,
    responses: { 200: { description: 'a page of executions', schema: page(executionSummarySchema) },
      400: errorResponse('a filter, limit or cursor is invalid, or until is before since (INVALID_REQUEST, details.issues)'),
      401: errorResponse('no or wrong admin token (UNAUTHORIZED)') },
    handler: async (ctx) => {
      const result = await s.store.executions.listAll(toQuery(parseQuery(ctx, allExecutionsQuery)));
      ctx.body = { items: result.items.map(executionSummary), nextCursor: result.nextCursor };
    },
  }];
}
