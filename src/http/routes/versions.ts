/** Admin: a workflow's stored versions, newest first, and one version's definition (SPEC §4.1). */
import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import { VersionService } from '../../service/versions.js';
import type { Store } from '../../store/types.js';
import { workflowView } from '../present.js';
import { errorResponse, param, parseQuery, type RouteSpec } from '../route-spec.js';
import { page, pageQuery, storedWorkflowSchema } from '../schemas.js';
import type { Ctx } from '../types.js';

export const versionViewSchema = z.object({
  version: z.number().int().min(1),
  createdAt: z.string().describe('when this version was written'),
  deployed: z.boolean().describe('true for the version the deployment pins'),
});

const unauthorized = errorResponse('no or wrong admin token (UNAUTHORIZED)');

/** `{n}`: a version number in decimal digits, from 1. */
function versionParam(ctx: Ctx): number {
  const text = param(ctx, 'n');
  if (!/^[1-9]\d{0,14}$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new ValidationError('INVALID_REQUEST', 'invalid version number', [{ path: '/n', message: 'must be a version number: a whole number from 1, in decimal digits' }]);
  }
  return Number(text);
}

export function versionRoutes(store: Store): RouteSpec[] {
  const versions = new VersionService(store);
  return [
    {
      method: 'get', path: '/api/workflows/{id}/versions', operationId: 'listVersions', tag: 'workflows', auth: 'admin',
      summary: 'Every stored version of a workflow, newest first', query: pageQuery,
      responses: { 200: { description: 'a page of versions', schema: page(versionViewSchema) }, 400: errorResponse('invalid limit or cursor (INVALID_REQUEST)'),
        401: unauthorized, 404: errorResponse('unknown workflow (NOT_FOUND)') },
      handler: async (ctx) => {
        const q = parseQuery(ctx, pageQuery);
        ctx.body = await versions.list(param(ctx, 'id'), { limit: q.limit, cursor: q.cursor ?? null });
      },
    },
    {
      method: 'get', path: '/api/workflows/{id}/versions/{n}', operationId: 'getVersion', tag: 'workflows', auth: 'admin',
      summary: "One stored version's definition, shaped as GET /api/workflows/{id} answers (updatedAt: when this version was written)",
      responses: { 200: { description: 'the workflow at that version', schema: storedWorkflowSchema },
        400: errorResponse('n is not a version number (INVALID_REQUEST)'), 401: unauthorized,
        404: errorResponse('unknown workflow or version (NOT_FOUND; details.version names the version when the workflow exists)') },
      handler: async (ctx) => {
        const n = versionParam(ctx);
        ctx.body = workflowView(await versions.get(param(ctx, 'id'), n));
      },
    },
  ];
}
