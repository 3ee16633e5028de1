/** GET /api/workflows/{id}/schedules (SPEC §4.5): each schedule's next run times and last result. */
import { z } from 'zod';
import { describeSchedules } from '../../service/schedule-views.js';
import type { Services } from '../../service/index.js';
import { errorResponse, param, type RouteSpec } from '../route-spec.js';
import { page } from '../schemas.js';

const fireSchema = z.object({
  dueAt: z.string(),
  firedAt: z.string(),
  executionId: z.string().nullable(),
  status: z.string().describe('the execution\'s status, or `skipped` (overlap "skip" while the previous run ran), `starting` (claimed), `missed` (never started)'),
  error: z.unknown(),
});

export const scheduleViewSchema = z.object({
  id: z.string(),
  cron: z.string(),
  timezone: z.string(),
  overlap: z.enum(['skip', 'allow']),
  catchUp: z.enum(['none', 'last']),
  input: z.unknown(),
  active: z.boolean().describe('true while the workflow is deployed with this schedule'),
  nextRuns: z.array(z.string()).describe('the next due times (ISO 8601, UTC); empty when not active'),
  nextRunAt: z.string().nullable().describe('the first of nextRuns'),
  lastResult: fireSchema.nullable().describe('the latest due time handled, run or skipped'),
  lastRun: fireSchema.nullable().describe('the latest due time that ran'),
});

export function scheduleRoutes(s: Services): RouteSpec[] {
  return [
    {
      method: 'get', path: '/api/workflows/{id}/schedules', operationId: 'listSchedules', tag: 'schedules', auth: 'admin',
      summary: "The workflow's schedules: the deployed version's (active), else the current version's (inactive)",
      responses: {
        200: { description: 'every schedule trigger, in definition order', schema: page(scheduleViewSchema) },
        401: errorResponse('no or wrong admin token (UNAUTHORIZED)'),
        404: errorResponse('unknown workflow (NOT_FOUND)'),
      },
      handler: async (ctx) => {
        const id = param(ctx, 'id');
        const stored = await s.workflows.get(id);
        const deployment = await s.deployments.get(id);
        const def = deployment === null ? stored.definition : (await s.deployments.loadDeployed(deployment)).def;
        ctx.body = { items: await describeSchedules(s.store, s.schedules, id, def, deployment !== null), nextCursor: null };
      },
    },
  ];
}
