/**
 * Approval decisions (SPEC §2.1, §4.2): the API route (admin, or an API key of the workflow) and
 * the one-time link's page. Decisions go through the approval service (src/service/approvals.ts).
 */
import { z } from 'zod';
import { isTroupeError } from '../../errors.js';
import type { Services } from '../../service/index.js';
import type { ApprovalEntry } from '../../store/types.js';
import { isAdmin } from '../middleware/auth.js';
import { formData, renderApprovalDone, renderApprovalPage, type ApprovalField } from '../approval-page.js';
import { pageHeaders } from '../page-headers.js';
import { executionView } from '../present.js';
import { errorResponse, param, parseBody, type RouteSpec } from '../route-spec.js';
import { executionRecordSchema } from '../schemas.js';
import type { Ctx } from '../types.js';
import { authorizedExecution } from './executions.js';

const decisionSchema = z.object({
  decision: z.enum(['approved', 'rejected']),
  data: z.record(z.string(), z.unknown()).optional(),
  iteration: z.unknown().optional(),
});

async function fieldsOf(s: Services, workflowId: string, executionId: string, blockId: string): Promise<ApprovalField[]> {
  const rec = await s.executions.get(executionId);
  const stored = await s.store.workflows.getVersion(workflowId, rec.version);
  const config = (stored?.definition.blocks.find((b) => b.id === blockId)?.config ?? {}) as { inputFormat?: unknown };
  return Array.isArray(config.inputFormat) ? (config.inputFormat as ApprovalField[]) : [];
}

/** The approval a link names, with the page's headers set; null when the link is not valid (404 page written). */
async function linkEntry(ctx: Ctx, s: Services): Promise<ApprovalEntry | null> {
  pageHeaders(ctx);
  const entry = await s.approvals.byToken(param(ctx, 'token'));
  if (entry === null) {
    ctx.status = 404;
    ctx.body = renderApprovalDone('Link not valid', 'This approval link has been used, has expired, or does not exist.');
  }
  return entry;
}

async function linkPage(ctx: Ctx, s: Services): Promise<void> {
  const entry = await linkEntry(ctx, s);
  if (entry === null) return;
  const fields = await fieldsOf(s, entry.workflowId, entry.executionId, entry.blockId);
  ctx.body = renderApprovalPage(entry.message, fields, `/approve/${param(ctx, 'token')}`);
}

async function linkDecision(ctx: Ctx, s: Services): Promise<void> {
  const entry = await linkEntry(ctx, s);
  if (entry === null) return;
  const params = new URLSearchParams((await ctx.state.readBody()).toString('utf8'));
  const decision = params.get('decision') === 'approved' ? 'approved' : 'rejected';
  const fields = await fieldsOf(s, entry.workflowId, entry.executionId, entry.blockId);
  try {
    const rec = await s.executions.get(entry.executionId);
    await s.approvals.decide(rec, entry.blockId, { decision, ...(decision === 'approved' ? { data: formData(params, fields) } : {}) }, 'link');
  } catch (err) {
    if (!isTroupeError(err) || (err.code !== 'INVALID_INPUT' && err.code !== 'NOT_WAITING')) throw err;
    ctx.status = err.code === 'INVALID_INPUT' ? 422 : 409;
    ctx.body = renderApprovalDone('Not recorded', err.code === 'INVALID_INPUT' ? 'Some fields are missing or not valid. Go back and try again.' : 'This approval was decided already.');
    return;
  }
  ctx.body = renderApprovalDone(decision === 'approved' ? 'Approved' : 'Rejected', 'Thank you: your decision was recorded.');
}

export function approvalRoutes(s: Services, adminToken: string): RouteSpec[] {
  return [
    {
      method: 'post', path: '/api/executions/{id}/approvals/{blockId}', operationId: 'decideApproval', tag: 'executions', auth: 'adminOrKey',
      summary: 'Decide an approval block that waits for a decision: 200 with the record',
      body: { schema: decisionSchema },
      responses: { 200: { description: 'the record', schema: executionRecordSchema, headers: ['X-Execution-Id'] },
        401: errorResponse('no admin token or API key (UNAUTHORIZED)'), 403: errorResponse('an API key of another workflow (FORBIDDEN)'),
        404: errorResponse('unknown execution (NOT_FOUND)'), 409: errorResponse('that block is not waiting for a decision (NOT_WAITING)'),
        422: errorResponse("the data does not match the block's inputFormat (INVALID_INPUT)") },
      handler: async (ctx) => {
        const rec = await authorizedExecution(ctx, s, adminToken);
        const body = await parseBody(ctx, decisionSchema);
        // a console session is the admin too (docs/console.md): its decisions are the admin's
        const admin = isAdmin(ctx, adminToken);
        await s.approvals.decide(rec, param(ctx, 'blockId'), body, admin ? 'admin' : 'apiKey');
        ctx.body = executionView(await s.executions.get(rec.id));
      },
    },
    {
      method: 'get', path: '/approve/{token}', operationId: 'approvalPage', tag: 'executions', auth: 'none',
      summary: 'The one-time approval page: the message, the inputFormat fields, Approve and Reject',
      responses: { 200: { description: 'the page', contentType: 'text/html' }, 404: { description: 'used, expired or unknown link', contentType: 'text/html' } },
      handler: (ctx) => linkPage(ctx, s),
    },
    {
      method: 'post', path: '/approve/{token}', operationId: 'approvalLinkDecision', tag: 'executions', auth: 'none',
      summary: 'The approval page form (application/x-www-form-urlencoded): records the decision once',
      responses: { 200: { description: 'recorded', contentType: 'text/html' }, 404: { description: 'used, expired or unknown link', contentType: 'text/html' },
        409: { description: 'decided already', contentType: 'text/html' }, 422: { description: 'fields not valid', contentType: 'text/html' } },
      handler: (ctx) => linkDecision(ctx, s),
    },
  ];
}
