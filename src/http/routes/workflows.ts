/** Admin: workflows CRUD with versions, and their execution history (SPEC §4.1). */
import type { Services } from '../../service/index.js';
import { executionSummary, workflowView } from '../present.js';
import { errorResponse, param, parseQuery, type RouteSpec } from '../route-spec.js';
import { executionListQuery, executionSummarySchema, page, pageQuery, storedWorkflowSchema, workflowInput } from '../schemas.js';
import type { ExecutionStatus } from '../../store/types.js';

const unauthorized = errorResponse('no or wrong admin token (UNAUTHORIZED)');
const notFound = errorResponse('unknown workflow (NOT_FOUND)');
const invalid = errorResponse('the workflow is invalid (INVALID_WORKFLOW, details.issues with JSON Pointers into the document)');
const badRequest = errorResponse('invalid JSON, query or cursor (INVALID_JSON, INVALID_REQUEST)');
const tooLarge = errorResponse('body over the size limit (PAYLOAD_TOO_LARGE)');

export function workflowRoutes(s: Services): RouteSpec[] {
  return [
    {
      method: 'post', path: '/api/workflows', operationId: 'createWorkflow', tag: 'workflows', auth: 'admin',
      summary: 'Create a workflow (version 1); the id is generated when absent',
      body: { schema: workflowInput },
      responses: { 201: { description: 'the stored workflow', schema: storedWorkflowSchema }, 400: badRequest, 401: unauthorized,
        409: errorResponse('a workflow with this id exists (CONFLICT)'), 413: tooLarge, 422: invalid },
      handler: async (ctx) => {
        const stored = await s.workflows.create(await ctx.state.readJson());
        ctx.status = 201;
        ctx.set('Location', `/api/workflows/${encodeURIComponent(stored.id)}`);
        ctx.body = workflowView(stored);
      },
    },
    {
      method: 'get', path: '/api/workflows', operationId: 'listWorkflows', tag: 'workflows', auth: 'admin',
      summary: 'List workflows (current versions, by id)', query: pageQuery,
      responses: { 200: { description: 'a page of workflows', schema: page(storedWorkflowSchema) }, 400: badRequest, 401: unauthorized },
      handler: async (ctx) => {
        const q = parseQuery(ctx, pageQuery);
        const result = await s.workflows.list({ limit: q.limit, cursor: q.cursor ?? null });
        ctx.body = { items: result.items.map(workflowView), nextCursor: result.nextCursor };
      },
    },
    {
      method: 'get', path: '/api/workflows/{id}', operationId: 'getWorkflow', tag: 'workflows', auth: 'admin',
      summary: 'Read a workflow (current version)',
      responses: { 200: { description: 'the workflow', schema: storedWorkflowSchema }, 401: unauthorized, 404: notFound },
      handler: async (ctx) => {
        ctx.body = workflowView(await s.workflows.get(param(ctx, 'id')));
      },
    },
    {
      method: 'put', path: '/api/workflows/{id}', operationId: 'replaceWorkflow', tag: 'workflows', auth: 'admin',
      summary: 'Replace a workflow: writes version+1 (a deployment keeps running its pinned version)',
      body: { schema: workflowInput, description: '`id` may be omitted; when present it must equal the id in the path' },
      responses: { 200: { description: 'the new version', schema: storedWorkflowSchema }, 400: badRequest, 401: unauthorized, 404: notFound,
        413: tooLarge, 422: invalid },
      handler: async (ctx) => {
        ctx.body = workflowView(await s.workflows.replace(param(ctx, 'id'), await ctx.state.readJson()));
      },
    },
    {
      method: 'delete', path: '/api/workflows/{id}', operationId: 'deleteWorkflow', tag: 'workflows', auth: 'admin',
      summary: 'Delete a workflow with its versions, deployment, API keys, schedules, webhooks, chat and memories (executions stay readable)',
      responses: { 204: { description: 'deleted' }, 401: unauthorized, 404: notFound },
      handler: async (ctx) => {
        await s.workflows.delete(param(ctx, 'id'));
        ctx.status = 204;
      },
    },
    historyRoute(s),
  ];
}

/** The execution history of a workflow, newest first; 404 when the workflow does not exist. */
function historyRoute(s: Services): RouteSpec {
  return {
    method: 'get', path: '/api/workflows/{id}/executions', operationId: 'listExecutions', tag: 'executions', auth: 'admin',
    summary: 'Execution history of a workflow, newest first', query: executionListQuery,
    responses: { 200: { description: 'a page of executions (without logs)', schema: page(executionSummarySchema) }, 400: badRequest,
      401: unauthorized, 404: notFound },
    handler: async (ctx) => {
      const q = parseQuery(ctx, executionListQuery);
      const id = param(ctx, 'id');
      const workflow = await s.workflows.get(id);
      // only this workflow's runs: one deleted earlier under the same id keeps its records (readable by id), not its history
      const result = await s.executions.list(id, {
        limit: q.limit, cursor: q.cursor ?? null, since: workflow.createdAt, ...(q.status ? { status: q.status as ExecutionStatus } : {}),
      });
      ctx.body = { items: result.items.map(executionSummary), nextCursor: result.nextCursor };
    },
  };
}
